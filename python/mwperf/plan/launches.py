"""A point's launches: each point of a run or a plan is measured as several
short launches (each its two agents started for it), interleaved across the
run's points so that the machine's slow drift falls on all of them.

A point's ``duration`` (and ``warmup``, and ``samples``) is its measuring
time in all: each of its launches measures an equal share of it, so several
launches take the time one did, plus what each launch's start-up costs. With
``--precision`` and a ``max_launches`` above ``launches``, the share is
``max_launches``'s: the adaptive stop adds launches, while the point's
intervals are wider than asked, up to that many (:mod:`mwperf.execute.launches`).

A point is ``DEFAULT_LAUNCHES`` launches unless its run or plan says
otherwise, or ``$MWPERF_LAUNCHES`` sets another default (the test suite's
is 1: its tests are about other things, each launch costs a start-up).
"""

from __future__ import annotations

import math
import os
from dataclasses import replace
from typing import Callable, Sequence

from mwperf.errors import UsageError
from mwperf.plan.options import PlannedPoint, RunOptions, TestPoint

__all__ = ["DEFAULT_LAUNCHES", "MAX_LAUNCHES", "ENV_LAUNCHES", "default_launches", "share", "per_launch",
           "interleaved"]

#: Launches a point by default: the fewest whose [min, max] is a 95 % interval of their median (96.9 %).
DEFAULT_LAUNCHES = 6
MAX_LAUNCHES = 1000
ENV_LAUNCHES = "MWPERF_LAUNCHES"
#: The options split among a point's launches.
_SPLIT = ("duration", "warmup", "samples")


def default_launches() -> int:
    """A point's launches when its run or plan does not say: $MWPERF_LAUNCHES, else DEFAULT_LAUNCHES."""
    text = os.environ.get(ENV_LAUNCHES, "").strip()
    if not text:
        return DEFAULT_LAUNCHES
    if not text.isdigit() or not 1 <= int(text) <= MAX_LAUNCHES:
        raise UsageError(ENV_LAUNCHES, text, f"expected a whole number from 1 to {MAX_LAUNCHES}")
    return int(text)


def share(point: TestPoint, launches: int, max_launches: int | None) -> int:
    """Into how many launches a point's time is split: its most, when its adaptive stop may add launches."""
    return max(launches, max_launches or 0) if point.get("precision") else launches


def per_launch(point: TestPoint, parts: int) -> TestPoint:
    """The point as one of ``parts`` launches measures it: its duration, warm-up and sample count shared."""
    if parts <= 1:
        return point
    values = []
    for name, value in point.values:
        if name in _SPLIT and isinstance(value, int) and not isinstance(value, bool) and value > 0:
            value = max(1, math.ceil(value / parts))
        values.append((name, value))
    return replace(point, values=tuple(values))


def interleaved(points: Sequence[tuple[RunOptions, TestPoint]], launches: int, max_launches: int | None = None,
                hash_of: Callable[[RunOptions, TestPoint, int], str] | None = None,
                numbered: bool = False) -> list[PlannedPoint]:
    """Every launch of every point, a round of every point's launch after another: round r holds each
    point's launch r (``repetition``; None for a point of one launch unless ``numbered``), ``hash_of``
    its hash (``sweep --resume``)."""
    out: list[PlannedPoint] = []
    for launch in range(launches):
        for opts, point in points:
            planned = replace(per_launch(point, share(point, launches, max_launches)), index=len(out))
            repetition = launch if launches > 1 or numbered else None
            most = share(point, launches, max_launches)
            out.append(PlannedPoint(opts, planned, repetition,
                                    hash_of(opts, planned, launch) if hash_of is not None else None, launches,
                                    most if most > launches else None))
    return out
