"""The parts every figure of the report is made of (:mod:`mwperf.export.figures`):
the :class:`Figure`, the series of a record, a grid of small multiples with
shared axes and a log/linear switch, one line of a panel, colours, and the
cells that pool repetitions of a point into their median."""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from mwperf.model.labels import qos_label
from mwperf.model.record import Record

__all__ = ["Figure", "series_name", "ok_records", "num", "Cell", "collect", "palette", "ramp", "wrap", "grid", "layout",
           "log_switch", "panel", "line", "plotly", "SIZE_HOVER", "WIDTH", "PANEL_HEIGHT", "TEMPLATE"]

#: Width of the figure files (the page's figures take the page's width).
WIDTH = 1100
PANEL_HEIGHT = 300
#: plotly's template of every figure
TEMPLATE = "plotly_white"


def plotly():
    """``(plotly.graph_objects, make_subplots)``, figures made on :data:`TEMPLATE`.

    The template is plotly's default, which a figure takes as it is made, unvalidated: a template named in
    ``update_layout`` is validated and copied for every figure (0.04 to 0.2 s each, most of a report's time).
    """
    import plotly.graph_objects as go
    import plotly.io as pio
    from plotly.subplots import make_subplots

    if pio.templates.default != TEMPLATE:  # setting it validates it again
        pio.templates.default = TEMPLATE
    return go, make_subplots


@dataclass
class Figure:
    section: str
    id: str
    title: str
    fig: Any  # plotly.graph_objects.Figure


def series_name(r: Record) -> str:
    """Middleware and what parts its points from others: QoS, transport, an
    imported table's title, the number of subscribers."""
    qos = qos_label(r)
    extra = [p for p in (qos, r.source_section) if p]
    if r.subscribers > 1:
        extra.append(f"{r.subscribers} subscribers")
    return f"{r.pair_name} ({'; '.join(extra)})" if extra else r.pair_name


def ok_records(records: Iterable[Record], mode: str) -> list[Record]:
    return [r for r in records if r.ok and r.mode == mode]


def num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


class Cell:
    """The points at one place of a figure: their median value, how many, their samples."""

    def __init__(self):
        self.values: list[float] = []
        self.counts: list[int] = []

    @property
    def value(self) -> float:
        return statistics.median(self.values)

    @property
    def count(self) -> int | None:
        return sum(self.counts) if self.counts else None

    @property
    def text(self) -> str:
        """The samples behind the value, for the hover: '12,345' or 'unknown' (imported tables)."""
        return "unknown" if self.count is None else f"{self.count:,}"


def collect(records: list[Record], key: Callable[[Record], tuple], value: Callable[[Record], float | None],
             count: Callable[[Record], float | None] = lambda r: None) -> dict[tuple, Cell]:
    cells: dict[tuple, Cell] = {}
    for r in records:
        v = value(r)
        if v is None or not num(v):
            continue
        cell = cells.setdefault(key(r), Cell())
        cell.values.append(float(v))
        c = count(r)
        if isinstance(c, int):
            cell.counts.append(c)
    return cells


#: Colours told apart beyond D3's ten (a run of every middleware has fourteen), none near black (the floor's).
MORE_COLOURS = ["#b68100", "#00a08b", "#750d86", "#fc0080", "#1616a7", "#6c7c32", "#a777f1", "#862a16"]


def palette(names: list) -> dict:
    from plotly.colors import qualitative

    colours = qualitative.D3 + MORE_COLOURS
    return {name: colours[i % len(colours)] for i, name in enumerate(names)}


def ramp(values: list) -> dict:
    """Ordered values (rates, sizes, percentiles) on a sequential scale."""
    from plotly.colors import sample_colorscale

    if len(values) == 1:
        return {values[0]: "#1f77b4"}
    spots = sample_colorscale("Viridis", [0.9 * i / (len(values) - 1) for i in range(len(values))])
    return dict(zip(values, spots))


def wrap(text: str, width: int = 48) -> str:
    """A panel title over lines of at most ``width`` characters (never cut)."""
    words, lines, line = text.split(" "), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    return "<br>".join(lines)


