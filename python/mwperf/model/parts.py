"""The measured parts of a :class:`~mwperf.model.record.Record`, typed: each
is made from its object in a record (schema version 2, checked and upgraded
on reading: every field is there and of its type) by ``of``, which gives
None for a null. Field names are the record's (``results/schema``), so a
reader of the JSON and a reader of the code see the same names. Where and
how a point ran is :mod:`mwperf.model.provenance`; the sections a run adds
(a search's probe, a point's launches, a scenario's flow) :mod:`mwperf.model.sections`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, Mapping, TypeVar

__all__ = ["JsonObject", "json_object", "strings", "interval", "Stats", "Sides", "CpuTime", "ThreadGroup", "Spread",
           "Fanout", "Subscriber", "Look", "Adaptive", "STAT_KEYS"]

#: A JSON object as it is in the record (an adapter's configuration, a link's sync, ...).
JsonObject = Mapping[str, Any]
T = TypeVar("T")

#: A statistics object's figures, in µs (``count`` apart).
STAT_KEYS = ("count", "mean", "std", "min", "max", "p50", "p90", "p99", "p999", "p9999", "p999999")


def json_object(value: Any) -> JsonObject | None:
    return value if isinstance(value, dict) else None


def strings(value: Any) -> dict[str, str] | None:
    """A JSON object of strings (versions, the reasons of nulls), each value as text."""
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else None


def interval(value: Any) -> tuple[float, float] | None:
    return (value[0], value[1]) if isinstance(value, (list, tuple)) and len(value) == 2 else None


@dataclass(frozen=True)
class Stats:
    """A latency's statistics in µs (``latency_us``, ``rtt_us``, ...): percentiles
    its sample count cannot support are None, as are the intervals where the
    data cannot support one (``ci_null`` says why)."""

    count: int | None
    mean: float | None
    std: float | None
    min: float | None
    max: float | None
    p50: float | None
    p90: float | None
    p99: float | None
    p999: float | None
    p9999: float | None
    p999999: float | None
    p50_ci: tuple[float, float] | None
    p99_ci: tuple[float, float] | None
    p999_ci: tuple[float, float] | None
    relative_error: float | None
    ci_confidence: float | None
    ci_batches: int | None
    ci_method: str | None
    ci_null: dict[str, str] | None
    uncertainty_us: float | None = None

    @classmethod
    def of(cls, value: Any) -> Stats | None:
        if not isinstance(value, dict):
            return None
        g = value.get
        return cls(count=g("count"), mean=g("mean"), std=g("std"), min=g("min"), max=g("max"), p50=g("p50"),
                   p90=g("p90"), p99=g("p99"), p999=g("p999"), p9999=g("p9999"), p999999=g("p999999"),
                   p50_ci=interval(g("p50_ci")), p99_ci=interval(g("p99_ci")), p999_ci=interval(g("p999_ci")),
                   relative_error=g("relative_error"), ci_confidence=g("ci_confidence"), ci_batches=g("ci_batches"),
                   ci_method=g("ci_method"), ci_null=strings(g("ci_null")), uncertainty_us=g("uncertainty_us"))

    def figure(self, key: str) -> float | None:
        """A figure by its name in the record (``p50``, ``p9999``, ``count``, ``mean``)."""
        if key not in STAT_KEYS:
            raise KeyError(key)
        value: float | None = getattr(self, key)
        return value


@dataclass(frozen=True)
class Sides(Generic[T]):
    """A figure of each side: the publisher's and the subscriber's."""

    pub: T
    sub: T

    @classmethod
    def of(cls, value: Any, part: Any = None) -> Sides[Any]:
        """Both sides of ``value`` (``{"pub": ..., "sub": ...}``), each made by ``part`` when given."""
        sides = value if isinstance(value, dict) else {}
        pub, sub = sides.get("pub"), sides.get("sub")
        return Sides(pub, sub) if part is None else Sides(part(pub), part(sub))

    def side(self, name: str) -> T:
        """``pub`` or ``sub`` by name."""
        if name == "pub":
            return self.pub
        if name == "sub":
            return self.sub
        raise KeyError(name)


@dataclass(frozen=True)
class CpuTime:
    """CPU time, seconds."""

    user: float
    sys: float

    @property
    def total(self) -> float:
        return self.user + self.sys

    @classmethod
    def of(cls, value: Any) -> CpuTime | None:
        return cls(value["user"], value["sys"]) if isinstance(value, dict) else None


@dataclass(frozen=True)
class ThreadGroup:
    """A side's threads of one name: their CPU over the measured window (``own``: mwperf's own threads)."""

    name: str
    threads: int | None
    cpu_s: float
    cpu_pct: float | None
    own: bool

    @classmethod
    def all_of(cls, value: Any) -> tuple[ThreadGroup, ...] | None:
        if not isinstance(value, (list, tuple)):
            return None
        return tuple(cls(g["name"], g.get("threads"), g["cpu_s"], g.get("cpu_pct"), bool(g.get("own")))
                     for g in value if isinstance(g, dict))


@dataclass(frozen=True)
class Spread:
    """A figure over a point's subscribers: the worst, the median and the spread."""

    worst: float
    median: float
    spread: float

    @classmethod
    def of(cls, value: Any) -> Spread | None:
        return cls(value["worst"], value["median"], value["spread"]) if isinstance(value, dict) else None


