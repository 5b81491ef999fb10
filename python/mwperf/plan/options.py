"""The options of a run as typed, immutable values.

:class:`RunRequest` is what the command line or a sweep plan gives (each
option of the agent's table by name, as text items; the controller's own
options beside); :func:`mwperf.plan.validate.build_run_options` checks it
into :class:`RunOptions`, which expands into :class:`TestPoint` values (one
value of every option that applies to the point, :meth:`RunOptions.points`);
a :class:`PlannedPoint` is one point with the options it runs under.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Mapping

from mwperf.description import AdapterInfo, AgentInfo
from mwperf.plan.where import HostPair, LinkProfile
from mwperf.table import OptionTable, Row, snapshot

__all__ = ["CpuPlacement", "TestPoint", "RunOptions", "PlannedPoint", "RunRequest", "point_value"]

DEFAULT_POINT_TIMEOUT = "5s"
#: A point given a sample count and no duration runs at most this much longer than its samples need
#: at its rate (or, without a rate, this long).
SAMPLES_MARGIN = 1.2
SAMPLES_DEFAULT_MAX_NS = 60 * 10**9


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
    """One measurement: a middleware, a mode, and one value of every option
    of the table that applies to it (None: not applicable to this mode or
    middleware, or the middleware's own default)."""

    __test__ = False  # not a pytest test class

    index: int
    mw: str
    mode: str
    values: tuple[tuple[str, Any], ...] = ()

    def get(self, name: str, default: Any = None) -> Any:
        for key, value in self.values:
            if key == name:
                return default if value is None else value
        return default

    @property
    def size(self) -> int:
        return int(self.get("size"))

    @property
    def rate_hz(self) -> float | None:
        return self.get("rate")

    @property
    def demand(self) -> int | None:
        return self.get("demand")

    @property
    def subscribers(self) -> int:
        return int(self.get("subscribers", 1))

    @property
    def subscribers_as(self) -> str:
        return str(self.get("subscribers-as", "processes"))

    @property
    def threaded(self) -> bool:
        """The point's N subscribers are N reader threads of one agent process."""
        return self.subscribers > 1 and self.subscribers_as == "threads"

    @property
    def planned_s(self) -> float:
        """Warm-up plus (maximum) duration, seconds."""
        return (self.get("warmup", 0) + self.get("duration", 0)) / 1e9

    def label(self, table: OptionTable | None = None) -> str:
        """The point in a progress line or a dry run: ``udp rate 1024 B 100 Hz (best-effort)``."""
        peer = self.get("peer-mw")
        text = f"{self.mw}{'->' + peer if peer else ''} {self.mode} {self.size} B"
        if self.rate_hz is not None:
            text += f" {self.rate_hz:g} Hz"
        if self.demand is not None:
            text += f" x{self.demand}"
        if self.subscribers != 1:
            text += f" 1:{self.subscribers}" + (" threads" if self.subscribers_as == "threads" else "")
        qos = self.qos_label(table)
        return f"{text} ({qos})" if qos else text

    def qos_label(self, table: OptionTable | None = None) -> str:
        """What was asked of the middleware, e.g. ``best-effort, keep-all, shm`` ('' when nothing)."""
        rows = (table or snapshot()).label_rows
        return ", ".join(p for r in rows if (p := r.label_part(self.get(r.name))) is not None)


def point_value(row: Row, given: Mapping[str, tuple], info: AdapterInfo | None) -> tuple:
    """The values option ``row`` takes in points of the middleware ``info``:
    as given (what a middleware cannot honour is refused by the checks, or
    excluded by a plan), else its default where the middleware has the
    capability that gates it, else None (nothing is asked of it)."""
    if row.name in given:
        return given[row.name]
    if row.capability is not None and info is not None and not info.honours(row.capability):
        return (None,)
    return (row.default,)


@dataclass(frozen=True)
class RunOptions:
    """A validated run: the chosen middlewares, every option of the table
    that was given (typed machine values, each a tuple: lists expand into
    points), and the controller's own options."""

    agent: AgentInfo = field(compare=False)
    mws: tuple[str, ...]
    values: Mapping[str, tuple]
    cpu: CpuPlacement
    out: Path
    point_timeout_ns: int
    agent_path: str | None = None
    link: LinkProfile | None = None  # --link netns[:PROFILE]: publisher and subscriber in two namespaces
    hosts: HostPair | None = None    # --hosts pub=..,sub=..: agents on two real hosts, over ssh
    both_directions: bool = False    # --direction both: every point A->B, then B->A
    reuse_agents: bool = False       # --reuse-agents: consecutive points alike but for pair rows share agents
    keystore: Path | None = None     # --keystore DIR: the user's DDS Security keystore (else mwperf makes one)

    @property
    def table(self) -> OptionTable:
        return self.agent.table

    @property
    def adapters(self) -> Mapping[str, AdapterInfo]:
        return self.agent.adapters

    @property
    def run_id(self) -> str:
        return self.out.name

    def given(self, name: str) -> tuple | None:
        return self.values.get(name)

    def points(self) -> list[TestPoint]:
        """mw x mode x the product of every option's values that applies to the
        mode (a rate only to rate points, a demand only to burst points), in the
        table's order."""
        return [TestPoint(i, *p[1:]) for i, p in enumerate(self._combinations())]

    def _combinations(self) -> Iterator[tuple[int, str, str, tuple]]:
        rows = [r for r in self.table.user_rows if r.name not in ("mw", "mode")]
        for mw in self.mws:
            info = self.adapters.get(mw)
            for mode in self.values.get("mode") or (self.table["mode"].default,):
                applying = [r for r in rows if r.applies(mode)]
                lists = [point_value(r, self.values, info) for r in applying]
                for combo in itertools.product(*lists):
                    values = dict(zip((r.name for r in applying), combo))
                    if values.get("peer-mw") == mw:  # its own peer: a point like any other
                        values["peer-mw"] = None
                    if "duration" not in self.values and values.get("samples"):
                        values["duration"] = sample_duration_ns(values["samples"], values.get("rate"))
                    yield 0, mw, mode, tuple(values.items())

    def as_dict(self) -> dict:
        """The effective options, JSON-ready (for run.json)."""
        return {
            "mws": list(self.mws),
            "options": {name: [self.table[name].shown(v) for v in values] for name, values in self.values.items()},
            "cpu": {"pub": self.cpu.pub, "sub": self.cpu.sub, "placement": self.cpu.placement},
            "out": str(self.out), "point_timeout_ns": self.point_timeout_ns, "agent": self.agent_path,
            "link": None if self.link is None else self.link.name,
            "hosts": None if self.hosts is None else self.hosts.as_dict(), "both_directions": self.both_directions,
            "reuse_agents": self.reuse_agents, "keystore": None if self.keystore is None else str(self.keystore),
        }


def sample_duration_ns(samples: int, rate_hz: float | None) -> int:
    """The maximum duration of a point given a sample count and no duration."""
    if rate_hz:
        return int(max(1.0, samples / rate_hz * SAMPLES_MARGIN + 1.0) * 1e9)
    return SAMPLES_DEFAULT_MAX_NS


@dataclass(frozen=True)
class PlannedPoint:
    """One point to measure with the options it runs under (a sweep gives
    every point its own), its repetition and its hash (the record's
    ``point_key``, what ``--resume`` matches: :func:`mwperf.plan.sweep_plan.point_hash`);
    a plain run has neither."""

    opts: RunOptions
    point: TestPoint
    repetition: int | None = None
    point_hash: str | None = None
    repetitions: int = 1


@dataclass(frozen=True)
class RunRequest:
    """The options of a run as given, before validation: every option of the
    agent's table by name, as its text items (the command line splits its
    comma lists, a plan gives one list per key; a flag is (True,)); the
    controller's own options beside."""

    values: Mapping[str, tuple] = field(default_factory=dict)
    best: bool = False          # --best: --reliability best-effort, as RTI Perftest
    keyed: bool = False         # --keyed: a keyed topic (--instances 1 unless given)
    cpu: str | None = None
    point_timeout: str | None = None
    reuse_agents: bool = False  # --reuse-agents / plan key reuse_agents
    link: str | None = None
    hosts: str | None = None
    data: str | None = None
    direction: str | None = None
    out: str | None = None
    keystore: str | None = None