def grid(panels: list[str], title: str, x_title: str, y_title: str, *, log_x: bool, log_y: bool,
          shared_y: bool = True):
    """Small multiples: a panel per name, three to a row, shared axes."""
    _, make_subplots = plotly()
    cols = min(3, max(1, len(panels)))
    rows = math.ceil(len(panels) / cols)
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[wrap(p) for p in panels],
                        shared_xaxes="all", shared_yaxes="all" if shared_y else False,
                        horizontal_spacing=0.06, vertical_spacing=min(0.5 / rows, 0.16))
    fig.update_xaxes(type="log" if log_x else "linear", title_text=None)
    fig.update_yaxes(type="log" if log_y else "linear", title_text=None)
    for c in range(1, cols + 1):
        fig.update_xaxes(title_text=x_title, row=rows, col=c)
    for r_ in range(1, rows + 1):
        fig.update_yaxes(title_text=y_title, row=r_, col=1)
    fig.update_annotations(font_size=12)
    for empty in range(len(panels), rows * cols):  # the grid's cells past the last panel stay blank
        fig.update_xaxes(visible=False, row=empty // cols + 1, col=empty % cols + 1)
        fig.update_yaxes(visible=False, row=empty // cols + 1, col=empty % cols + 1)
    if len(panels) < rows * cols:  # the last row's x axis titles go under the panels that are there
        for c in range(len(panels) % cols + 1, cols + 1):
            fig.update_xaxes(title_text=None, row=rows, col=c)
        for c in range(len(panels) % cols + 1, cols + 1):
            fig.update_xaxes(title_text=x_title, showticklabels=True, row=rows - 1, col=c)
    layout(fig, title, rows)
    return fig, cols


def layout(fig, title: str, rows: int = 1) -> None:
    """Title top left, the log/linear buttons top right, the legend under the x axis title."""
    plot_px = PANEL_HEIGHT * rows
    fig.update_layout(title={"text": title, "x": 0, "xanchor": "left", "y": 1, "yanchor": "top", "yref": "container",
                             "pad": {"t": 12}},
                      height=plot_px + 250, margin={"l": 70, "r": 20, "t": 110, "b": 140},
                      legend={"orientation": "h", "y": -70 / plot_px, "yanchor": "top",
                              "x": 0, "groupclick": "togglegroup"},
                      hoverlabel={"namelength": -1}, font={"family": "Helvetica, Arial, sans-serif", "size": 12})


def log_switch(fig, log_y: bool, axes: list[str] | None = None) -> None:
    """Buttons above the figure: y axes on a log or a linear scale (``axes``, default: all panels')."""
    used = {getattr(t, "yaxis", None) or "y" for t in fig.data}
    axes = axes or sorted((f"yaxis{a[1:]}" for a in used), key=lambda a: int(a[5:] or 1)) or ["yaxis"]
    order = (("log", "log y"), ("linear", "linear y")) if log_y else (("linear", "linear y"), ("log", "log y"))
    fig.update_layout(updatemenus=[{
        "type": "buttons", "direction": "right", "x": 1, "xanchor": "right",
        "y": 1 + 50 / ((fig.layout.height or 550) - 250), "yanchor": "bottom", "showactive": True, "active": 0,
        "buttons": [{"label": label, "method": "relayout", "args": [{f"{a}.type": kind for a in axes}]}
                    for kind, label in order]}])


def panel(i: int, cols: int) -> dict:
    return {"row": i // cols + 1, "col": i % cols + 1}


SIZE_HOVER = "size %{x:,} B"


def line(x, y, name, colour, *, group, show, custom, hover, dash=None, symbol="circle"):
    go, _ = plotly()
    return go.Scatter(x=x, y=y, name=name, legendgroup=group, showlegend=show, mode="lines+markers",
                      line={"color": colour, "dash": dash or "solid", "width": 2},
                      marker={"color": colour, "size": 7, "symbol": symbol}, customdata=custom, hovertemplate=hover)
