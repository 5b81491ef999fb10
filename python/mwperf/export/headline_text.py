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


def _table(groups: list[_Group], anchors: Anchors) -> list[str]:
    """A group line (each group's title over its columns), the sizes, a row per middleware, the floor."""
    columns = [(g, r) for g in groups for r in g.rankings]
    rows: dict[str, dict[int, Entry]] = {}
    for i, (_, ranking) in enumerate(columns):
        for entry in ranking.entries:
            rows.setdefault(entry.label, {})[i] = entry
    order = sorted(rows, key=lambda label: (statistics.median(e.place for e in rows[label].values()), label))
    cells = [[label] + [_cell(r.mode, rows[label][i]) if i in rows[label] else "-"
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


def _width(lines: list[str]) -> int:
    return max(len(x) for x in lines)


def compact_headline(records: list[Record], anchors: Anchors | None = None, width: int = WIDTH) -> str:
    """The headline in at most ``width`` columns and :data:`TABLES` tables, the legend last."""
    anchors = anchors or Anchors()
    ranked = rankings(records, anchors)
    if not ranked:
        return ""
    tables: list[list[_Group]] = []
    for group in _groups(ranked):
        if tables and _width(_table(tables[-1] + [group], anchors)) <= width:
            tables[-1].append(group)
        else:
            tables.append([group])
    blocks: list[str] = []
    cut: list[str] = []
    left: list[_Group] = []
    used = -1  # the blank line before each table but the first
    for groups in tables:
        lines = _table(groups, anchors)
        if blocks and (left or used + 1 + len(lines) > LINES):
            left += groups
            continue
        while _width(lines) > width and len(groups[-1].rankings) > 1:  # a group alone too wide: its last sizes go
            last = groups[-1]
            cut.append(f"{last.title.split(':')[0]} at {size_text(last.rankings[-1].size)}")
            groups = groups[:-1] + [_Group(last.title, last.rankings[:-1])]
            lines = _table(groups, anchors)
        blocks.append("\n".join(lines))
        used += 1 + len(lines)
    lines = [LEGEND, "\n\n".join(blocks)]
    left_out = cut + [g.title.split(":")[0] for g in left]
    if left_out:
        lines.append(_fit(f"in the report, not here: {', '.join(left_out)}", width))
    failed = [(e, r) for r in ranked for e in r.entries if e.failed is not None]
    for entry, ranking in failed[:REASONS]:
        lines.append(_fit(f"{entry.label} {ranking.mode} at {ranking.where} FAILED: {entry.failed}", width))
    if len(failed) > REASONS:
        lines.append(f"... and {len(failed) - REASONS} more failed point(s): the report says why")
    return printable("\n".join(lines) + "\n")


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 3] + "..."
