"""The cross-vendor matrix: a publisher of one RTPS middleware against the
subscriber (and the echo) of another (``peer_mw``), one row per publisher,
one column per subscriber, for p50 latency and loss: as two tables in the
:class:`~mwperf.export.sections.Section` form (text, Markdown, HTML) and as
one heatmap figure per matrix (report.html, ``interop`` section). The
diagonal is the points of one middleware on both sides measured alongside
(same mode, size, rate, QoS, transport, security level and placement): a
secured cell (``--security``) meets only its level's. A matrix appears only
for points with a cross-vendor cell; a failed cell says so (its reason is in
the result tables); repetitions are shown as their median."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable

from mwperf.export.figure_parts import Figure, layout, plotly
from mwperf.export.sections import Row, Section
from mwperf.model.record import Record
from mwperf.units import format_rate_hz, format_size

__all__ = ["interop", "interop_figures", "matrices", "Matrix"]


@dataclass
class Matrix:
    """One group of points: its publishers x subscribers (``names``, both ways) and their records."""

    mode: str
    title: str  # what the group holds constant: mode, size, rate
    qos: str
    names: list[str]
    cells: dict[tuple[str, str], list[Record]]

    def value(self, pub: str, sub: str, of: Callable[[Record], float | None]) -> float | None | str:
        """The median of ``of`` over the pair's ok records; "failed" when all failed; None when not measured."""
        records = self.cells.get((pub, sub), [])
        ok = [v for r in records if r.ok and (v := of(r)) is not None]
        if ok:
            return statistics.median(ok)
        return "failed" if records else None


def _group(r: Record) -> tuple:
    """What a matrix holds constant (not the receive path: each side takes its middleware's own)."""
    security = r.qos("security")
    return (r.mode, r.size, r.rate_hz or 0, r.reliability, r.qos("history"), r.qos("durability"), r.transport,
            None if security in (None, "none") else f"security {security}", r.cpu.pub, r.cpu.sub, r.wait,
            r.subscribers)


def matrices(records: list[Record]) -> list[Matrix]:
    """Every group of points holding a cross-vendor one, as a matrix."""
    groups: dict[tuple, dict[tuple[str, str], list[Record]]] = {}
    for r in records:
        if not r.imported:
            groups.setdefault(_group(r), {}).setdefault((r.mw, r.peer_mw or r.mw), []).append(r)
    out = []
    for group in sorted(groups, key=str):
        cells = groups[group]
        if all(pub == sub for pub, sub in cells):
            continue
        # the diagonal only where its middleware also meets another (not every other point of the run)
        names = sorted({n for pair in cells for n in pair if any(p != s and n in (p, s) for p, s in cells)})
        mode, size, rate = group[0], group[1], group[2]
        title = f"{mode}, {format_size(size)}" + (f", {format_rate_hz(rate)} Hz" if rate else "")
        out.append(Matrix(mode, title, ", ".join(str(v) for v in group[3:8] if v), names, cells))
    return out


def _loss_pct(r: Record) -> float | None:
    return None if r.loss_rate is None else 100.0 * r.loss_rate


def _measures(mode: str) -> tuple[tuple[str, Callable[[Record], float | None]], ...]:
    what = {"latency": "RTT/2", "rate": "one-way"}.get(mode, "the publisher's pings' RTT/2")
    return ((f"p50 latency (us, {what})", lambda r: r.stat("p50")), ("lost (%)", _loss_pct))


def _shown(value: float | None | str) -> str:
    return "-" if value is None else value if isinstance(value, str) else f"{value:.1f}"


def interop(records: list[Record]) -> list[Section]:
    """p50 (us) and loss (%) tables, publisher x subscriber, for every matrix."""
    sections: list[Section] = []
    for m in matrices(records):
        echo = " and echo" if m.mode == "latency" else ""
        for title, of in _measures(m.mode):
            section = Section("interop", m.mode, f"Cross-vendor {title}: {m.title} ({m.qos}); rows publish, "
                                                 f"columns subscribe{echo} (each on its own receive path)",
                              ["pub \\ sub", *m.names], qos=m.qos, left=(0,))
            for pub in m.names:
                section.rows.append(Row([pub, *(_shown(m.value(pub, sub, of)) for sub in m.names)]))
            sections.append(section)
    return sections


def interop_figures(records: list[Record]) -> list[Figure]:
    """One figure per matrix: p50 and loss side by side as heatmaps (a failed pair blank, named in its hover)."""
    go, make_subplots = plotly()

    out = []
    for i, m in enumerate(matrices(records)):
        measures = _measures(m.mode)
        fig = make_subplots(rows=1, cols=2, subplot_titles=[title for title, _ in measures], horizontal_spacing=0.15)
        for col, ((title, of), scale) in enumerate(zip(measures, ("Blues", "Reds")), start=1):
            values = [[m.value(pub, sub, of) for sub in m.names] for pub in m.names]
            z = [[v if isinstance(v, float) else None for v in row] for row in values]
            text = [[_shown(v) for v in row] for row in values]
            fig.add_trace(go.Heatmap(x=m.names, y=m.names, z=z, text=text, texttemplate="%{text}", colorscale=scale,
                                     showscale=False, xgap=1, ygap=1, name=title,
                                     hovertemplate="%{y} -> %{x}<br>" + title + ": %{text}<extra></extra>"),
                          row=1, col=col)
        fig.update_xaxes(type="category", title_text="subscriber")
        fig.update_yaxes(type="category", title_text="publisher", autorange="reversed")
        layout(fig, f"Cross-vendor: {m.title} ({m.qos}); rows publish, columns subscribe")
        out.append(Figure("interop", f"interop-{i}", f"Cross-vendor matrix {m.title}", fig))
    return out
