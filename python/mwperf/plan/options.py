"""Validate ``mwperf run`` arguments into typed, immutable options.

Everything the user can get wrong is checked here, before any agent runs,
and reported as a :class:`UsageError` whose message names the option and
the bad value (``--size 70000: udp carries at most 65507 bytes per
message``); the CLI prints it as one line and exits 2.
"""

from __future__ import annotations

import itertools
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping

from mwperf.agent import AdapterInfo, AgentInfo
from mwperf.qos import QosError, QosOptions, check_supported, parse_qos, receive_for, unsupported
from mwperf.units import UnitError, parse_duration_ns, parse_list, parse_rate_hz, parse_size

__all__ = [
    "UsageError",
    "CpuPlacement",
    "RunOptions",
    "TestPoint",
    "build_run_options",
    "parse_cpu",
    "default_cpu",
]

DEFAULT_DURATION = "5s"
DEFAULT_WARMUP = "1s"
DEFAULT_POINT_TIMEOUT = "5s"
DEFAULT_LATENCY_COUNT = 10000
DEFAULT_SIZE = "1k"
DEFAULT_MODE = "latency"
CONFIDENCES = ("0.90", "0.95", "0.99")
DEFAULT_CONFIDENCE = "0.95"
MAX_SAMPLES_PER_POINT = 1 << 40


class UsageError(Exception):
    """Bad user input; ``str()`` is the one-line message (exit code 2)."""


@dataclass(frozen=True)
class CpuPlacement:
    """Cores to pin the publisher and subscriber to; None = unpinned."""

    pub: int | None
    sub: int | None

    @property
    def placement(self) -> str:
        if self.pub is None or self.sub is None:
            return "unpinned"
        return "same-core" if self.pub == self.sub else "cross-core"

    def __str__(self) -> str:
        if self.pub is None or self.sub is None:
            return "none"
        return f"{self.pub},{self.sub}"


@dataclass(frozen=True)
class TestPoint:
    """One measurement: a middleware, mode, size, (rate mode) rate and the
    requested transport and QoS (None = the middleware's default, not passed)."""

    __test__ = False  # not a pytest test class

    index: int
    mw: str
    mode: str
    size: int
    rate_hz: float | None = None
    transport: str | None = None
    reliability: str | None = None
    history: str | None = None
    durability: str | None = None

    def qos_label(self) -> str:
        """What was requested, e.g. ``shm, best-effort, keep-all`` ('' when nothing)."""
        return ", ".join(v for v in (self.transport, self.reliability, self.history, self.durability) if v)


