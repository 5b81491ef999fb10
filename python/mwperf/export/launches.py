"""The report's launch-to-launch table: for every point measured in more than
one launch (a plan's ``repetitions``), its p50 over the launches, how much it
moved between launches and how wide one launch's interval was
(:mod:`mwperf.model.launches`). One launch's interval says nothing about
the next launch: this table shows how far apart launches really are."""

from __future__ import annotations

from mwperf.export.sections import Row, Section
from mwperf.model.labels import PointId, point_id
from mwperf.model.launches import spread
from mwperf.model.record import Record

__all__ = ["launch_sections", "HEADERS"]

HEADERS = ["Point", "Launches", "p50 median (us)", "p50 min-max (us)", "Between launches", "Within a launch",
           "Between / within"]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"±{100 * value:.1f}%"


def launch_sections(records: list[Record]) -> list[Section]:
    """One table of every point with two launches or more (none: no table)."""
    groups: dict[PointId, list[Record]] = {}
    for r in records:
        if r.ok and not r.imported and r.search is None:
            groups.setdefault(point_id(r), []).append(r)
    section = Section("", "launches", "launch-to-launch spread of the p50 latency (each repetition a launch of its "
                                      "own; between: sd / mean of the launches' p50, within: median p50 interval "
                                      "half-width / p50)", list(HEADERS), left=(0,))
    for key, members in groups.items():
        s = spread(members)
        if s is None or s.launches < 2 or s.median_us is None or s.min_us is None or s.max_us is None:
            continue
        section.rows.append(Row([key.label, str(s.launches), f"{s.median_us:.1f}", f"{s.min_us:.1f}-{s.max_us:.1f}",
                                 _pct(s.between), _pct(s.within), "-" if s.ratio is None else f"{s.ratio:.1f}x"]))
    return [section] if section.rows else []
