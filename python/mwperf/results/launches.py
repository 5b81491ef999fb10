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
from typing import Iterable

__all__ = ["p50", "spread", "spread_text"]


def p50(record: dict) -> float | None:
    value = (record.get("latency_us") or {}).get("p50")
    return float(value) if isinstance(value, (int, float)) else None


def _within(record: dict) -> float | None:
    stats = record.get("latency_us") or {}
    ci, mid = stats.get("p50_ci"), stats.get("p50")
    if not isinstance(ci, list) or len(ci) != 2 or not isinstance(mid, (int, float)) or mid <= 0:
        return None
    return (ci[1] - ci[0]) / 2 / mid


def spread(records: list[dict]) -> dict | None:
    """``{launches, median_us, min_us, max_us, between, within, ratio}`` of the
    launches ``records`` of one point; None when none has a p50."""
    values = [v for v in map(p50, records) if v is not None]
    if not values:
        return None
    mean = statistics.fmean(values)
    between = statistics.stdev(values) / mean if len(values) >= 2 and mean > 0 else None
    halves = [w for w in map(_within, records) if w is not None]
    within = statistics.median(halves) if halves else None
    return {"launches": len(values), "median_us": statistics.median(values), "min_us": min(values),
            "max_us": max(values), "between": between, "within": within,
            "ratio": between / within if between is not None and within else None}


def spread_text(s: dict | None) -> str:
    """``±6.1% / ±1.2% (3)``: between-launch / within-launch, and the launches."""
    if s is None:
        return "-"

    def pct(v):
        return "-" if v is None else f"±{100 * v:.1f}%"

    return f"{pct(s['between'])} / {pct(s['within'])} ({s['launches']})"
