"""``mwperf run``: every combination of the list options, measured into one
run directory (the tables on stdout, report.html beside the results)."""

from __future__ import annotations

import argparse

from mwperf.cli.common import described_agent, no_agent
from mwperf.errors import UnitError, UsageError
from mwperf.execute.agent import ENV_AGENT
from mwperf.plan.options import (
    DEFAULT_BURST_GAP, DEFAULT_DURATION, DEFAULT_LATENCY_COUNT, DEFAULT_MODE, DEFAULT_POINT_TIMEOUT, DEFAULT_SIZE, DEFAULT_WARMUP,
    RunRequest,
)
from mwperf.plan.validate import build_run_options
from mwperf.plan.qos import DEFAULT_HISTORY, DEFAULT_MATCH_TIMEOUT, QosRequest
from mwperf.units import parse_list

__all__ = ["add_parser", "command", "request"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="run test points (mw x transport x QoS x mode x size x rate)",
                         description="Run every combination of --mw, --transport, --reliability, --history, "
                                     "--durability, --mode, --size (and --rate in rate mode).")
    run.add_argument("--mw", metavar="LIST",
                     help="middlewares, comma-separated (default: every adapter the agent has that honours "
                          "the QoS options given)")
    run.add_argument("--mode", metavar="LIST", help=f"latency,throughput,rate,burst (default: {DEFAULT_MODE})")
    run.add_argument("--size", metavar="LIST",
                     help=f"message sizes incl. the 32-byte header: 32,1k,4KiB,1M (binary units; default: {DEFAULT_SIZE})")
    run.add_argument("--rate", metavar="LIST", help="publish rates in Hz for --mode rate: 100,1k,10000")
    run.add_argument("--duration", metavar="T", help=f"measured time per point: 500ms, 5s, 1m (default: {DEFAULT_DURATION})")
    run.add_argument("--warmup", metavar="T", help=f"warm-up per point, not measured (default: {DEFAULT_WARMUP})")
    run.add_argument("--cpu", metavar="PUB,SUB",
                     help="cores to pin the publisher and subscriber to, or 'none' (default: 0,1; 0,0 on one CPU)")
    run.add_argument("--wait", metavar="block|spin", help="how the agents wait for data (default: block)")
    run.add_argument("--latency-count", metavar="N",
                     help=f"throughput mode: one latency ping every N samples, 0 for none (default: {DEFAULT_LATENCY_COUNT})")
    pattern = run.add_argument_group("traffic patterns")
    pattern.add_argument("--demand", metavar="LIST",
                         help="burst mode: samples per burst, written back to back: 1,10,100 (as Connext Micro's table)")
    pattern.add_argument("--burst-gap", metavar="T", help=f"burst mode: pause after each burst (default: {DEFAULT_BURST_GAP})")
    pattern.add_argument("--subscribers", metavar="LIST",
                         help="1:N fan-out: subscriber processes per point, e.g. 1,2,4,8 (default: 1); in latency mode "
                              "the first answers the pings, the others listen")
    pattern.add_argument("--subscribers-as", metavar="processes|threads",
                         help="the N subscribers as N processes (default) or as N reader threads of one process "
                              "(each its own middleware instance); recorded as subscribers_as")
    pattern.add_argument("--slow-subscriber", metavar="T",
                         help="the last subscriber sleeps T per sample (never the echoer): what one slow reader does "
                              "to the others")
    qos = run.add_argument_group("QoS and transport (checked against what each middleware supports)")
    qos.add_argument("--reliability", metavar="LIST", help="reliable,best-effort (default: the middleware's own)")
    qos.add_argument("--best", action="store_true", help="same as --reliability best-effort (as RTI Perftest)")
    qos.add_argument("--history", metavar="LIST",
                     help=f"keep-last:N,keep-all (default: {DEFAULT_HISTORY} where the middleware has a history QoS)")
    qos.add_argument("--durability", metavar="LIST", help="volatile,transient-local (default: the middleware's own)")
    qos.add_argument("--keyed", action="store_true", help="keyed topic, writes round-robin over --instances (default 1)")
    qos.add_argument("--instances", metavar="N", help="instances of the keyed topic (needs --keyed)")
    qos.add_argument("--async", dest="async_", action="store_true", help="asynchronous publishing")
    qos.add_argument("--batch", action="store_true",
                     help="write batching: flat-out samples share packets (pings, echoes and rate-mode samples "
                          "are flushed at once)")
    qos.add_argument("--receive", metavar="listener|waitset", help="how the middleware hands data over")
    qos.add_argument("--transport", metavar="LIST", help="udp,shm,tcp,default (default: the middleware's own)")
    qos.add_argument("--congestion", metavar="block|drop",
                     help="what a full queue does to the writer: wait, or drop the sample (zenoh)")
    qos.add_argument("--nic", metavar="NAME", help="network interface of the DDS traffic (default: lo)")
    qos.add_argument("--match-timeout", metavar="T",
                     help=f"how long the agents wait for each other (discovery) (default: {DEFAULT_MATCH_TIMEOUT})")
    run.add_argument("--samples", metavar="N",
                     help="measured samples per point; --duration is then the maximum (default: run for --duration)")
    run.add_argument("--precision", metavar="P",
                     help="adaptive duration: stop a point once the confidence intervals of its p50 and p99 are "
                          "within P of the estimate (e.g. 5%%); --duration is then the maximum")
    run.add_argument("--confidence", metavar="C", help="of those intervals: 0.90, 0.95 (default) or 0.99")
    run.add_argument("--link", metavar="netns[:PROFILE]",
                     help="publisher and subscriber in two network namespaces joined by a veth pair; PROFILE: gige, "
                          "fast-ethernet, wifi, lossy:P%%, none, or rate=..,loss=..%%,delay=..ms,jitter=..ms")
    run.add_argument("--hosts", metavar="pub=USER@HOST,sub=USER@HOST",
                     help="run the agents on two hosts over ssh (the agent binary at the same path there)")
    run.add_argument("--data", metavar="pub=IP,sub=IP", help="with --hosts: the data addresses (default: the hosts)")
    run.add_argument("--direction", metavar="forward|both", help="with --hosts: both runs every point A->B, then B->A")
    run.add_argument("--clock", metavar="monotonic|realtime",
                     help="the clock one-way latency is stamped on: monotonic (default; between two hosts the "
                          "estimated offset is subtracted) or realtime (hosts synchronised by PTP or chrony)")
    run.add_argument("--out", metavar="DIR", help="run directory (default: results/<UTC YYYYmmdd-HHMMSS>)")
    run.add_argument("--point-timeout", metavar="T",
                     help=f"extra slack on every per-point deadline before an agent counts as hung (default: {DEFAULT_POINT_TIMEOUT})")
    run.add_argument("--agent", metavar="PATH",
                     help=f"mwperf-agent binary (default: ${ENV_AGENT}, else agent/build/mwperf-agent, else PATH)")
    run.add_argument("--format", choices=("text", "md"), default="text", help="table format printed at the end")
    run.add_argument("--db", metavar="STORE", help="results store to ingest the run into: a DuckDB file, "
                     "postgresql://..., or none (default: $MWPERF_DB, else results/mwperf.duckdb for runs in results/)")
    run.add_argument("--no-floor", action="store_true",
                     help="skip the floor (memcpy, socket and shared-memory ping-pongs at the run's sizes, a few "
                          "seconds before the first point; run.json records the skip)")
    run.add_argument("--force", action="store_true",
                     help="measure even while another mwperf measurement runs on this machine (both are perturbed)")
    run.set_defaults(func=command)


