"""The headline: what a run answers first. Per mode and size (and publish
rate), the middlewares ranked on the mode's headline figure, each with its
interval, the places it cannot be told from on this machine and its ratio
to the floor:

* latency mode: on the one-way p50 (lowest first), the p99 beside it;
* throughput mode: on the delivered Mbit/s (highest first), the loss beside it;
* rate mode: on the share of the offered samples delivered (highest first; equal
  shares in the order of their p50: not told apart where neither tells them
  apart), the loss, p50 and p99 beside it.

Every figure and interval comes from :func:`mwperf.model.headline.headline`
(one point's launches), and "cannot be told from" is
:func:`mwperf.model.headline.indistinguishable`. The report shows each
ranking as a table (:mod:`mwperf.export.answer`); the terminal and Markdown one
table per mode (:func:`headline_sections`), a column per size.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Iterable

from mwperf.export.figure_parts import series_name
from mwperf.export.floor import PCT_MEMCPY, X_FLOOR, Anchors
from mwperf.export.sections import Row, Section
from mwperf.model.headline import METRICS, Headline, headline, indistinguishable
from mwperf.model.labels import point_id
from mwperf.model.record import Record
from mwperf.units import format_rate_hz, format_size

__all__ = ["RANKED", "ANCHOR", "Entry", "Ranking", "ranked", "rankings", "labels", "size_text", "headline_sections",
           "places_text", "shown", "floor_value"]

#: Per mode: the figure ranked on, then the figures shown beside it.
RANKED: dict[str, tuple[str, ...]] = {"latency": ("p50", "p99"), "throughput": ("mbps", "loss"),
                                      "rate": ("delivered", "loss", "p50", "p99")}
#: Per mode: the figures the order is of (rate: equal shares delivered in the order of their p50), the ones two
#: middlewares must not be told apart on to be "not told apart".
ORDER: dict[str, tuple[str, ...]] = {"latency": ("p50",), "throughput": ("mbps",), "rate": ("delivered", "p50")}
#: The anchor each mode's ratio to the floor is of.
ANCHOR = {"latency": X_FLOOR, "throughput": PCT_MEMCPY, "rate": X_FLOOR}


@dataclass
class Entry:
    """One middleware (and QoS) at one place of a ranking."""

    name: str  # the series (middleware and QoS, as the figures name it)
    label: str  # as shown: the middleware alone where that says which
    launches: list[Record]
    figures: dict[str, Headline]
    place: int = 0
    same: tuple[int, ...] = ()  # the places it cannot be told from
    unknown: tuple[int, ...] = ()  # the places it is not known against (an interval missing)
    floor: str | None = None  # its ratio to the floor, as shown
    failed: str | None = None


@dataclass
class Ranking:
    mode: str
    size: int
    rate_hz: float | None
    entries: list[Entry] = field(default_factory=list)

    @property
    def where(self) -> str:
        """``1 KiB`` or ``1 KiB at 100 Hz``."""
        return size_text(self.size) + ("" if self.rate_hz is None else f" at {format_rate_hz(self.rate_hz)} Hz")


def size_text(size: int) -> str:
    """``32 B``, ``1KiB``, ``63000 B``."""
    text = format_size(size)
    return text if text[-1].isalpha() else f"{text} B"


def labels(records: Iterable[Record]) -> dict[str, str]:
    """Each series' label: its middleware where no other series of the records has it, else the series."""
    names: dict[str, set[str]] = {}
    for r in records:
        names.setdefault(r.pair_name, set()).add(series_name(r))
    return {name: (mw if len(series) == 1 else name) for mw, series in names.items() for name in series}


def _order(mode: str, entry: Entry) -> tuple:
    """Best first: a failed point last, a missing figure before it, equal figures by the next figure."""
    figures = [entry.figures[m].value for m in ORDER[mode]]
    keys = []
    for metric, value in zip(ORDER[mode], figures):
        more_is_better = METRICS[metric][1]
        keys.append((value is None, 0.0 if value is None else -value if more_is_better else value))
    return (entry.failed is not None, *keys, entry.label)


def _told(mode: str, a: Entry, b: Entry) -> bool | None:
    """Whether two entries cannot be told apart on the figures of the order: on none of them told apart and
    on each not told apart (True), told apart on one (False), or not known (None)."""
    judged = [indistinguishable(a.figures[m], b.figures[m]) for m in ORDER[mode]]
    return False if False in judged else True if all(judged) else None


def _places(mode: str, entry: Entry, others: list[Entry]) -> None:
    judged = [_told(mode, entry, o) for o in others]
    entry.same = tuple(o.place for o, j in zip(others, judged) if j)
    entry.unknown = tuple(o.place for o, j in zip(others, judged) if j is None)


def ranked(record: Record) -> bool:
    """Whether the headline ranks the record's point: a point of its own (not a scenario's flow, not a
    search's probe) in latency, throughput or rate mode."""
    return record.mode in RANKED and record.scenario is None and record.search is None


