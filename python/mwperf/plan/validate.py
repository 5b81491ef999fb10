"""Validate the options of a run: a :class:`RunRequest` becomes
:class:`RunOptions` in :func:`build_run_options`, the one validation the
command line and sweep plans share.

Every value is checked here, before any agent runs, against the agent's
description of itself. What the user can get wrong is a
:class:`mwperf.errors.UsageError` naming the option and the bad value
(``--size 70000: udp carries at most 65507 bytes per message``); a plan
turns its ``option`` into the plan key.
"""

from __future__ import annotations

import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping, TypeVar

from mwperf.description import AdapterInfo, AgentInfo
from mwperf.errors import UnitError, Unsupported, UsageError
from mwperf.plan.options import (
    DEFAULT_BURST_GAP, DEFAULT_CONFIDENCE, DEFAULT_DURATION, DEFAULT_LATENCY_COUNT, DEFAULT_MODE, DEFAULT_POINT_TIMEOUT, DEFAULT_SIZE,
    DEFAULT_WARMUP, CpuPlacement, RunOptions, RunRequest,
)
from mwperf.plan.qos import NET_DIR, QosOptions, check_supported, parse_qos, receive_for, refusal
from mwperf.plan.where import HostPair, LinkProfile, parse_hosts, parse_link
from mwperf.units import parse_duration_ns, parse_rate_hz, parse_size

__all__ = ["build_run_options", "parse_cpu", "default_cpu", "default_out"]

CONFIDENCES = ("0.90", "0.95", "0.99")
MAX_SAMPLES_PER_POINT = 1 << 40
MAX_DEMAND = 10_000_000
MAX_LATENCY_COUNT = 10**12  # one ping in 10^12 samples: none in any run that ends
#: The agent takes up to 1024; 64 subscriber processes is already far past what one machine measures faithfully.
MAX_SUBSCRIBERS = 64
#: --subscribers-as: each subscriber its own process, or each a reader thread of one process.
SUBSCRIBERS_AS = ("processes", "threads")
T = TypeVar("T")


def default_cpu(cpu_count: int | None = None) -> CpuPlacement:
    count = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    return CpuPlacement(0, 1) if count >= 2 else CpuPlacement(0, 0)


def parse_cpu(text: str | None, cpu_count: int | None = None) -> CpuPlacement:
    """``PUB,SUB`` core numbers, or ``none`` (unpinned)."""
    count = cpu_count if cpu_count is not None else (os.cpu_count() or 1)
    if text is None:
        return default_cpu(count)
    if text.strip().lower() in ("none", "-1", "-1,-1"):
        return CpuPlacement(None, None)
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2:
        raise UsageError("--cpu", text, "expected PUB,SUB core numbers (e.g. 0,1) or 'none'")
    cores = []
    for part in parts:
        if not part.isdigit():
            raise UsageError("--cpu", text, f"'{part}' is not a core number")
        core = int(part)
        if core >= count:
            raise UsageError("--cpu", text, f"core {core} does not exist (this machine has {count} CPUs: 0-{count - 1})")
        cores.append(core)
    return CpuPlacement(cores[0], cores[1])


def _one(option: str, text: str, parser: Callable[..., T], **kwargs) -> T:
    try:
        return parser(text, **kwargs)
    except UnitError as exc:
        raise UsageError(option, text, str(exc)) from None


def _dedupe(values):
    return tuple(dict.fromkeys(values))


def default_out(now: datetime | None = None) -> Path:
    now = now or datetime.now(timezone.utc)
    return Path("results") / now.strftime("%Y%m%d-%H%M%S")


