"""The adaptive stop over a point's launches: once every point has had its
launches, each point with a precision asked whose headline intervals
(:func:`mwperf.model.launches.headline`) are wider than it gets one more
launch, a round of them interleaved across those points, until each is
within it or at its most launches (``max_launches``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Sequence

from mwperf.model.launches import headline
from mwperf.model.record import Record
from mwperf.plan.options import PlannedPoint

__all__ = ["more_launches"]


def more_launches(jobs: Sequence[PlannedPoint], records: Sequence[Record],
                  hash_of: Callable[[PlannedPoint, int], str | None] | None = None) -> list[PlannedPoint]:
    """The next round of launches (none: the adaptive stop is done): ``jobs`` every launch planned or
    added so far, ``records`` every record of the run (a launch's ``point`` is its job's index)."""
    by_index = {r.point: r for r in records}
    points: dict[tuple, list[PlannedPoint]] = {}
    for job in jobs:
        if job.max_launches is not None and job.repetition is not None:
            points.setdefault((id(job.opts), job.point.mw, job.point.mode,
                               tuple(v for v in job.point.values)), []).append(job)
    extra: list[PlannedPoint] = []
    index = max((job.point.index for job in jobs), default=-1) + 1
    for launches in points.values():
        last = max(launches, key=lambda j: j.repetition or 0)
        done = [by_index[j.point.index] for j in launches if j.point.index in by_index]
        ok = [r for r in done if r.ok]
        if len(done) < len(launches) or last.max_launches is None or len(launches) >= last.max_launches or not ok:
            continue  # not all measured yet (interrupted), at its most, or nothing to judge by
        if headline(ok, ok[-1].precision).reached is not False:
            continue
        repetition = (last.repetition or 0) + 1
        job = replace(last, point=replace(last.point, index=index + len(extra)), repetition=repetition)
        extra.append(replace(job, point_hash=hash_of(job, repetition) if hash_of is not None else None))
    return extra