def rankings(records: Iterable[Record], anchors: Anchors | None = None) -> list[Ranking]:
    """Every ranking the records hold, by mode (latency, throughput, rate), size and rate."""
    anchors = anchors or Anchors()
    records = [r for r in records if ranked(r)]
    names = labels(records)
    points: dict[tuple, dict[tuple, list[Record]]] = {}
    for r in records:
        place = (r.mode, r.size, r.rate_hz if r.mode == "rate" else None)
        points.setdefault(place, {}).setdefault((point_id(r), r.placement), []).append(r)
    placements = len({r.placement for r in records})
    out = []
    for (mode, size, rate), by_point in sorted(points.items(), key=lambda kv: (list(RANKED).index(kv[0][0]),
                                                                              kv[0][1], kv[0][2] or 0)):
        ranking = Ranking(mode, size, rate)
        for launches in by_point.values():
            first = launches[0]
            name = series_name(first)
            label = names[name] + (f" ({first.cpu.placement}, wait {first.wait})" if placements > 1 else "")
            ok = [r for r in launches if r.ok]
            entry = Entry(name, label, launches, {m: headline(launches, m) for m in RANKED[mode]},
                          failed=None if ok else " ".join(str(first.error or "unknown error").split()))
            if ok:
                entry.floor = anchors.ratio(ok[0], ANCHOR[mode], entry.figures["p50" if ANCHOR[mode] == X_FLOOR
                                                                                else "mbps"].value)
            ranking.entries.append(entry)
        ranking.entries.sort(key=lambda e: _order(mode, e))
        for at, entry in enumerate(ranking.entries, 1):
            entry.place = at
        for entry in ranking.entries:
            others = [o for o in ranking.entries if o is not entry and o.failed is None]
            if entry.failed is None:
                _places(mode, entry, others)
        out.append(ranking)
    return out


def places_text(places: tuple[int, ...]) -> str:
    """``2-4, 7``: places, runs of them as ranges."""
    runs: list[list[int]] = []
    for p in sorted(places):
        if runs and p == runs[-1][-1] + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    return ", ".join(f"{r[0]}" if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def shown(metric: str, value: float | None) -> str:
    """A headline figure as the tables show it: µs to 3 significant digits (a tenth at least), Mbit/s to
    a tenth, shares as %."""
    if value is None:
        return "-"
    if metric in ("delivered", "loss"):
        pct = 100 * value
        if pct >= 99.995 or pct == 0:
            return f"{pct:.0f}%"
        return f"{pct:.2f}%" if pct >= 99.95 or pct < 10 else f"{pct:.1f}%"
    if metric == "mbps" or value >= 100:
        return f"{value:.0f}" if value >= 1000 else f"{value:.1f}"
    return f"{value:.1f}" if value >= 10 else f"{value:.2f}"


def floor_value(anchors: Anchors, ranking: Ranking) -> float | None:
    """The floor at a ranking's size (its points' placement): the one-way p50 (µs), or memcpy's Mbit/s."""
    ok = [r for e in ranking.entries for r in e.launches if r.ok and not r.imported]
    if not ok:
        return None
    r = ok[0]
    where = (r.cpu.pub, r.cpu.sub, r.wait, r.size)
    if ranking.mode == "throughput":
        gbps = anchors.index.memcpy_gbps(*where)
        return None if gbps is None else gbps * 1000
    floor = anchors.index.latency(*where)
    return None if floor is None else floor[0]


_TITLES = {"latency": "latency, one-way p50 / p99 µs", "throughput": "throughput, Mbit/s delivered (lost %)",
           "rate": "rate, one-way p50 µs (delivered %, where not all)"}
_FLOOR_ROW = {"latency": "floor (p50)", "throughput": "memcpy (floor)", "rate": "floor (p50)"}


def _cell(mode: str, entry: Entry) -> str:
    if entry.failed is not None:
        return "FAILED"
    f = entry.figures
    mark = "≈" if entry.same else "?" if entry.unknown else ""
    if mode == "latency":
        text = f"{shown('p50', f['p50'].value)} / {shown('p99', f['p99'].value)}"
    elif mode == "throughput":
        text = f"{shown('mbps', f['mbps'].value)} ({shown('loss', f['loss'].value)})"
    else:
        share = f["delivered"].value
        text = shown("p50", f["p50"].value) + ("" if share is not None and share >= 1 else
                                                 f" ({shown('delivered', share)})")
    return f"{text} #{entry.place}{mark}"


def headline_sections(records: list[Record], anchors: Anchors | None = None) -> list[Section]:
    """The headline as one table per mode: a row per middleware (in the order of its median place), a
    column per size (and rate), each cell its figures and ``#place``, ``≈`` where it cannot be told from
    another middleware there, ``?`` where that is not known (no interval); the floor's row last."""
    anchors = anchors or Anchors()
    by_mode: dict[str, list[Ranking]] = {}
    for ranking in rankings(records, anchors):
        by_mode.setdefault(ranking.mode, []).append(ranking)
    sections = []
    for mode, ranked in by_mode.items():
        rows: dict[str, dict[int, Entry]] = {}
        for i, ranking in enumerate(ranked):
            for entry in ranking.entries:
                rows.setdefault(entry.label, {})[i] = entry
        order = sorted(rows, key=lambda label: (statistics.median(e.place for e in rows[label].values()), label))
        section = Section("", f"headline-{mode}", f"headline: {_TITLES[mode]} (#: place; ≈: not told apart; ?: "
                                                  "no interval)",
                          ["Middleware"] + [r.where for r in ranked], left=(0,))
        for label in order:
            failed = [f"at {ranked[i].where} FAILED: {e.failed}" for i, e in rows[label].items() if e.failed]
            section.rows.append(Row([label] + [_cell(mode, rows[label][i]) if i in rows[label] else "-"
                                               for i in range(len(ranked))], note="; ".join(failed) or None))
        floors = [floor_value(anchors, r) for r in ranked]
        if any(v is not None for v in floors):
            metric = "mbps" if mode == "throughput" else "p50"
            section.rows.append(Row([_FLOOR_ROW[mode]] + [shown(metric, v) for v in floors]))
        sections.append(section)
    return sections
