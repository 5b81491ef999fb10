"""The headline as the terminal shows it at the end of a run: one screen of at most 100 columns
that still answers "which one for me" for every middleware of the run.

The rankings are :func:`mwperf.export.ranking.rankings`' (the report's and ``--verbose``'s wide
tables are :func:`mwperf.export.ranking.headline_sections`); here each mode (a rate mode: each
publish rate) is a group of columns, one per size, and groups share a table side by side while
it fits in :data:`WIDTH` columns, as many tables as :data:`LINES` lines hold: a row per
middleware (in the order of its median place), its figures in short form (``19.4/511``: p50/p99
µs; ``82k 1.1%``: Mbit/s and lost; ``76.9 0%``: p50 µs and the share of the samples due not
delivered), its place and mark (``3≈``: not told apart from another middleware there; ``3?``:
not known, no interval), the floor's row last. One legend line first, for every table; the
groups that do not fit are named on a line of their own (the report has them), and the first
failures' reasons.
"""

from __future__ import annotations

import dataclasses
import re
import statistics
from dataclasses import dataclass, field

from mwperf.display import printable
from mwperf.export.floor import Anchors
from mwperf.export.ranking import Entry, Ranking, floor_value, rankings, size_text
from mwperf.export.terminal import table_text
from mwperf.model.record import Record
from mwperf.units import format_rate_hz

__all__ = ["WIDTH", "LINES", "compact_headline", "short", "lost"]

#: The widest line of the headline, in columns (a terminal of 100 columns shows it unwrapped).
WIDTH = 100
#: The lines the tables may take (blank lines between them included), the first table always shown: the
#: groups beyond are named, not shown. The quick plan's two tables of 14 middlewares take 35; the screen's
#: other lines are the legend, the warnings, where the report is.
LINES = 36
#: Failure reasons shown under the tables at most (the report has them all).
REASONS = 3

LEGEND = "headline: µs one-way; lost: % not received (rate: of due); 3≈: 3rd, not told apart; 3?: no interval"
_FLOOR = {"latency": "p50", "throughput": "mbps", "rate": "p50"}


@dataclass
class _Group:
    """One mode (rate: one publish rate) as columns, one per size."""

    title: str
    rankings: list[Ranking] = field(default_factory=list)


def short(value: float | None) -> str:
    """A figure in four characters at most: 2.40, 19.4, 511, 3.2k, 82k, 1.2M."""
    if value is None:
        return "-"
    if abs(value) < 9.995:
        return f"{value:.2f}"
    if abs(value) < 99.95:
        return f"{value:.1f}"
    if abs(value) < 999.5:
        return f"{value:.0f}"
    for scale, unit in ((1e3, "k"), (1e6, "M"), (1e9, "G")):
        v = value / scale
        if abs(v) < 9.95:
            return f"{v:.1f}{unit}"
        if abs(v) < 999.5:
            return f"{v:.0f}{unit}"
    return f"{value:.1e}"


def lost(share: float | None) -> str:
    """A lost share: 0%, <.1%, 1.1%, 12%, >99%, 100%."""
    if share is None:
        return "-"
    pct = 100 * share
    if pct <= 0:
        return "0%"
    if pct < 0.05:
        return "<.1%"
    if pct < 9.95:
        return f"{pct:.1f}%"
    if pct < 99.5:
        return f"{pct:.0f}%"
    return "100%" if pct >= 100 else ">99%"


def _cell(mode: str, entry: Entry) -> str:
    if entry.failed is not None:
        return "FAILED"
    f = entry.figures
    if mode == "latency":
        text = f"{short(f['p50'].value)}/{short(f['p99'].value)}"
    elif mode == "throughput":
        text = f"{short(f['mbps'].value)} {lost(f['loss'].value)}"
    else:  # what the ranking is on: the share of the samples due delivered (a sender behind loses none)
        share = f["delivered"].value
        text = f"{short(f['p50'].value)} {lost(None if share is None else 1 - share)}"
    return f"{text} {entry.place}{'≈' if entry.same else '?' if entry.unknown else ''}"


def _groups(ranked: list[Ranking]) -> list[_Group]:
    """A group a mode, a rate mode's a publish rate (lowest first), in the rankings' order of modes."""
    groups: dict[tuple, _Group] = {}
    for r in ranked:
        if r.mode == "latency":
            title = "latency µs p50/p99"
        elif r.mode == "throughput":
            title = "throughput Mbit/s, lost"
        else:
            title = f"rate {format_rate_hz(r.rate_hz)} Hz: p50 µs, lost"
        groups.setdefault((r.mode, r.rate_hz), _Group(title)).rankings.append(r)
    modes = list(dict.fromkeys(mode for mode, _ in groups))
    return [groups[k] for k in sorted(groups, key=lambda k: (modes.index(k[0]), k[1] or 0.0))]


