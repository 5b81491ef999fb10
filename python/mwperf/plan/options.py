"""The options of a run as typed, immutable values.

:class:`RunRequest` is what the command line or a sweep plan gives (list
options as their items, None where not given);
:func:`mwperf.plan.validate.build_run_options` checks it into
:class:`RunOptions`, which expands into :class:`TestPoint` values; a
:class:`PlannedPoint` is one point with the options it runs under.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Mapping

from mwperf.description import AdapterInfo
from mwperf.plan.qos import QosOptions, QosRequest
from mwperf.plan.where import HostPair, LinkProfile

__all__ = ["CpuPlacement", "TestPoint", "RunOptions", "PlannedPoint", "RunRequest"]

DEFAULT_DURATION = "5s"
DEFAULT_WARMUP = "1s"
DEFAULT_POINT_TIMEOUT = "5s"
DEFAULT_LATENCY_COUNT = 10000
DEFAULT_SIZE = "1k"
DEFAULT_MODE = "latency"
DEFAULT_CONFIDENCE = "0.95"
DEFAULT_BURST_GAP = "10ms"  # seed 004's pause between bursts


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
    demand: int | None = None   # burst mode: samples per burst
    subscribers: int = 1        # subscribers (fan-out 1:N)
    subscribers_as: str = "processes"  # each its own process, or threads of one process (--readers)

    def qos_label(self) -> str:
        """What was requested, e.g. ``shm, best-effort, keep-all`` ('' when nothing)."""
        return ", ".join(v for v in (self.transport, self.reliability, self.history, self.durability) if v)

    def label(self) -> str:
        """The point in a progress line or a dry run: ``udp rate 1024 B 100 Hz (best-effort)``."""
        label = f"{self.mw} {self.mode} {self.size} B"
        if self.rate_hz is not None:
            label += f" {self.rate_hz:g} Hz"
        if self.demand is not None:
            label += f" x{self.demand}"
        if self.subscribers != 1:
            label += f" 1:{self.subscribers}" + (" threads" if self.subscribers_as == "threads" else "")
        qos = self.qos_label()
        return f"{label} ({qos})" if qos else label


@dataclass(frozen=True)
class RunOptions:
    """A validated run: what every point shares, and the lists its points expand."""

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
    link: LinkProfile | None = None  # --link netns[:PROFILE]: publisher and subscriber in two namespaces
    hosts: HostPair | None = None    # --hosts pub=..,sub=..: agents on two real hosts, over ssh
    both_directions: bool = False    # --direction both: every point A->B, then B->A
    demands: tuple[int, ...] = ()    # --demand: samples per burst (burst mode)
    burst_gap_ns: int = 10_000_000   # --burst-gap: the pause after each burst
    subscribers: tuple[int, ...] = (1,)  # --subscribers: 1:N fan-out
    slow_ns: int = 0                 # --slow-subscriber: one subscriber sleeps this per sample
    subscribers_as: str = "processes"  # --subscribers-as: N processes, or N reader threads in one process

    @property
    def planned_s(self) -> float:
        """Warm-up plus (maximum) duration of each point, seconds."""
        return (self.warmup_ns + self.duration_ns) / 1e9

    @property
    def run_id(self) -> str:
        return self.out.name

    def points(self) -> list[TestPoint]:
        """Cartesian product mw x transport x reliability x history x durability
        x mode x size x (rate, rate mode only) x (demand, burst mode only) x subscribers."""
        points: list[TestPoint] = []
        q = self.qos
        for mw in self.mws:
            histories = q.histories_for(self.adapters.get(mw))
            for transport, reliability, history, durability, mode, size in itertools.product(
                    q.transports, q.reliabilities, histories, q.durabilities, self.modes, self.sizes):
                rates: tuple[float | None, ...] = self.rates_hz if mode == "rate" else (None,)
                demands: tuple[int | None, ...] = self.demands if mode == "burst" else (None,)
                for rate, demand, subscribers in itertools.product(rates, demands, self.subscribers):
                    points.append(TestPoint(len(points), mw, mode, size, rate, transport, reliability,
                                            history, durability, demand, subscribers, self.subscribers_as))
        return points

    def as_dict(self) -> dict:
        """The effective options, JSON-ready (for run.json)."""
        data = asdict(self)
        data.pop("adapters", None)
        data["qos"] = self.qos.as_dict()
        data["out"] = str(self.out)
        data["cpu"] = {"pub": self.cpu.pub, "sub": self.cpu.sub, "placement": self.cpu.placement}
        for key in ("mws", "modes", "sizes", "rates_hz", "demands", "subscribers"):
            data[key] = list(data[key])
        return data


@dataclass(frozen=True)
class PlannedPoint:
    """One point to measure with the options it runs under (a sweep gives
    every point its own), its repetition and its key (what ``--resume``
    matches); a plain run has neither."""

    opts: RunOptions
    point: TestPoint
    repetition: int | None = None
    key: str | None = None
    repetitions: int = 1


@dataclass(frozen=True)
class RunRequest:
    """The options of a run as given, before validation: list options as
    their items (the command line splits its comma lists, a plan point gives
    one item each), None where not given."""

    mws: tuple[str, ...] | None = None
    modes: tuple[str, ...] | None = None
    sizes: tuple[str, ...] | None = None
    rates: tuple[str, ...] | None = None
    duration: str | None = None
    warmup: str | None = None
    cpu: str | None = None
    wait: str | None = None
    latency_count: str | None = None
    samples: str | None = None
    precision: str | None = None
    confidence: str | None = None
    point_timeout: str | None = None
    clock: str | None = None
    link: str | None = None
    hosts: str | None = None
    data: str | None = None
    direction: str | None = None
    demands: tuple[str, ...] | None = None
    burst_gap: str | None = None
    subscribers: tuple[str, ...] | None = None
    slow_subscriber: str | None = None
    subscribers_as: str | None = None
    out: str | None = None
    qos: QosRequest = QosRequest()
