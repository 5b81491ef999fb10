"""Within-launch and between-launch variation of a point's p50 latency.

A record is one launch of a point (its two agents started for it): its
``p50_ci`` says how well that launch pinned down its own p50, and nothing
about the next launch, which may sit somewhere else (another page layout,
another wake-up mode). The repetitions of a point (a plan's ``repetitions``,
each its own launch) show that spread: :func:`spread` summarises both, as
fractions of the median p50 over the launches:

* ``between``: the standard deviation of the launches' p50s over their mean
  (null with one launch);
* ``within``: the median over the launches of their p50 interval's
  half-width over their p50 (null where no launch has an interval);
* ``ratio``: between / within; well above 1, the launch is the unit that
  varies, and one launch's interval understates what another launch would
  measure.
"""

from __future__ import annotations

import statistics

from mwperf.model.sections import Launches
from mwperf.model.record import Record

__all__ = ["p50", "spread", "spread_text"]


def p50(record: Record) -> float | None:
    value = record.stat("p50")
    return None if value is None else float(value)


def _within(record: Record) -> float | None:
    stats = record.latency_us
    if stats is None or stats.p50_ci is None or stats.p50 is None or stats.p50 <= 0:
        return None
    return (stats.p50_ci[1] - stats.p50_ci[0]) / 2 / stats.p50


def spread(records: list[Record]) -> Launches | None:
    """The spread over the launches ``records`` of one point (the record's
    ``launches``); None when none has a p50."""
    values = [v for v in map(p50, records) if v is not None]
    if not values:
        return None
    mean = statistics.fmean(values)
    between = statistics.stdev(values) / mean if len(values) >= 2 and mean > 0 else None
    halves = [w for w in map(_within, records) if w is not None]
    within = statistics.median(halves) if halves else None
    return Launches(len(values), statistics.median(values), min(values), max(values), between, within,
                    between / within if between is not None and within else None)


def spread_text(s: Launches | None) -> str:
    """``±6.1% / ±1.2% (3)``: between-launch / within-launch, and the launches."""
    if s is None:
        return "-"

    def pct(v: float | None) -> str:
        return "-" if v is None else f"±{100 * v:.1f}%"

    return f"{pct(s.between)} / {pct(s.within)} ({s.launches})"
