"""The sections a run adds to a record, typed (parts of a
:class:`~mwperf.model.record.Record`): a max-rate search's probe
(``search``), the spread over a point's launches (``launches``, on its last
repetition) and a scenario's flow (``scenario``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from mwperf.model.parts import JsonObject, Part

__all__ = ["Criterion", "Search", "Launches", "Scenario"]


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
class Launches(Part):
    """On a point's last repetition: the spread of its p50 over its launches (:mod:`mwperf.model.launches`)."""

    launches: int
    median_us: float
    min_us: float
    max_us: float
    between: float | None
    within: float | None
    ratio: float | None

    def to_json(self) -> dict[str, Any]:
        """As the record holds it."""
        return {"launches": self.launches, "median_us": self.median_us, "min_us": self.min_us,
                "max_us": self.max_us, "between": self.between, "within": self.within, "ratio": self.ratio}


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