def _middlewares(items: tuple[str, ...] | None, qos: QosOptions, adapters: Mapping[str, AdapterInfo],
                 missing: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The chosen middlewares; without --mw, every adapter that honours the QoS options."""
    if items is None:
        mws = tuple(name for name in adapters if refusal(qos, adapters[name]) is None)
        if not mws and adapters:
            mws = tuple(adapters)  # let check_supported name the first refusal
    else:
        mws = _dedupe(items)
        for name in mws:
            if name not in adapters and name in (missing or {}):
                raise UsageError("--mw", name, f"not available: {missing[name]}")
            if name not in adapters:
                raise UsageError("--mw", name, f"unknown middleware (available: {', '.join(adapters) or 'none'})")
    check_supported(qos, mws, adapters)
    return mws


def _modes(items: tuple[str, ...] | None, agent_info: AgentInfo) -> tuple[str, ...]:
    modes = _dedupe(items or (DEFAULT_MODE,))
    for name in modes:
        if name not in agent_info.modes:
            raise UsageError("--mode", name, f"unknown mode (choose from {', '.join(agent_info.modes)})")
    return modes


def _sizes(items: tuple[str, ...] | None, mws: tuple[str, ...], agent_info: AgentInfo) -> tuple[int, ...]:
    sizes = []
    for token in items or (DEFAULT_SIZE,):
        value = _one("--size", token, parse_size)
        if value < agent_info.header_size:
            raise UsageError("--size", token, f"smaller than the {agent_info.header_size}-byte mwperf header")
        for name in mws:
            limit, why = agent_info.adapters[name].max_size, agent_info.adapters[name].max_size_note
            if value > limit:
                raise Unsupported("--size", token, f"{name} carries at most {limit} bytes per message"
                                  + (f" ({why})" if why else ""), name)
        sizes.append(value)
    return _dedupe(sizes)


def _rates(items: tuple[str, ...] | None, modes: tuple[str, ...], agent_info: AgentInfo) -> tuple[float, ...]:
    if items is None:
        if "rate" in modes:
            raise UsageError("--mode", "rate", "needs --rate HZ[,HZ...]")
        return ()
    if "rate" not in modes:
        raise UsageError("--rate", ",".join(items), "only valid with --mode rate")
    max_rate = float(agent_info.limit("max_rate_hz", 1e9))
    rates = []
    for token in items:
        value = _one("--rate", token, parse_rate_hz)
        if value > max_rate:
            raise UsageError("--rate", token, f"above the {max_rate:g} Hz the agent's clock can schedule")
        rates.append(value)
    return _dedupe(rates)


def _durations(request: RunRequest, rates: tuple[float, ...], agent_info: AgentInfo) -> tuple[int, int]:
    """(duration, warm-up) in ns, each within what the agent can time; every rate has a sample due."""
    duration = request.duration or DEFAULT_DURATION
    warmup = request.warmup if request.warmup is not None else DEFAULT_WARMUP
    duration_ns = _one("--duration", duration, parse_duration_ns)
    warmup_ns = _one("--warmup", warmup, parse_duration_ns, allow_zero=True)
    max_ns = int(agent_info.limit("max_duration_ns", 1 << 55))
    for option, text, value in (("--duration", request.duration, duration_ns), ("--warmup", request.warmup, warmup_ns)):
        if value > max_ns:
            raise UsageError(option, text, f"longer than the agent can time ({max_ns / 86400e9:.0f} days)")
    for value in rates:
        if value * duration_ns / 1e9 < 1:
            raise UsageError("--rate", f"{value:g}", f"not one sample is due in --duration {duration} "
                                                      f"(raise the rate or the duration)")
    return duration_ns, warmup_ns


def _whole(option: str, text: str, low: int, high: int, what: str) -> int:
    value = str(text).strip()
    if not value.isdigit() or not low <= int(value) <= high:
        raise UsageError(option, text, f"must be {what} from {low} to {high}")
    return int(value)


def _bursts(request: RunRequest, modes: tuple[str, ...]) -> tuple[tuple[int, ...], int]:
    """(demands, gap ns): burst mode needs a demand; the others take none."""
    if "burst" not in modes:
        for option, given in (("--demand", request.demands), ("--burst-gap", request.burst_gap)):
            if given is not None:
                text = ",".join(given) if isinstance(given, tuple) else given
                raise UsageError(option, text, "only with --mode burst")
        return (), 10_000_000
    if request.demands is None:
        raise UsageError("--mode", "burst", "needs --demand N[,N...] (samples per burst)")
    demands = _dedupe(_whole("--demand", t, 1, MAX_DEMAND, "a number of samples per burst") for t in request.demands)
    gap = request.burst_gap if request.burst_gap is not None else DEFAULT_BURST_GAP
    gap_ns = _one("--burst-gap", gap, parse_duration_ns, allow_zero=True)
    if gap_ns > 3600 * 10**9:
        raise UsageError("--burst-gap", gap, "longer than an hour")
    return demands, gap_ns


def _fanout(request: RunRequest, mws: tuple[str, ...], modes: tuple[str, ...],
            adapters: Mapping[str, AdapterInfo]) -> tuple[tuple[int, ...], int, str]:
    """(subscriber counts, slow subscriber's sleep per sample in ns, processes or threads)."""
    counts = _dedupe(_whole("--subscribers", t, 1, MAX_SUBSCRIBERS, "a number of subscribers")
                     for t in (request.subscribers or ("1",)))
    for name in mws:
        limit = adapters[name].max_subscribers
        for n in counts:
            if limit and n > limit:
                raise Unsupported("--subscribers", str(n), f"{name} serves at most {limit} subscriber"
                                                           f"{'s' if limit != 1 else ''} per publisher", name)
    how = (request.subscribers_as or SUBSCRIBERS_AS[0]).strip()
    if how not in SUBSCRIBERS_AS:
        raise UsageError("--subscribers-as", request.subscribers_as, f"choose {' or '.join(SUBSCRIBERS_AS)}")
    if how == "threads":
        for name in mws:
            limit = adapters[name].max_readers_per_process
            for n in counts:
                if limit and n > limit:
                    why = f": {adapters[name].readers_note}" if adapters[name].readers_note else ""
                    raise Unsupported("--subscribers-as", how,
                                      f"{name} holds at most {limit} reader{'s' if limit != 1 else ''} per process"
                                      f"{why} (--subscribers {n}: use processes)", name)
    slow_ns = 0
    if request.slow_subscriber is not None:
        slow_ns = _one("--slow-subscriber", request.slow_subscriber, parse_duration_ns)
        if slow_ns > 10 * 10**9:
            raise UsageError("--slow-subscriber", request.slow_subscriber, "longer than 10 s per sample")
        if "latency" in modes and min(counts) < 2:
            raise UsageError("--slow-subscriber", request.slow_subscriber,
                             "in latency mode needs --subscribers 2 or more (the echoer is never the slow one)")
    return counts, slow_ns, how


def _wait(text: str | None, mws: tuple[str, ...], qos: QosOptions, agent_info: AgentInfo) -> str:
    wait = text or "block"
    if wait not in agent_info.waits:
        raise UsageError("--wait", wait, f"choose {' or '.join(agent_info.waits)}")
    for name in mws:
        info = agent_info.adapters[name]
        if wait not in info.waits:
            raise Unsupported("--wait", wait, f"not supported by {name} (it cannot be polled)", name)
        if wait == "spin" and receive_for(qos, info, wait) == "listener":
            choices = ", ".join(r for r in info.receives if r != "listener") or "..."
            raise UsageError("--wait", "spin", f"not with --receive listener for {name} (the middleware's own "
                                               f"thread delivers; choose --receive {choices})")
    return wait


def _latency_count(text: str | None, modes: tuple[str, ...]) -> int:
    if text is None:
        return DEFAULT_LATENCY_COUNT
    if "throughput" not in modes:
        raise UsageError("--latency-count", text, "only with --mode throughput (it sets the pings interleaved with "
                                                  "the flat-out samples)")
    if not text.strip().isdigit() or int(text.strip()) > MAX_LATENCY_COUNT:
        raise UsageError("--latency-count", text, f"must be a whole number up to {MAX_LATENCY_COUNT} "
                                                  f"(0: no latency pings)")
    return int(text.strip())


def _samples(text: str | None) -> int:
    if text is None:
        return 0
    if not text.strip().isdigit() or not 1 <= int(text.strip()) <= MAX_SAMPLES_PER_POINT:
        raise UsageError("--samples", text, "must be a whole number of samples, at least 1")
    return int(text.strip())


def _precision(text: str | None) -> float:
    """``5%`` or ``0.05``: the relative half-width the CIs of p50 and p99 must reach."""
    if text is None:
        return 0.0
    value = text.strip()
    try:
        fraction = float(value[:-1]) / 100 if value.endswith("%") else float(value)
    except ValueError:
        raise UsageError("--precision", text, "expected a fraction or a percentage, e.g. 5%") from None
    if not 0 < fraction < 1:
        raise UsageError("--precision", text, "must be above 0 and below 100%")
    return fraction


def _confidence(text: str | None) -> str:
    value = DEFAULT_CONFIDENCE if text is None else text.strip()
    try:
        value = f"{float(value):.2f}"  # 0.9 (as YAML reads 0.90) is 0.90
    except ValueError:
        pass
    if value not in CONFIDENCES:
        raise UsageError("--confidence", text, f"choose from {', '.join(CONFIDENCES)}")
    return value


def _where(request: RunRequest, mws: tuple[str, ...], qos: QosOptions,
           adapters: Mapping[str, AdapterInfo]) -> tuple[LinkProfile | None, HostPair | None]:
    """The namespace link or the ssh hosts, and what cannot cross between hosts."""
    link, hosts = request.link, request.hosts
    if link is not None or hosts is not None:
        for name in mws:
            if adapters[name].hosts == "one":
                raise UsageError("--mw", name, f"one host only (shared memory); not with "
                                               f"{'--link ' + link if link is not None else '--hosts'}")
    profile = None
    if link is not None:
        profile = parse_link(link)
        if "shm" in qos.transports:
            raise UsageError("--transport", "shm", f"not with --link {link} (shared memory does not cross hosts)")
        if qos.nic is not None:
            raise UsageError("--nic", qos.nic, f"not with --link {link} (the link has its own interfaces)")
    pair = None
    if hosts is not None:
        if link is not None:
            raise UsageError("--hosts", hosts, f"not with --link {link} (one or the other)")
        if "shm" in qos.transports:
            raise UsageError("--transport", "shm", "not with --hosts (shared memory does not cross hosts)")
        pair = parse_hosts(hosts, request.data, qos.nic)
    elif request.data is not None:
        raise UsageError("--data", request.data, "only with --hosts")
    if request.direction not in (None, "forward", "both"):
        raise UsageError("--direction", request.direction, "choose forward or both")
    if request.direction == "both" and pair is None:
        raise UsageError("--direction", "both", "only with --hosts (a namespace link is the same both ways)")
    return profile, pair


def _out(text: str | None, check_out: bool) -> Path:
    out = Path(text) if text else default_out()
    try:
        if check_out and (out / "results.jsonl").exists():
            raise UsageError("--out", str(out), "already holds results.jsonl (choose a new directory)")
        if out.exists() and not out.is_dir():
            raise UsageError("--out", str(out), "exists and is not a directory")
    except OSError as exc:  # a name too long, a directory not searchable
        raise UsageError("--out", str(out), f"not usable: {exc.strerror or exc}") from None
    return out


def build_run_options(request: RunRequest, agent_info: AgentInfo, *, agent: str | None = None,
                      cpu_count: int | None = None, check_out: bool = True) -> RunOptions:
    """Check every value; raise UsageError naming the first bad one.

    ``agent_info`` is the agent's description of itself (``mwperf-agent
    list``): its words, limits and adapters, the only source of what can be
    asked. ``check_out``: refuse an --out that already holds results (a
    sweep checks its directory once, not per point).
    """
    adapters = agent_info.adapters
    # With --hosts, --nic names an interface of those hosts, not of this one.
    qos = parse_qos(agent_info, request.qos, net_dir=None if request.hosts is not None else NET_DIR)
    mws = _middlewares(request.mws, qos, adapters, dict(agent_info.missing))
    modes = _modes(request.modes, agent_info)
    sizes = _sizes(request.sizes, mws, agent_info)
    rates = _rates(request.rates, modes, agent_info)
    duration_ns, warmup_ns = _durations(request, rates, agent_info)
    timeout = request.point_timeout if request.point_timeout is not None else DEFAULT_POINT_TIMEOUT
    point_timeout_ns = _one("--point-timeout", timeout, parse_duration_ns, allow_zero=True)
    cpu = parse_cpu(request.cpu, cpu_count)
    wait = _wait(request.wait, mws, qos, agent_info)
    latency_count = _latency_count(request.latency_count, modes)
    samples, precision = _samples(request.samples), _precision(request.precision)
    confidence = _confidence(request.confidence)
    clock = request.clock or "monotonic"
    if clock not in agent_info.clocks:
        raise UsageError("--clock", clock, f"choose from {', '.join(agent_info.clocks)}")
    link, hosts = _where(request, mws, qos, adapters)
    demands, burst_gap_ns = _bursts(request, modes)
    subscribers, slow_ns, subscribers_as = _fanout(request, mws, modes, adapters)
    return RunOptions(
        mws=mws, modes=modes, sizes=sizes, rates_hz=rates, duration_ns=duration_ns, warmup_ns=warmup_ns,
        cpu=cpu, wait=wait, latency_count=latency_count, out=_out(request.out, check_out),
        point_timeout_ns=point_timeout_ns, agent=agent, adapters=dict(adapters), qos=qos, samples=samples,
        precision=precision, confidence=confidence, link=link, hosts=hosts,
        both_directions=request.direction == "both", clock=clock,
        demands=demands, burst_gap_ns=burst_gap_ns, subscribers=subscribers, slow_ns=slow_ns,
        subscribers_as=subscribers_as,
    )