@dataclass(frozen=True)
class Fanout:
    """1:N: loss and latency over the subscribers, and every subscriber process's CPU, each once."""

    loss_rate: Spread | None
    latency_p50_us: Spread | None
    latency_p99_us: Spread | None
    cpu_s: CpuTime | None
    cpu_pct: float | None

    @classmethod
    def of(cls, value: Any) -> Fanout | None:
        if not isinstance(value, dict):
            return None
        return cls(Spread.of(value.get("loss_rate")), Spread.of(value.get("latency_p50_us")),
                   Spread.of(value.get("latency_p99_us")), CpuTime.of(value.get("cpu_s")), value.get("cpu_pct"))

    def figure(self, name: str) -> Spread | None:
        """``loss_rate``, ``latency_p50_us`` or ``latency_p99_us`` by name."""
        if name not in ("loss_rate", "latency_p50_us", "latency_p99_us"):
            raise KeyError(name)
        spread: Spread | None = getattr(self, name)
        return spread


@dataclass(frozen=True)
class Subscriber:
    """One subscriber of a 1:N point (``per_subscriber``)."""

    index: int
    echoer: bool
    slow: bool
    received: int | None
    lost: int | None
    loss_rate: float | None
    duplicates: int | None
    samples_per_s: float | None
    latency_us: Stats | None
    cpu_s: CpuTime | None
    cpu_pct: float | None
    rss_kb: int | None
    reader: int | None
    cpu_scope: str | None

    @classmethod
    def all_of(cls, value: Any) -> tuple[Subscriber, ...] | None:
        if not isinstance(value, (list, tuple)):
            return None
        return tuple(cls(s["index"], s["echoer"], s["slow"], s.get("received"), s.get("lost"), s.get("loss_rate"),
                         s.get("duplicates"), s.get("samples_per_s"), Stats.of(s.get("latency_us")),
                         CpuTime.of(s.get("cpu_s")), s.get("cpu_pct"), s.get("rss_kb"), s.get("reader"),
                         s.get("cpu_scope"))
                     for s in value if isinstance(s, dict))


@dataclass(frozen=True)
class Look:
    """One look of the adaptive stop: the intervals it saw, after how long, on how many samples."""

    p50_ci: tuple[float, float] | None
    p99_ci: tuple[float, float] | None
    batches: int | None
    look: int | None
    after_s: float | None
    count: int | None
    needed_s: float | None
    why: dict[str, str] | None

    @classmethod
    def of(cls, value: Any) -> Look | None:
        if not isinstance(value, dict):
            return None
        return cls(interval(value.get("p50_ci")), interval(value.get("p99_ci")), value.get("batches"),
                   value.get("look"), value.get("after_s"), value.get("count"), value.get("needed_s"),
                   strings(value.get("why")))


@dataclass(frozen=True)
class Adaptive:
    """The adaptive stop (``--precision``): when it converged, or what it would have needed."""

    converged_after_s: float | None
    at_convergence: Look | None
    last_look: Look | None
    stopped_early: bool
    needed_s: float | None
    needed_note: str | None

    @classmethod
    def of(cls, value: Any) -> Adaptive | None:
        if not isinstance(value, dict):
            return None
        return cls(value.get("converged_after_s"), Look.of(value.get("at_convergence")),
                   Look.of(value.get("last_look")), bool(value.get("stopped_early")), value.get("needed_s"),
                   value.get("needed_note"))
