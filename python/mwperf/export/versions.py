"""The report's "versions" section: for each middleware measured in two builds
or more (:func:`mwperf.analysis.versions.families`), each build against the one
before it, point by point: p50 latency and throughput new/old with each side's
launch-to-launch spread, and the settings whose defaults differ between the two
(a difference of configuration, not of code)."""

from __future__ import annotations

import statistics

from mwperf.analysis.versions import config_differences, families, library
from mwperf.export.sections import Row, Section
from mwperf.model.labels import PointId, point_id
from mwperf.model.launches import spread
from mwperf.model.record import Record

__all__ = ["version_sections", "HEADERS"]

HEADERS = ["Point", "Old", "New", "p50 old (us)", "p50 new (us)", "p50 new/old", "p50 spread old / new",
           "Msg/s old", "Msg/s new", "Msg/s new/old", "Msg/s spread old / new", "Defaults that differ"]


def _median(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _rate_spread(records: list[Record]) -> float | None:
    """The launches' samples/s: standard deviation over mean (None with one launch)."""
    vals = [r.samples_per_s for r in records if r.samples_per_s is not None]
    mean = statistics.fmean(vals) if vals else 0.0
    return statistics.stdev(vals) / mean if len(vals) > 1 and mean > 0 else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"±{100 * value:.1f}%"


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(new: float | None, old: float | None) -> float | None:
    return None if new is None or not old else new / old


def _built(records: list[Record]) -> str:
    lib = library(records[0])
    return f"{records[0].mw} {lib[1]}" if lib else records[0].mw


def _by_point(records: list[Record]) -> dict[PointId, list[Record]]:
    out: dict[PointId, list[Record]] = {}
    for r in records:
        out.setdefault(point_id(r)._replace(mw=""), []).append(r)
    return out


def _row(key: PointId, a: list[Record], b: list[Record]) -> Row:
    pa, pb = _median([r.stat("p50") for r in a]), _median([r.stat("p50") for r in b])
    ta, tb = _median([r.samples_per_s for r in a]), _median([r.samples_per_s for r in b])
    sa, sb = spread(a), spread(b)
    differ = sorted({d for ra in a for rb in b for d in config_differences(ra, rb)})
    return Row([key.label.strip(), _built(a), _built(b), _num(pa), _num(pb), _num(_ratio(pb, pa), 2),
                f"{_pct(sa.between if sa else None)} / {_pct(sb.between if sb else None)}", _num(ta, 0), _num(tb, 0),
                _num(_ratio(tb, ta), 2), f"{_pct(_rate_spread(a))} / {_pct(_rate_spread(b))}",
                "; ".join(differ) or "none"])


def version_sections(records: list[Record]) -> list[Section]:
    """One table of every pair of consecutive builds (none when no middleware has two)."""
    ok = [r for r in records if r.ok and not r.imported and not r.peer_mw and r.search is None]
    section = Section("", "versions", "versions: each build of a middleware against the one before it, new/old "
                                      "(spread: between launches, sd / mean)", list(HEADERS), left=(0, 1, 2, 11))
    for builds in families(ok).values():
        for old_mw, new_mw in zip(builds, builds[1:]):
            old = _by_point([r for r in ok if r.mw == old_mw])
            new = _by_point([r for r in ok if r.mw == new_mw])
            section.rows += [_row(key, old[key], new[key]) for key in old if key in new]
    return [section] if section.rows else []