@dataclass(frozen=True)
class RunOptions:
    mws: tuple[str, ...]
    modes: tuple[str, ...]
    sizes: tuple[int, ...]
    rates_hz: tuple[float, ...]
    duration_ns: int
    warmup_ns: int
    cpu: CpuPlacement
    wait: str
    latency_count: int
    out: Path
    point_timeout_ns: int
    agent: str | None
    adapters: Mapping[str, AdapterInfo] = field(default_factory=dict, compare=False)
    clock: str = "monotonic"  # the clock one-way stamps are read on (realtime: hosts synchronised by PTP/chrony)
    qos: QosOptions = QosOptions()
    samples: int = 0          # --samples: measured samples per point (0 = run for the duration)
    precision: float = 0.0    # --precision: adaptive stop at this relative CI half-width of p50 and p99
    confidence: str = DEFAULT_CONFIDENCE
    link: "LinkProfile | None" = None  # --link netns[:PROFILE]: publisher and subscriber in two namespaces
    hosts: "SshHosts | None" = None  # --hosts pub=..,sub=..: agents on two real hosts, over ssh
    both_directions: bool = False    # --direction both: every point A->B, then B->A

    @property
    def planned_s(self) -> float:
        """Warm-up plus (maximum) duration of each point, seconds."""
        return (self.warmup_ns + self.duration_ns) / 1e9

    @property
    def run_id(self) -> str:
        return self.out.name

    def points(self) -> list[TestPoint]:
        """Cartesian product mw x transport x reliability x history x durability
        x mode x size x (rate, rate mode only)."""
        points: list[TestPoint] = []
        q = self.qos
        for mw in self.mws:
            histories = q.histories_for(self.adapters.get(mw))
            for transport, reliability, history, durability, mode, size in itertools.product(
                    q.transports, q.reliabilities, histories, q.durabilities, self.modes, self.sizes):
                rates: tuple[float | None, ...] = self.rates_hz if mode == "rate" else (None,)
                for rate in rates:
                    points.append(TestPoint(len(points), mw, mode, size, rate, transport, reliability,
                                            history, durability))
        return points

    def as_dict(self) -> dict:
        """The effective options, JSON-ready (for run.json)."""
        data = asdict(self)
        data.pop("adapters", None)
        data["qos"] = self.qos.as_dict()
        data["out"] = str(self.out)
        data["cpu"] = {"pub": self.cpu.pub, "sub": self.cpu.sub, "placement": self.cpu.placement}
        for key in ("mws", "modes", "sizes", "rates_hz"):
            data[key] = list(data[key])
        return data


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
        raise UsageError(f"--cpu {text}: expected PUB,SUB core numbers (e.g. 0,1) or 'none'")
    cores = []
    for part in parts:
        if not part.isdigit():
            raise UsageError(f"--cpu {text}: '{part}' is not a core number")
        core = int(part)
        if core >= count:
            raise UsageError(f"--cpu {text}: core {core} does not exist (this machine has {count} CPUs: 0-{count - 1})")
        cores.append(core)
    return CpuPlacement(cores[0], cores[1])


def _items(option: str, text: str) -> list[str]:
    try:
        return parse_list(text)
    except UnitError as exc:
        raise UsageError(f"{option} {text}: {exc}") from None


def _one(option: str, text: str, parser, **kwargs):
    try:
        return parser(text, **kwargs)
    except UnitError as exc:
        raise UsageError(f"{option} {text}: {exc}") from None


def _dedupe(values):
    seen = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return tuple(seen)


def default_out(now: datetime | None = None) -> Path:
    now = now or datetime.now(timezone.utc)
    return Path("results") / now.strftime("%Y%m%d-%H%M%S")


