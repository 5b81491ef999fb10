"""The sections a run adds to a record, typed (parts of a
:class:`~mwperf.model.record.Record`): a max-rate search's probe
(``search``), a point's launches so far (``launches``: their spread and the
headline with its interval, on each launch from the second) and a scenario's
flow (``scenario``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from mwperf.model.parts import JsonObject, Part

__all__ = ["Criterion", "Search", "Figure", "Headline", "Launches", "Scenario"]


@dataclass(frozen=True)
class Criterion(Part):
    """What a max-rate search asks of a rate: the share that may go missing, the p99 allowed (None: any)."""

    loss: float
    p99_us: float | None


@dataclass(frozen=True)
class Search(Part):
    """A probe of ``mwperf max-rate``'s search (the last, ``done``, holds the answer)."""

    criterion: Criterion
    step: float
    growth: float | None  # records of the bracketing search before the probabilistic bisection
    bounds_hz: Sequence[float]  # the lowest and highest rate searched
    cell: int
    probe: int
    phase: str
    met: bool
    why: str
    missing: float | None
    bracket: Sequence[float | None]  # the limit's 90 % interval (the bracketing search's: highest met, lowest not)
    done: bool
    max_rate_hz: float | None
    note: str | None

    MADE = {"criterion": Criterion.of}


@dataclass(frozen=True)
class Figure(Part):
    """A headline figure over a point's launches: their median, its interval (None with one launch), how many."""

    estimate: float
    lo: float | None
    hi: float | None
    launches: int

    def to_json(self) -> dict[str, Any]:
        return {"estimate": self.estimate, "lo": self.lo, "hi": self.hi, "launches": self.launches}


def _figure(value: Any) -> Figure | None:
    return Figure.of(value)


@dataclass(frozen=True)
class Headline(Part):
    """A point's headline from its launches (:func:`mwperf.model.launches.headline`): each figure's
    median and order-statistic interval at ``level``, and whether they reached the precision asked
    or how many more launches (and seconds) they would need."""

    level: float | None  # the intervals' confidence (None: one launch, no interval)
    p50_us: Figure | None
    p99_us: Figure | None
    p999_us: Figure | None
    samples_per_s: Figure | None
    loss_rate: Figure | None
    precision: float | None  # asked (None: not asked)
    reached: bool | None
    more_launches: int | None  # None: no precision asked (0: reached)
    more_s: float | None

    MADE = {"p50_us": _figure, "p99_us": _figure, "p999_us": _figure, "samples_per_s": _figure,
            "loss_rate": _figure}

    def to_json(self) -> dict[str, Any]:
        def of(f: Figure | None) -> dict[str, Any] | None:
            return None if f is None else f.to_json()

        return {"level": self.level, "p50_us": of(self.p50_us), "p99_us": of(self.p99_us),
                "p999_us": of(self.p999_us), "samples_per_s": of(self.samples_per_s),
                "loss_rate": of(self.loss_rate), "precision": self.precision, "reached": self.reached,
                "more_launches": self.more_launches, "more_s": self.more_s}


@dataclass(frozen=True)
class Launches(Part):
    """On a point's launches from the second: the spread of its p50 over its launches so far, and its
    headline from them (:mod:`mwperf.model.launches`; ``headline`` None in records of older mwperf)."""

    launches: int
    median_us: float | None  # None: no launch has a p50 (a throughput point whose pings were all lost)
    min_us: float | None
    max_us: float | None
    between: float | None
    within: float | None
    ratio: float | None
    headline: Headline | None = None

    MADE = {"headline": Headline.of}

    def to_json(self) -> dict[str, Any]:
        """As the record holds it."""
        return {"launches": self.launches, "median_us": self.median_us, "min_us": self.min_us,
                "max_us": self.max_us, "between": self.between, "within": self.within, "ratio": self.ratio,
                "headline": None if self.headline is None else self.headline.to_json()}


@dataclass(frozen=True)
class Scenario(Part):
    """A scenario's flow: the scenario, the flow, together with the others or alone, its publishers' counts."""

    name: str
    hash: str
    flow: str
    together: bool
    flows: int
    point: int
    label: str
    publishers: int
    publisher_sent: Sequence[int | None]
    per_publisher: Sequence[Any] | None
    payload: str
    payload_check: Sequence[JsonObject] | None
    cpu_s: float | None
