"""Command line: ``mwperf run | sweep | doctor | report | compare | export | import``.

A thin layer: parse -> validate into typed options -> run -> export.
Bad input is one line on stderr (``mwperf: error: ...``) and exit code 2,
never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import NoReturn, Sequence

from mwperf import __version__
from mwperf.agent import ENV_AGENT, AgentError, AgentInfo, default_agent_path, describe, find_agent
from mwperf.options import (
    DEFAULT_DURATION, DEFAULT_LATENCY_COUNT, DEFAULT_MODE, DEFAULT_POINT_TIMEOUT, DEFAULT_SIZE,
    DEFAULT_WARMUP, UsageError, build_run_options,
)
from mwperf.qos import DEFAULT_HISTORY, DEFAULT_MATCH_TIMEOUT

__all__ = ["main", "build_parser"]

PROG = "mwperf"


class OneLineParser(argparse.ArgumentParser):
    """argparse whose errors are one line: ``mwperf: error: ...``, exit 2."""

    def error(self, message: str) -> NoReturn:
        text = " ".join(message.split())
        sys.stderr.write(f"{PROG}: error: {text}\n")
        raise SystemExit(2)


def build_parser() -> OneLineParser:
    parser = OneLineParser(
        prog=PROG,
        description="Measure publish/subscribe middleware latency, throughput and loss.",
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = sub.add_parser("run", help="run test points (mw x transport x QoS x mode x size x rate)",
                         description="Run every combination of --mw, --transport, --reliability, --history, "
                                     "--durability, --mode, --size (and --rate in rate mode).")
    run.add_argument("--mw", metavar="LIST",
                     help="middlewares, comma-separated (default: every adapter the agent has that honours "
                          "the QoS options given)")
    run.add_argument("--mode", metavar="LIST", help=f"latency,throughput,rate (default: {DEFAULT_MODE})")
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
    run.set_defaults(func=cmd_run)

    sweep = sub.add_parser("sweep", help="run every point of a plan (YAML of mwperf run options, lists expand)",
                           description="Expand PLAN (mwperf run options, each a value or a list; exclude rules; "
                                       "repetitions) and run every point into one run directory.")
    sweep.add_argument("plan", metavar="PLAN.yaml", nargs="?", help="the plan (see plans/)")
    sweep.add_argument("--out", metavar="DIR", help="run directory (default: results/<UTC YYYYmmdd-HHMMSS>)")
    sweep.add_argument("--dry-run", action="store_true", help="print the expanded points and their count; run nothing")
    sweep.add_argument("--resume", metavar="DIR", help="finish a sweep's run directory: run only its missing points")
    sweep.add_argument("--agent", metavar="PATH", help="mwperf-agent binary")
    sweep.add_argument("--format", choices=("text", "md"), default="text", help="table format printed at the end")
    sweep.set_defaults(func=cmd_sweep)

    doctor = sub.add_parser("doctor", help="check the agent and the system settings that skew numbers")
    doctor.add_argument("--agent", metavar="PATH", help="mwperf-agent binary")
    doctor.add_argument("--cleanup", action="store_true",
                        help="only remove what crashed runs left: their network namespaces and shared-memory segments")
    doctor.set_defaults(func=cmd_doctor)

    report = sub.add_parser("report", help="re-print the tables, regenerate results.csv, write report.html")
    report.add_argument("dir", metavar="DIR", help="run directory (holds results.jsonl)")
    report.add_argument("--format", choices=("text", "md", "svg", "png"), default="text",
                        help="tables as text (default) or md; svg, png: every plot as DIR/plots/ID.svg|png")
    report.add_argument("--point", metavar="N", type=int,
                        help="the point whose latency histogram and time series are shown (default: the first "
                             "latency point)")
    report.set_defaults(func=cmd_report)

    base = sub.add_parser("baseline", help="iperf3 TCP and UDP over a --link, stored with a run")
    base.add_argument("--link", metavar="netns[:PROFILE]", required=True, help="the link to measure")
    base.add_argument("--out", metavar="DIR", required=True, help="run directory (baseline.json goes there)")
    base.add_argument("--duration", metavar="T", default="5s", help="each iperf3 test (default: 5s)")
    base.set_defaults(func=cmd_baseline)

    compare = sub.add_parser("compare", help="the same points of several runs side by side (the first is the baseline)")
    compare.add_argument("dirs", metavar="DIR", nargs="+", help="run directories")
    compare.add_argument("--fail-if-slower", metavar="PCT", type=_percent,
                         help="exit 1 if a point's p50 latency is significantly more than PCT %% above the baseline's")
    compare.add_argument("--fail-if-lossier", metavar="PCT", type=_percent,
                         help="exit 1 if a point's loss rate is more than PCT percentage points above the baseline's")
    compare.add_argument("--force", action="store_true", help="compare runs measured under different placements")
    compare.set_defaults(func=cmd_compare)

    export = sub.add_parser("export", help="write a run in another tool's layout")
    export.add_argument("dir", metavar="DIR", help="run directory")
    export.add_argument("--format", choices=("perftest-csv",), required=True, help="perftest-csv: RTI Perftest's tables")
    export.add_argument("--out", metavar="DIR", help="where the files go (default: DIR/perftest)")
    export.set_defaults(func=cmd_export)

    imp = sub.add_parser("import", help="turn Perftest or ddsperf output into a run directory")
    imp.add_argument("tool", metavar="perftest|ddsperf", help="the tool that wrote FILE")
    imp.add_argument("file", metavar="FILE", help="its output (tables, summary lines, per-second lines)")
    imp.add_argument("--out", metavar="DIR", help="run directory (default: results/import-TOOL-NAME)")
    imp.add_argument("--mw", metavar="NAME", help="middleware name for the records (e.g. connext; default: TOOL)")
    imp.set_defaults(func=cmd_import)
    return parser


def _percent(text: str) -> float:
    value = text.strip().rstrip("%")
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: not a percentage") from None
    if not 0 <= number < 1e6:
        raise argparse.ArgumentTypeError(f"{text}: must be 0 or more")
    return number


def _glue_dash_values(parser: argparse.ArgumentParser, args: list[str]) -> list[str]:
    """``--warmup -1s`` -> ``--warmup=-1s`` so that argparse hands the bad
    value to our validation (which names it) instead of calling it an option."""
    takes_value: set[str] = set()
    known: set[str] = set()
    parsers = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            parsers += list(action.choices.values())
    for each in parsers:
        for action in each._actions:
            known.update(action.option_strings)
            if action.option_strings and action.nargs is None and action.const is None and not isinstance(
                    action, (argparse._StoreTrueAction, argparse._StoreFalseAction, argparse._VersionAction,
                             argparse._HelpAction)):
                takes_value.update(action.option_strings)
    out: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        if (token in takes_value and i + 1 < len(args) and args[i + 1].startswith("-")
                and args[i + 1] != "--" and args[i + 1].split("=", 1)[0] not in known):
            out.append(f"{token}={args[i + 1]}")
            i += 2
            continue
        out.append(token)
        i += 1
    return out


def _resolve_agent(explicit: str | None) -> str | None:
    """The agent binary, or None when the default one is missing.
    An explicitly named agent (--agent, $MWPERF_AGENT) that is missing is bad input."""
    if explicit:
        agent = find_agent(explicit)
        if agent is None:
            raise UsageError(f"--agent {explicit}: not found or not executable")
        return agent
    env = os.environ.get(ENV_AGENT)
    agent = find_agent(None)
    if agent is None and env:
        raise UsageError(f"{ENV_AGENT}={env}: not found or not executable")
    return agent


def _described_agent(explicit: str | None) -> tuple[str, AgentInfo] | None:
    """The agent and its description of itself; None when it is not built.
    AgentError when it does not answer."""
    agent = _resolve_agent(explicit)
    if agent is None:
        return None
    return agent, describe(agent)


def _no_agent() -> int:
    sys.stderr.write(f"{PROG}: error: agent not found at {default_agent_path()[0]}: build it (make agent, or "
                     f"cmake -S agent -B agent/build && cmake --build agent/build) or pass --agent; "
                     f"what can be asked comes from its description of itself\n")
    return 1


def cmd_run(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.runner import run  # keeps `mwperf --help` light

    try:
        found = _described_agent(ns.agent)
    except AgentError as exc:
        sys.stderr.write(f"{PROG}: error: the agent does not work: {exc}\n")
        return 1
    if found is None:
        return _no_agent()
    agent, agent_info = found
    opts = build_run_options(
        mw=ns.mw, mode=ns.mode, size=ns.size, rate=ns.rate, duration=ns.duration, warmup=ns.warmup,
        cpu=ns.cpu, wait=ns.wait, latency_count=ns.latency_count, out=ns.out,
        point_timeout=ns.point_timeout, agent=agent, agent_info=agent_info,
        qos=dict(reliability=ns.reliability, best=ns.best, history=ns.history, durability=ns.durability,
                 keyed=ns.keyed, instances=ns.instances, async_=ns.async_, batch=ns.batch, receive=ns.receive,
                 transport=ns.transport, nic=ns.nic, match_timeout=ns.match_timeout),
        samples=ns.samples, precision=ns.precision, confidence=ns.confidence, link=ns.link,
        hosts=ns.hosts, data=ns.data, direction=ns.direction, clock=ns.clock,
    )
    try:
        opts.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out {opts.out}: cannot create: {exc.strerror or exc}") from None
    return run(opts, agent, argv, fmt=ns.format)


def cmd_sweep(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf import sweep

    if (ns.plan is None) == (ns.resume is None):
        raise UsageError("sweep: give a PLAN.yaml, or --resume DIR (not both)")
    if ns.resume is not None and (ns.out or ns.dry_run):
        raise UsageError(f"--resume {ns.resume}: goes alone (the directory and its saved plan say everything)")
    sweep.check(ns.plan, ns.resume)  # bad input is named before anything else is looked at
    try:
        found = _described_agent(ns.agent)
    except AgentError as exc:
        sys.stderr.write(f"{PROG}: error: the agent does not work: {exc}\n")
        return 1
    if found is None:
        return _no_agent()
    agent, agent_info = found
    if ns.dry_run:
        return sweep.dry_run(ns.plan, agent, agent_info, sys.stdout)
    if ns.resume is not None:
        return sweep.resume(ns.resume, agent, agent_info, argv, ns.format)
    return sweep.sweep(ns.plan, ns.out, agent, agent_info, argv, ns.format)


def cmd_doctor(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.doctor import cleanup, doctor

    if ns.cleanup:
        return cleanup(sys.stdout)
    return doctor(sys.stdout, ns.agent)


def cmd_report(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.report import report

    return report(ns.dir, ns.format, point=ns.point)


def cmd_baseline(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.baseline import run_baseline
    from mwperf.netns import NetnsPair

    NetnsPair.check_possible()
    return run_baseline(ns.link, ns.out, ns.duration, sys.stdout)


def cmd_compare(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.compare import compare_runs

    return compare_runs(ns.dirs, sys.stdout, fail_if_slower=ns.fail_if_slower,
                        fail_if_lossier=ns.fail_if_lossier, force=ns.force)


def cmd_export(ns: argparse.Namespace, argv: list[str]) -> int:
    from pathlib import Path

    from mwperf.export.perftest import write_perftest_csv
    from mwperf.rundir import RESULTS_JSONL, read_records

    path = Path(ns.dir)
    if not (path / RESULTS_JSONL).is_file():
        raise UsageError(f"export {ns.dir}: no {RESULTS_JSONL} there")
    written = write_perftest_csv(read_records(path), Path(ns.out) if ns.out else path / "perftest")
    if not written:
        sys.stderr.write(f"{PROG}: no ok latency or throughput point in {ns.dir}: nothing to export\n")
        return 1
    for file in written:
        print(file)
    return 0


def cmd_import(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.imports import import_file

    directory, count = import_file(ns.tool, ns.file, ns.out, ns.mw)
    print(f"{count} point(s) from {ns.file} -> {directory}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the exit code (``sys.exit(main())``)."""
    args = list(sys.argv[1:] if argv is None else argv)
    command_line = list(sys.argv) if argv is None else [PROG, *args]
    parser = build_parser()
    try:
        ns = parser.parse_args(_glue_dash_values(parser, args))
    except SystemExit as exc:  # --help, --version, or a parse error already printed
        return exc.code if isinstance(exc.code, int) else 0
    if not getattr(ns, "func", None):
        sys.stderr.write(f"{PROG}: error: a command is required: run, sweep, doctor, report, baseline, compare, export or import (see mwperf --help)\n")
        return 2
    try:
        return ns.func(ns, command_line)
    except UsageError as exc:
        sys.stderr.write(f"{PROG}: error: {' '.join(str(exc).split())}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write(f"{PROG}: interrupted\n")
        return 130
    except BrokenPipeError:  # e.g. `mwperf report DIR | head`
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 1