def build_run_options(
    *,
    mw: str | None,
    mode: str | None,
    size: str | None,
    rate: str | None,
    duration: str | None,
    warmup: str | None,
    cpu: str | None,
    wait: str | None,
    latency_count: str | int | None,
    out: str | None,
    point_timeout: str | None,
    agent: str | None,
    agent_info: AgentInfo,
    cpu_count: int | None = None,
    qos: Mapping[str, object] | None = None,
    samples: str | int | None = None,
    precision: str | float | None = None,
    confidence: str | None = None,
    link: str | None = None,
    hosts: str | None = None,
    data: str | None = None,
    direction: str | None = None,
    clock: str | None = None,
    check_out: bool = True,
) -> RunOptions:
    """Check every value; raise UsageError naming the first bad one.

    ``agent_info`` is the agent's description of itself (``mwperf-agent
    list``): its words, limits and adapters, the only source of what can be
    asked. ``qos`` holds the keyword arguments of :func:`mwperf.qos.parse_qos`
    (--reliability, --history, ...). Without --mw, the middlewares are every
    adapter that honours those options.
    """
    adapters = agent_info.adapters
    try:
        # With --hosts, --nic names an interface of those hosts, not of this one.
        qos_options = parse_qos(agent_info, **{**(qos or {}), **({"net_dir": None} if hosts is not None else {})})
    except QosError as exc:
        raise UsageError(str(exc)) from None

    # middleware
    if mw is None:
        mws = tuple(name for name in adapters if unsupported(qos_options, adapters[name]) is None)
        if not mws and adapters:
            mws = tuple(adapters)  # let check_supported name the first refusal
    else:
        mws = _dedupe(_items("--mw", mw))
        for name in mws:
            if name not in adapters:
                available = ", ".join(adapters) or "none"
                raise UsageError(f"--mw {name}: unknown middleware (available: {available})")
    try:
        check_supported(qos_options, mws, adapters)
    except QosError as exc:
        raise UsageError(str(exc)) from None

    # mode
    modes = _dedupe(_items("--mode", mode if mode is not None else DEFAULT_MODE))
    for name in modes:
        if name not in agent_info.modes:
            raise UsageError(f"--mode {name}: unknown mode (choose from {', '.join(agent_info.modes)})")

    # size
    sizes = []
    for token in _items("--size", size if size is not None else DEFAULT_SIZE):
        value = _one("--size", token, parse_size)
        if value < agent_info.header_size:
            raise UsageError(f"--size {token}: smaller than the {agent_info.header_size}-byte mwperf header")
        for name in mws:
            limit = adapters[name].max_size
            if value > limit:
                raise UsageError(f"--size {token}: {name} carries at most {limit} bytes per message")
        sizes.append(value)

    # rate
    rates: list[float] = []
    if rate is not None:
        if "rate" not in modes:
            raise UsageError(f"--rate {rate}: only valid with --mode rate")
        rates = [_one("--rate", token, parse_rate_hz) for token in _items("--rate", rate)]
        max_rate = float(agent_info.limit("max_rate_hz", 1e9))
        for token, value in zip(_items("--rate", rate), rates):
            if value > max_rate:
                raise UsageError(f"--rate {token}: above the {max_rate:g} Hz the agent's clock can schedule")
    elif "rate" in modes:
        raise UsageError("--mode rate: needs --rate HZ[,HZ...]")

    duration_ns = _one("--duration", duration or DEFAULT_DURATION, parse_duration_ns)
    warmup_ns = _one("--warmup", warmup if warmup is not None else DEFAULT_WARMUP,
                     parse_duration_ns, allow_zero=True)
    max_ns = int(agent_info.limit("max_duration_ns", 1 << 55))
    for option, value in (("--duration", duration_ns), ("--warmup", warmup_ns)):
        if value > max_ns:
            raise UsageError(f"{option} {duration if option == '--duration' else warmup}: longer than the agent "
                             f"can time ({max_ns / 86400e9:.0f} days)")
    for value in rates:
        if value * duration_ns / 1e9 < 1:
            raise UsageError(f"--rate {value:g}: not one sample is due in --duration {duration or DEFAULT_DURATION} "
                             f"(raise the rate or the duration)")
    point_timeout_ns = _one("--point-timeout", point_timeout if point_timeout is not None else DEFAULT_POINT_TIMEOUT,
                            parse_duration_ns, allow_zero=True)

    placement = parse_cpu(cpu, cpu_count)

    wait_value = wait or "block"
    if wait_value not in agent_info.waits:
        raise UsageError(f"--wait {wait_value}: choose {' or '.join(agent_info.waits)}")
    for name in mws:
        info = adapters[name]
        if wait_value not in info.waits:
            raise UsageError(f"--wait {wait_value}: not supported by {name} (it cannot be polled)")
        if wait_value == "spin" and receive_for(qos_options, info, wait_value) == "listener":
            raise UsageError(f"--wait spin: not with --receive listener for {name} (the middleware's own thread "
                             f"delivers; choose --receive {', '.join(r for r in info.receives if r != 'listener') or '...'})")

    if latency_count is None:
        count = DEFAULT_LATENCY_COUNT
    else:
        if "throughput" not in modes:
            raise UsageError(f"--latency-count {latency_count}: only with --mode throughput (it sets the pings "
                             f"interleaved with the flat-out samples)")
        text = str(latency_count).strip()
        if not text.isdigit():
            raise UsageError(f"--latency-count {latency_count}: must be a whole number (0: no latency pings)")
        count = int(text)

    samples_value = _parse_samples(samples)
    precision_value = _parse_precision(precision)
    confidence_value = DEFAULT_CONFIDENCE if confidence is None else str(confidence).strip()
    try:
        confidence_value = f"{float(confidence_value):.2f}"  # 0.9 (as YAML reads 0.90) is 0.90
    except ValueError:
        pass
    if confidence_value not in CONFIDENCES:
        raise UsageError(f"--confidence {confidence}: choose from {', '.join(CONFIDENCES)}")

    clock_value = clock or "monotonic"
    if clock_value not in agent_info.clocks:
        raise UsageError(f"--clock {clock_value}: choose from {', '.join(agent_info.clocks)}")

    if link is not None or hosts is not None:
        for name in mws:
            if adapters[name].hosts == "one":
                raise UsageError(f"--mw {name}: one host only (shared memory); not with "
                                 f"{'--link ' + link if link is not None else '--hosts'}")

    link_profile = None
    if link is not None:
        from mwperf.netns import parse_link

        link_profile = parse_link(link)
        if "shm" in qos_options.transports:
            raise UsageError(f"--transport shm: not with --link {link} (shared memory does not cross hosts)")
        if qos_options.nic is not None:
            raise UsageError(f"--nic {qos_options.nic}: not with --link {link} (the link has its own interfaces)")

    ssh_hosts = None
    if hosts is not None:
        from mwperf.hosts import parse_hosts

        if link is not None:
            raise UsageError(f"--hosts {hosts}: not with --link {link} (one or the other)")
        if "shm" in qos_options.transports:
            raise UsageError(f"--transport shm: not with --hosts (shared memory does not cross hosts)")
        ssh_hosts = parse_hosts(hosts, data, qos_options.nic)
    elif data is not None:
        raise UsageError(f"--data {data}: only with --hosts")
    if direction not in (None, "forward", "both"):
        raise UsageError(f"--direction {direction}: choose forward or both")
    if direction == "both" and ssh_hosts is None:
        raise UsageError("--direction both: only with --hosts (a namespace link is the same both ways)")

    out_path = Path(out) if out else default_out()
    if check_out and (out_path / "results.jsonl").exists():
        raise UsageError(f"--out {out_path}: already holds results.jsonl (choose a new directory)")
    if out_path.exists() and not out_path.is_dir():
        raise UsageError(f"--out {out_path}: exists and is not a directory")

    return RunOptions(
        mws=mws,
        modes=modes,
        sizes=_dedupe(sizes),
        rates_hz=_dedupe(rates),
        duration_ns=duration_ns,
        warmup_ns=warmup_ns,
        cpu=placement,
        wait=wait_value,
        latency_count=count,
        out=out_path,
        point_timeout_ns=point_timeout_ns,
        agent=agent,
        adapters=dict(adapters),
        qos=qos_options,
        samples=samples_value,
        precision=precision_value,
        confidence=confidence_value,
        link=link_profile,
        hosts=ssh_hosts,
        both_directions=direction == "both",
        clock=clock_value,
    )


def _parse_samples(samples: str | int | None) -> int:
    if samples is None:
        return 0
    text = str(samples).strip()
    if not text.isdigit() or not 1 <= int(text) <= MAX_SAMPLES_PER_POINT:
        raise UsageError(f"--samples {samples}: must be a whole number of samples, at least 1")
    return int(text)


def _parse_precision(precision: str | float | None) -> float:
    """``5%`` or ``0.05``: the relative half-width the CIs of p50 and p99 must reach."""
    if precision is None:
        return 0.0
    text = str(precision).strip()
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise UsageError(f"--precision {precision}: expected a fraction or a percentage, e.g. 5%") from None
    if not 0 < value < 1:
        raise UsageError(f"--precision {precision}: must be above 0 and below 100%")
    return value