def _items(option: str, text: str | None) -> tuple[str, ...] | None:
    """A comma-separated list option as its items (None: not given)."""
    if text is None:
        return None
    try:
        return tuple(parse_list(text))
    except UnitError as exc:
        raise UsageError(option, text, str(exc)) from None


def request(ns: argparse.Namespace) -> RunRequest:
    """The parsed command line as the run's options before validation."""
    qos = QosRequest(
        reliabilities=_items("--reliability", ns.reliability), best=ns.best, histories=_items("--history", ns.history),
        durabilities=_items("--durability", ns.durability), transports=_items("--transport", ns.transport),
        keyed=ns.keyed, instances=ns.instances, async_=ns.async_, batch=ns.batch, receive=ns.receive, nic=ns.nic,
        match_timeout=ns.match_timeout, congestion=ns.congestion)
    return RunRequest(
        mws=_items("--mw", ns.mw), modes=_items("--mode", ns.mode), sizes=_items("--size", ns.size),
        rates=_items("--rate", ns.rate), duration=ns.duration, warmup=ns.warmup, cpu=ns.cpu, wait=ns.wait,
        latency_count=ns.latency_count, samples=ns.samples, precision=ns.precision, confidence=ns.confidence,
        point_timeout=ns.point_timeout, clock=ns.clock, link=ns.link, hosts=ns.hosts, data=ns.data,
        direction=ns.direction, demands=_items("--demand", ns.demand), burst_gap=ns.burst_gap,
        subscribers=_items("--subscribers", ns.subscribers), slow_subscriber=ns.slow_subscriber,
        subscribers_as=ns.subscribers_as, out=ns.out, qos=qos)


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.cli.db import check_run_store, ingest_after_run
    from mwperf.execute import lock
    from mwperf.execute.point import check_placement
    from mwperf.execute.runner import run

    found = described_agent(ns.agent)
    if found is None:
        return no_agent()
    agent, agent_info = found
    opts = build_run_options(request(ns), agent_info, agent=agent)
    check_placement(opts)  # before the run directory is made
    store = check_run_store(ns.db, opts.out)  # a store given that cannot be used: now, not after measuring
    try:
        opts.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError("--out", str(opts.out), f"cannot create: {exc.strerror or exc}") from None
    with lock.hold(opts.out, force=ns.force, measure=opts.hosts is None, cores=str(opts.cpu), argv=argv) as held:
        return ingest_after_run(store, opts.out, run(opts, agent, argv, fmt=ns.format, machine_lock=held.machine,
                                                     floor=not ns.no_floor))
