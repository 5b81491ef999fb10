"""The sections a run adds to a record, typed (parts of a
:class:`~mwperf.model.record.Record`): a max-rate search's probe
(``search``), the spread over a point's launches (``launches``, on its last
repetition) and a scenario's flow (``scenario``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mwperf.model.parts import JsonObject

__all__ = ["Criterion", "Search", "Launches", "Scenario"]


@dataclass(frozen=True)
class Criterion:
    """What a max-rate search asks of a rate: the share that may go missing, the p99 allowed (None: any)."""

    loss: float
    p99_us: float | None


@dataclass(frozen=True)
class Search:
    """A probe of ``mwperf max-rate``'s search (the last, ``done``, holds the answer)."""

    criterion: Criterion
    step: float
    growth: float
    bounds_hz: tuple[float, float]
    cell: int
    probe: int
    phase: str
    met: bool
    why: str
    missing: float | None
    bracket: tuple[float | None, float | None]
    done: bool
    max_rate_hz: float | None
    note: str | None

    @classmethod
    def of(cls, value: Any) -> Search | None:
        if not isinstance(value, dict):
            return None
        crit, bounds, bracket = value["criterion"], value["bounds_hz"], value["bracket"]
        return cls(Criterion(crit["loss"], crit.get("p99_us")), value["step"], value["growth"], (bounds[0], bounds[1]),
                   value["cell"], value["probe"], value["phase"], value["met"], value["why"], value.get("missing"),
                   (bracket[0], bracket[1]), value["done"], value.get("max_rate_hz"), value.get("note"))


@dataclass(frozen=True)
class Launches:
    """On a point's last repetition: the spread of its p50 over its launches (:mod:`mwperf.model.launches`)."""

    launches: int
    median_us: float
    min_us: float
    max_us: float
    between: float | None
    within: float | None
    ratio: float | None

    @classmethod
    def of(cls, value: Any) -> Launches | None:
        if not isinstance(value, dict):
            return None
        return cls(value["launches"], value["median_us"], value["min_us"], value["max_us"], value.get("between"),
                   value.get("within"), value.get("ratio"))

    def to_json(self) -> dict[str, Any]:
        """As the record holds it."""
        return {"launches": self.launches, "median_us": self.median_us, "min_us": self.min_us,
                "max_us": self.max_us, "between": self.between, "within": self.within, "ratio": self.ratio}


@dataclass(frozen=True)
class Scenario:
    """A scenario's flow: the scenario, the flow, together with the others or alone, its publishers' counts."""

    name: str
    hash: str
    flow: str
    together: bool
    flows: int
    point: int
    label: str
    publishers: int
    publisher_sent: tuple[int | None, ...]
    per_publisher: tuple[Any, ...] | None
    payload: str
    payload_check: tuple[JsonObject, ...] | None
    cpu_s: float | None

    @classmethod
    def of(cls, value: Any) -> Scenario | None:
        if not isinstance(value, dict):
            return None
        per, check = value.get("per_publisher"), value.get("payload_check")
        return cls(value["name"], value["hash"], value["flow"], value["together"], value["flows"], value["point"],
                   value["label"], value["publishers"], tuple(value.get("publisher_sent") or ()),
                   None if per is None else tuple(per), value["payload"], None if check is None else tuple(check),
                   value.get("cpu_s"))