def _table(groups: list[_Group], anchors: Anchors, named: dict[str, str]) -> list[str]:
    """A group line (each group's title over its columns), the sizes, a row per middleware, the floor."""
    columns = [(g, r) for g in groups for r in g.rankings]
    rows: dict[str, dict[int, Entry]] = {}
    for i, (_, ranking) in enumerate(columns):
        for entry in ranking.entries:
            rows.setdefault(entry.label, {})[i] = entry
    order = sorted(rows, key=lambda label: (statistics.median(e.place for e in rows[label].values()), label))
    cells = [[named[label]] + [_cell(r.mode, rows[label][i]) if i in rows[label] else "-"
                               for i, (_, r) in enumerate(columns)] for label in order]
    floors = [floor_value(anchors, r) for _, r in columns]
    if any(v is not None for v in floors):
        cells.append(["floor"] + [short(v) for v in floors])
    text = table_text(["Middleware"] + [size_text(r.size) for _, r in columns], cells, left=(0,))
    header, rule, *body = text.splitlines()
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", rule)][1:]
    line, at = "", 0
    for g in groups:
        (start, _), (_, end) = spans[at], spans[at + len(g.rankings) - 1]
        at += len(g.rankings)
        title = f" {g.title} "
        start = max(start, len(line) + 1 if line else start)
        fill = max(end - start - len(title), 2)
        line = line.ljust(start) + "-" * (fill // 2) + title + "-" * (fill - fill // 2)
    return [line, header, *body]


LABEL = re.compile(r"^(\S+) \((.*)\)$")


def short_labels(labels: list[str]) -> dict[str, str]:
    """Each row's label without what every row of its middleware shares: a middleware in rows that differ
    (``fastdds (reliable, keep-last:10, listener, udp, security encrypt)`` beside ``fastdds (..., shm+udp)``)
    is named by what tells them apart (``fastdds udp encrypt``; ``security`` said by its level alone); a
    middleware whose short labels would meet keeps its full ones."""
    split: dict[str, tuple[str, list[str]]] = {}
    for label in labels:
        found = LABEL.match(label)
        split[label] = (found.group(1), found.group(2).split(", ")) if found else (label, [])
    by_mw: dict[str, list[str]] = {}
    for label, (mw, _) in split.items():
        by_mw.setdefault(mw, []).append(label)
    named: dict[str, str] = {}
    for mw, mine in by_mw.items():
        common = set.intersection(*(set(split[label][1]) for label in mine))
        short = {label: " ".join([mw, *(q.removeprefix("security ") for q in split[label][1]
                                        if q not in common)])
                 for label in mine}
        named.update(short if len(set(short.values())) == len(mine) else {label: label for label in mine})
    return named


def _width(lines: list[str]) -> int:
    return max(len(x) for x in lines)


def compact_headline(records: list[Record], anchors: Anchors | None = None, width: int = WIDTH) -> str:
    """The headline in at most ``width`` columns and :data:`TABLES` tables, the legend last."""
    anchors = anchors or Anchors()
    ranked = rankings(records, anchors)
    if not ranked:
        return ""
    named = short_labels(sorted({e.label for r in ranked for e in r.entries}))  # told apart across every table
    ranked, apart = _one_point_rows(ranked)
    tables: list[list[_Group]] = []
    for group in _groups(ranked):
        if tables and _width(_table(tables[-1] + [group], anchors, named)) <= width:
            tables[-1].append(group)
        else:
            tables.append([group])
    blocks: list[str] = []
    cut: list[str] = []
    left: list[_Group] = []
    used = -1  # the blank line before each table but the first
    for groups in tables:
        lines = _table(groups, anchors, named)
        if blocks and (left or used + 1 + len(lines) > LINES):
            left += groups
            continue
        while _width(lines) > width and len(groups[-1].rankings) > 1:  # a group alone too wide: its last sizes go
            last = groups[-1]
            cut.append(f"{last.title.split(':')[0]} at {size_text(last.rankings[-1].size)}")
            groups = groups[:-1] + [_Group(last.title, last.rankings[:-1])]
            lines = _table(groups, anchors, named)
        blocks.append("\n".join(lines))
        used += 1 + len(lines)
    lines = [LEGEND, "\n\n".join(blocks)]
    for ranking in apart:  # a side matrix's rows (the quick plan's secured points), on a line of their own
        lines += _wrap(f"also {ranking.mode} at {ranking.where}: "
                       + ", ".join(f"{named[e.label]} {_cell(ranking.mode, e)}" for e in ranking.entries), width)
    left_out = cut + [g.title.split(":")[0] for g in left]
    if left_out:
        lines.append(_fit(f"in the report, not here: {', '.join(left_out)}", width))
    failed = [(e, r) for r in ranked for e in r.entries if e.failed is not None]
    for entry, ranking in failed[:REASONS]:
        lines.append(_fit(f"{entry.label} {ranking.mode} at {ranking.where} FAILED: {entry.failed}", width))
    if len(failed) > REASONS:
        lines.append(f"... and {len(failed) - REASONS} more failed point(s): the report says why")
    return printable("\n".join(lines) + "\n")


def _one_point_rows(ranked: list[Ranking]) -> tuple[list[Ranking], list[Ranking]]:
    """The rankings without the rows of one point each when there are several columns (a side matrix's, e.g.
    the quick plan's secured points at 1 KiB), and those rows by ranking (their places kept)."""
    seen: dict[str, int] = {}
    for r in ranked:
        for e in r.entries:
            seen[e.label] = seen.get(e.label, 0) + 1
    if len(ranked) < 3:
        return ranked, []
    lone = {label for label, n in seen.items() if n == 1}
    kept = [dataclasses.replace(r, entries=[e for e in r.entries if e.label not in lone]) for r in ranked]
    apart = [dataclasses.replace(r, entries=[e for e in r.entries if e.label in lone]) for r in ranked]
    return [r for r in kept if r.entries], [r for r in apart if r.entries]


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of ``width`` at most, broken after commas, the next lines indented."""
    lines, line = [], ""
    for part in text.split(", "):
        piece = part if not line else f"{line}, {part}"
        if line and len(piece) > width:
            lines.append(line + ",")
            line = "  " + part
        else:
            line = piece
    return lines + [_fit(line, width)]


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."
