"""The report's "versions" section: for each middleware measured in two builds
or more (:func:`mwperf.analysis.versions.families`), each build against the one
before it, point by point: p50 latency and throughput new/old with each side's
launch-to-launch spread, and the settings whose defaults differ between the two
(a difference of configuration, not of code)."""

from __future__ import annotations

import statistics

from mwperf.analysis.compare import point_label
from mwperf.analysis.versions import config_differences, families, library, version_key
from mwperf.export.sections import Row, Section
from mwperf.results.launches import spread

__all__ = ["version_sections", "version_rows", "HEADERS"]

HEADERS = ["Point", "Old", "New", "p50 old (us)", "p50 new (us)", "p50 new/old", "p50 spread old / new",
           "Msg/s old", "Msg/s new", "Msg/s new/old", "Msg/s spread old / new", "Defaults that differ"]


def _median(values: list) -> float | None:
    vals = [v for v in values if isinstance(v, (int, float))]
    return statistics.median(vals) if vals else None


def _rate_spread(records: list[dict]) -> float | None:
    """The launches' samples/s: standard deviation over mean (None with one launch)."""
    vals = [r["samples_per_s"] for r in records if isinstance(r.get("samples_per_s"), (int, float))]
    return statistics.stdev(vals) / statistics.fmean(vals) if len(vals) > 1 and statistics.fmean(vals) > 0 else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"±{100 * value:.1f}%"


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(new: float | None, old: float | None) -> float | None:
    return None if new is None or not old else new / old


def version_rows(old: list[dict], new: list[dict]) -> list[tuple[tuple, list[dict], list[dict]]]:
    """The points both builds measured: (version key, old's launches, new's launches)."""
    by_old: dict[tuple, list[dict]] = {}
    by_new: dict[tuple, list[dict]] = {}
    for r in old:
        by_old.setdefault(version_key(r), []).append(r)
    for r in new:
        by_new.setdefault(version_key(r), []).append(r)
    return [(k, by_old[k], by_new[k]) for k in by_old if k in by_new]


def _built(records: list[dict]) -> str:
    lib = library(records[0])
    return f"{records[0]['mw']} {lib[1]}" if lib else records[0]["mw"]


def version_sections(records: list[dict]) -> list[Section]:
    """One table of every pair of consecutive builds (none when no middleware has two)."""
    ok = [r for r in records if r.get("status") == "ok" and r.get("source") is None and not r.get("peer_mw")
          and r.get("search") is None]
    section = Section("", "versions", "versions: each build of a middleware against the one before it, new/old "
                                      "(spread: between launches, sd / mean)", list(HEADERS), left=(0, 1, 2, 11))
    for builds in families(ok).values():
        for old_mw, new_mw in zip(builds, builds[1:]):
            old = [r for r in ok if r["mw"] == old_mw]
            new = [r for r in ok if r["mw"] == new_mw]
            for key, a, b in version_rows(old, new):
                pa, pb = _median([(r.get("latency_us") or {}).get("p50") for r in a]), \
                    _median([(r.get("latency_us") or {}).get("p50") for r in b])
                ta, tb = _median([r.get("samples_per_s") for r in a]), _median([r.get("samples_per_s") for r in b])
                sa, sb = spread(a), spread(b)
                differ = sorted({d for ra in a for rb in b for d in config_differences(ra, rb)})
                section.rows.append(Row([
                    point_label(("", *key)).strip(), _built(a), _built(b), _num(pa), _num(pb), _num(_ratio(pb, pa), 2),
                    f"{_pct(sa and sa['between'])} / {_pct(sb and sb['between'])}", _num(ta, 0), _num(tb, 0),
                    _num(_ratio(tb, ta), 2), f"{_pct(_rate_spread(a))} / {_pct(_rate_spread(b))}",
                    "; ".join(differ) or "none"]))
    return [section] if section.rows else []
