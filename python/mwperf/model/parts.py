"""The measured parts of a :class:`~mwperf.model.record.Record`, typed: each
is made from its object in a record (schema version 2, checked and upgraded
on reading: every field is there and of its type) by ``of``, which gives
None for a null. Field names are the record's (``results/schema``), so a
reader of the JSON and a reader of the code see the same names. Where and
how a point ran is :mod:`mwperf.model.provenance`; the sections a run adds
(a search's probe, a point's launches, a scenario's flow) :mod:`mwperf.model.sections`."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Callable, ClassVar, Generic, Mapping, Sequence, TypeVar

__all__ = ["Part", "JsonObject", "json_object", "strings", "interval", "Stats", "Sides", "CpuTime", "ThreadGroup",
           "Spread", "Fanout", "Subscriber", "Estimate", "Look", "Adaptive", "STAT_KEYS"]

#: A JSON object as it is in the record (an adapter's configuration, a link's sync, ...).
JsonObject = Mapping[str, Any]
T = TypeVar("T")

P = TypeVar("P", bound="Part")
_FIELDS: dict[type, tuple[str, ...]] = {}


class Part:
    """A part made from its JSON object field by field, by name: as they are, but those ``MADE``
    names, which are made by their function (a part of their own, an interval, a flag)."""

    MADE: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}

    @classmethod
    def of(cls: type[P], value: Any) -> P | None:
        """The part of a JSON object (None for a null)."""
        if not isinstance(value, dict):
            return None
        names = _FIELDS.get(cls) or _FIELDS.setdefault(cls, tuple(f.name for f in fields(cls)))  # type: ignore[arg-type]
        made = cls.MADE
        return cls(**{name: made[name](value.get(name)) if name in made else value.get(name) for name in names})

    @classmethod
    def all_of(cls: type[P], value: Any) -> tuple[P, ...] | None:
        """The parts of a JSON array (None for a null)."""
        if not isinstance(value, list):
            return None
        return tuple(part for part in map(cls.of, value) if part is not None)


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
class Stats(Part):
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

    MADE = {"p50_ci": interval, "p99_ci": interval, "p999_ci": interval, "ci_null": strings}


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
class CpuTime(Part):
    """CPU time, seconds."""

    user: float
    sys: float

    @property
    def total(self) -> float:
        return self.user + self.sys



@dataclass(frozen=True)
class ThreadGroup(Part):
    """A side's threads of one name: their CPU over the measured window (``own``: mwperf's own threads)."""

    name: str
    threads: int | None
    cpu_s: float
    cpu_pct: float | None
    own: bool

    MADE = {"own": bool}


@dataclass(frozen=True)
class Spread(Part):
    """A figure over a point's subscribers: the worst, the median and the spread."""

    worst: float
    median: float
    spread: float


@dataclass(frozen=True)
class Fanout(Part):
    """1:N: loss and latency over the subscribers, and every subscriber process's CPU, each once."""

    loss_rate: Spread | None
    latency_p50_us: Spread | None
    latency_p99_us: Spread | None
    cpu_s: CpuTime | None
    cpu_pct: float | None

    MADE = {"loss_rate": Spread.of, "latency_p50_us": Spread.of, "latency_p99_us": Spread.of, "cpu_s": CpuTime.of}

    def figure(self, name: str) -> Spread | None:
        """``loss_rate``, ``latency_p50_us`` or ``latency_p99_us`` by name."""
        if name not in ("loss_rate", "latency_p50_us", "latency_p99_us"):
            raise KeyError(name)
        spread: Spread | None = getattr(self, name)
        return spread


@dataclass(frozen=True)
class Subscriber(Part):
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

    MADE = {"latency_us": Stats.of, "cpu_s": CpuTime.of}


@dataclass(frozen=True)
class Estimate(Part):
    """A throughput point's received rate (samples/s) or loss rate at a look: the estimate and its interval."""

    est: float
    lo: float | None
    hi: float | None


@dataclass(frozen=True)
class Look(Part):
    """One look of the adaptive stop: the intervals it saw, after how long, on how many samples."""

    p50_ci: Sequence[float] | None
    p99_ci: Sequence[float] | None
    batches: int | None
    look: int | None
    after_s: float | None
    count: int | None
    needed_s: float | None
    why: Mapping[str, str] | None
    rate: Estimate | None  # a throughput point's received rate and loss rate
    loss: Estimate | None

    MADE = {"rate": Estimate.of, "loss": Estimate.of}


@dataclass(frozen=True)
class Adaptive(Part):
    """The adaptive stop (``--precision``): when it converged, or what it would have needed."""

    converged_after_s: float | None
    at_convergence: Look | None
    last_look: Look | None
    stopped_early: bool
    needed_s: float | None
    needed_note: str | None

    MADE = {"at_convergence": Look.of, "last_look": Look.of, "stopped_early": bool}
