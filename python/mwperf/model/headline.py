"""A point's headline figure and its interval, from one function (:func:`headline`):
what the report ranks middlewares on and judges "indistinguishable" by
(:func:`indistinguishable`), and what it says the interval is.

The figures (``metric``):

* ``p50``, ``p99``: the one-way latency's percentiles, µs;
* ``mbps``: the delivered rate, Mbit/s of whole messages (throughput mode);
* ``delivered``: received over scheduled, the share of the offered samples
  that arrived (rate mode; :func:`delivered`);
* ``loss``: the loss rate, a fraction of what was sent.

The interval is what the records of the point hold today:

* **one launch** (a point measured once): the interval the agent made within
  that launch, where it made one: the latency's ``p50_ci`` / ``p99_ci`` (batch
  means at ``ci_confidence``), a throughput point's received rate and loss
  rate at the adaptive stop's last look (``adaptive.last_look``), set around
  the point's final figure (the rate's relatively, the loss's by its
  distances). It says how well that launch pinned down its own figure, not
  where the next launch would land;
* **several launches** (a plan's ``repetitions``, each launch a record): the
  median over the launches, between the lowest and the highest launch; with n
  launches that range holds the launches' median with probability
  1 - 2 x 0.5^n (75 % with 3).

Two headlines are indistinguishable where their intervals overlap (as they
do where one holds the other's figure), or where their figures are equal;
where either has no interval and neither says so, it is not known (None).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable, Sequence

from mwperf.model.parts import Estimate
from mwperf.model.record import Record

__all__ = ["METRICS", "Headline", "headline", "indistinguishable", "delivered"]

#: The headline figures, each with its unit as shown and whether more is better.
METRICS: dict[str, tuple[str, bool]] = {"p50": ("µs", False), "p99": ("µs", False), "mbps": ("Mbit/s", True),
                                        "delivered": ("of offered", True), "loss": ("of sent", False)}


@dataclass(frozen=True)
class Headline:
    """A point's figure (``value``), its interval (``low``, ``high``: None where there is none),
    ``kind`` (``within-launch``, ``launches`` or ``none``) and what the interval is, or why there is none."""

    value: float | None
    low: float | None
    high: float | None
    kind: str
    launches: int
    about: str

    @property
    def has_interval(self) -> bool:
        return self.low is not None and self.high is not None


def delivered(record: Record) -> float | None:
    """Rate mode: received over scheduled (the samples due in the measured phase); where the record does
    not count those, the received rate over the publish rate."""
    if record.received is not None and record.scheduled:
        return record.received / record.scheduled
    if record.samples_per_s is not None and record.rate_hz:
        return record.samples_per_s / record.rate_hz
    return None


def _look_estimate(record: Record, which: str) -> Estimate | None:
    adaptive = record.adaptive
    look = None if adaptive is None else adaptive.last_look
    return None if look is None else look.rate if which == "rate" else look.loss


_VALUES: dict[str, Callable[[Record], float | None]] = {
    "p50": lambda r: r.stat("p50"), "p99": lambda r: r.stat("p99"), "mbps": lambda r: r.mbps,
    "delivered": delivered, "loss": lambda r: r.loss_rate}


def _within(record: Record, metric: str, value: float) -> tuple[float | None, float | None, str]:
    """The one launch's interval of ``metric`` around ``value``, and what it is (or why there is none)."""
    if metric in ("p50", "p99"):
        stats = record.latency_us
        ci = None if stats is None else stats.p50_ci if metric == "p50" else stats.p99_ci
        if stats is None or ci is None:
            why = (stats.ci_null or {}).get(f"{metric}_ci") if stats is not None else None
            return None, None, f"no interval ({why or 'the record has none'})"
        level = f"{100 * stats.ci_confidence:g} % " if stats.ci_confidence else ""
        return ci[0], ci[1], f"{level}interval within the launch ({stats.ci_method or 'batch means'})"
    look = _look_estimate(record, "rate" if metric == "mbps" else "loss")
    if metric in ("mbps", "loss") and look is not None and look.lo is not None and look.hi is not None:
        if metric == "mbps":
            if look.est <= 0:
                return None, None, "no interval (no rate at the adaptive stop's last look)"
            low, high = value * look.lo / look.est, value * look.hi / look.est
        else:
            low, high = max(0.0, value - (look.est - look.lo)), min(1.0, value + (look.hi - look.est))
        return low, high, "interval within the launch (the adaptive stop's last look)"
    return None, None, "no interval (one launch, none made within it)"


def headline(launches: Sequence[Record], metric: str) -> Headline:
    """The headline ``metric`` of one point from its launches (one record, or its repetitions):
    its figure and interval (see the module's text)."""
    if metric not in METRICS:
        raise KeyError(metric)
    values = [float(v) for v in (_VALUES[metric](r) for r in launches if r.ok) if v is not None]
    if not values:
        return Headline(None, None, None, "none", 0, "not measured")
    if len(values) >= 2:
        level = 100 * (1 - 2 * 0.5 ** len(values))
        return Headline(statistics.median(values), min(values), max(values), "launches", len(values),
                        f"lowest to highest of {len(values)} launches ({level:.0f} % for their median)")
    record = next(r for r in launches if r.ok and _VALUES[metric](r) is not None)
    low, high, about = _within(record, metric, values[0])
    return Headline(values[0], low, high, "none" if low is None else "within-launch", 1, about)


def indistinguishable(a: Headline, b: Headline) -> bool | None:
    """Whether two headlines cannot be told apart on this machine: their intervals overlap (one holds the
    other's figure, or both have one and they meet), or their figures are equal; None where it is not
    known (a figure missing, or an interval missing and the other's not holding its figure)."""
    if a.value is None or b.value is None:
        return None
    if a.value == b.value or _inside(a.value, b) or _inside(b.value, a):
        return True  # an interval holds its own figure: one holding the other's figure overlaps it
    if a.low is None or a.high is None or b.low is None or b.high is None:
        return None
    return a.low <= b.high and b.low <= a.high


def _inside(value: float, h: Headline) -> bool:
    return h.low is not None and h.high is not None and h.low <= value <= h.high
