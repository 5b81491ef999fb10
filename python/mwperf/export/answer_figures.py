"""The headline's figures: one per mode, every middleware on one axis (a
trace each, one colour each), the floor a black line, the legend beside the
plotting area (never over it). Their figures and intervals are the
rankings' (:mod:`mwperf.export.ranking`), so a figure and its table agree.

* ``answer-latency``: one-way p50 with its interval as bars, p99 dashed, vs
  size; the floor's p50;
* ``answer-throughput``: delivered Mbit/s (with its interval) and loss vs
  size; memcpy's Mbit/s as the floor;
* ``answer-rate``: p50 (with its interval) and loss vs publish rate, a column
  of panels per size; the floor's p50 at that size.
"""

from __future__ import annotations

from mwperf.export.figure_parts import Figure, log_switch, palette, plotly
from mwperf.export.floor import Anchors
from mwperf.export.ranking import Entry, Ranking, floor_value, size_text
from mwperf.model.headline import Headline
from mwperf.units import format_rate_hz

__all__ = ["answer_figures", "ANSWER_HEIGHT", "FLOOR_COLOUR"]

ANSWER_HEIGHT = 420
FLOOR_COLOUR = "#111111"
_TITLES = {"latency": "Latency vs message size, every middleware (p50 solid with its interval, p99 dashed; "
                      "one-way = RTT/2)",
           "throughput": "Throughput and loss vs message size, every middleware (throughput mode)",
           "rate": "Latency (p50, with its interval) and loss vs publish rate, every middleware (rate mode)"}


def _layout(fig, title: str, height: int = ANSWER_HEIGHT) -> None:
    """Title top left, the legend to the right of the plotting area (the log/linear buttons: :func:`_buttons`)."""
    fig.update_layout(title={"text": title, "x": 0, "xanchor": "left", "y": 1, "yanchor": "top", "yref": "container",
                             "pad": {"t": 10}, "font": {"size": 14}},
                      height=height, margin={"l": 64, "r": 10, "t": 56, "b": 48},
                      legend={"orientation": "v", "x": 1.01, "xanchor": "left", "y": 1, "yanchor": "top",
                              "groupclick": "togglegroup", "font": {"size": 10}, "tracegroupgap": 0},
                      hoverlabel={"namelength": -1}, font={"family": "Helvetica, Arial, sans-serif", "size": 12})


def _buttons(fig, axes: list[str]) -> None:
    """The log/linear buttons of ``axes``, top right, just above the plotting area."""
    log_switch(fig, log_y=True, axes=axes)
    fig.layout.updatemenus[0].update(y=1.0, yanchor="bottom", pad={"b": 4, "r": 0, "t": 0, "l": 0})


def _bars(figures: list[Headline]) -> dict:
    """Asymmetric error bars of the intervals (none where a point has none)."""
    return {"type": "data", "symmetric": False, "thickness": 1.2, "width": 3,
            "array": [None if h.high is None or h.value is None else h.high - h.value for h in figures],
            "arrayminus": [None if h.low is None or h.value is None else h.value - h.low for h in figures]}


def _series(ranked: list[Ranking], x_of) -> dict[str, list[tuple[float, Entry]]]:
    """Each series' entries (ok ones) along x, in the order of the rankings."""
    out: dict[str, list[tuple[float, Entry]]] = {}
    for ranking in ranked:
        for entry in ranking.entries:
            if entry.failed is None:
                out.setdefault(entry.label, []).append((x_of(ranking), entry))
    return {label: sorted(points, key=lambda p: p[0]) for label, points in out.items()}


def _scaled(h: Headline, scale: float) -> Headline:
    def times(v: float | None) -> float | None:
        return None if v is None else v * scale
    return Headline(times(h.value), times(h.low), times(h.high), h.kind, h.launches, h.about)


def _trace(go, label: str, colour: str, points: list[tuple[float, Entry]], metric: str, *, scale: float = 1.0,
           dash: str = "solid", bars: bool = True, show: bool = True, unit: str = "µs", what: str = "",
           ranked: bool = True):
    """One series' figure along x: its interval as bars (``bars``), the hover saying its place (``ranked``:
    the figure it is ranked on) and its interval, the customdata what the point is (the series, the figure,
    the size) for a reader of the page's data."""
    figures = [_scaled(e.figures[metric], scale) for _, e in points]
    custom = [[e.name, e.place, "none" if h.low is None or h.high is None else f"{h.low:.4g} to {h.high:.4g}",
               h.about, metric, e.launches[0].size] for (_, e), h in zip(points, figures)]
    place = " (#%{customdata[1]} here)" if ranked else ""
    return go.Scatter(
        x=[x for x, _ in points], y=[h.value for h in figures],
        name=label, legendgroup=label, showlegend=show, mode="lines+markers",
        line={"color": colour, "dash": dash, "width": 2 if dash == "solid" else 1.5},
        marker={"color": colour, "size": 7 if dash == "solid" else 5},
        error_y=_bars(figures) if bars else None, customdata=custom,
        hovertemplate=f"%{{customdata[0]}}<br>{what} %{{y:.4g}} {unit}{place}<br>interval %{{customdata[2]}}: "
                      "%{customdata[3]}<extra></extra>")


def _floor(go, xs: list[float], ys: list[float | None], name: str, unit: str, show: bool = True):
    return go.Scatter(x=xs, y=ys, name=name, legendgroup="floor", showlegend=show, mode="lines",
                      line={"color": FLOOR_COLOUR, "width": 2.5}, hovertemplate=f"{name}<br>%{{y:.4g}} {unit}"
                                                                                "<extra></extra>")


def _latency(ranked: list[Ranking], anchors: Anchors, colours: dict) -> Figure:
    go, _ = plotly()
    fig = go.Figure()
    for label, points in _series(ranked, lambda r: r.size).items():
        fig.add_trace(_trace(go, label, colours[label], points, "p50", what="p50"))
        fig.add_trace(_trace(go, label, colours[label], points, "p99", dash="dash", bars=False, show=False,
                             what="p99", ranked=False))
    floors = [(r.size, floor_value(anchors, r)) for r in ranked]
    if any(v is not None for _, v in floors):
        fig.add_trace(_floor(go, [s for s, _ in floors], [v for _, v in floors], "floor (p50)", "µs"))
    fig.update_xaxes(type="log", title_text="message size (bytes)")
    fig.update_yaxes(type="log", title_text="one-way latency (µs)")
    _layout(fig, _TITLES["latency"])
    _buttons(fig, ["yaxis"])
    return Figure("answer", "answer-latency", "Latency vs size, every middleware", fig)


def _throughput(ranked: list[Ranking], anchors: Anchors, colours: dict) -> Figure:
    go, make_subplots = plotly()
    fig = make_subplots(rows=1, cols=2, subplot_titles=["delivered Mbit/s", "lost % of sent"],
                        horizontal_spacing=0.08)
    for label, points in _series(ranked, lambda r: r.size).items():
        fig.add_trace(_trace(go, label, colours[label], points, "mbps", unit="Mbit/s", what="delivered"),
                      row=1, col=1)
        fig.add_trace(_trace(go, label, colours[label], points, "loss", scale=100, unit="% lost", what="",
                             show=False, ranked=False), row=1, col=2)
    floors = [(r.size, floor_value(anchors, r)) for r in ranked]
    if any(v is not None for _, v in floors):
        fig.add_trace(_floor(go, [s for s, _ in floors], [v for _, v in floors], "memcpy (floor)", "Mbit/s"),
                      row=1, col=1)
    fig.update_xaxes(type="log", title_text="message size (bytes)")
    fig.update_yaxes(type="log", title_text="Mbit/s delivered", row=1, col=1)
    fig.update_yaxes(title_text="lost (% of sent)", rangemode="tozero", row=1, col=2)
    _layout(fig, _TITLES["throughput"])
    _buttons(fig, ["yaxis"])
    return Figure("answer", "answer-throughput", "Throughput and loss vs size, every middleware", fig)


def _rate(ranked: list[Ranking], anchors: Anchors, colours: dict) -> Figure:
    go, make_subplots = plotly()
    sizes = sorted({r.size for r in ranked})
    fig = make_subplots(rows=2, cols=len(sizes), shared_xaxes="all", shared_yaxes="rows", vertical_spacing=0.1,
                        horizontal_spacing=0.04, row_heights=[0.62, 0.38],
                        subplot_titles=[size_text(s) for s in sizes] + [""] * len(sizes))
    shown = set()
    for col, size in enumerate(sizes, 1):
        at = [r for r in ranked if r.size == size]
        for label, points in _series(at, lambda r: r.rate_hz or 0).items():
            fig.add_trace(_trace(go, label, colours[label], points, "p50", what="p50", show=label not in shown,
                                 ranked=False), row=1, col=col)
            fig.add_trace(_trace(go, label, colours[label], points, "loss", scale=100, unit="% lost", what="",
                                 show=False, ranked=False), row=2, col=col)
            shown.add(label)
        floor = floor_value(anchors, at[0])
        if floor is not None:
            rates = [r.rate_hz or 0 for r in at]
            fig.add_trace(_floor(go, [min(rates), max(rates)], [floor, floor], "floor (p50)", "µs",
                                 show="floor" not in shown), row=1, col=col)
            shown.add("floor")
    fig.update_xaxes(type="log", tickvals=sorted({r.rate_hz for r in ranked if r.rate_hz}),
                     ticktext=[format_rate_hz(v) for v in sorted({r.rate_hz for r in ranked if r.rate_hz})])
    for col in range(1, len(sizes) + 1):
        fig.update_xaxes(title_text="publish rate (Hz)", row=2, col=col)
    fig.update_yaxes(type="log", row=1)
    fig.update_yaxes(title_text="one-way p50 (µs)", row=1, col=1)
    fig.update_yaxes(title_text="lost %", rangemode="tozero", row=2, col=1)
    fig.update_annotations(font_size=12)
    _layout(fig, _TITLES["rate"], height=ANSWER_HEIGHT + 80)
    _buttons(fig, [f"yaxis{'' if col == 1 else col}" for col in range(1, len(sizes) + 1)])
    return Figure("answer", "answer-rate", "Latency and loss vs publish rate, every middleware", fig)


_MAKERS = {"latency": _latency, "throughput": _throughput, "rate": _rate}


def answer_figures(ranked: list[Ranking], anchors: Anchors | None = None) -> list[Figure]:
    """One figure per mode of the rankings (:func:`mwperf.export.ranking.rankings`: latency, throughput, rate)."""
    anchors = anchors or Anchors()
    by_mode: dict[str, list[Ranking]] = {}
    for ranking in ranked:
        by_mode.setdefault(ranking.mode, []).append(ranking)
    colours = palette(list(dict.fromkeys(e.label for r in ranked for e in r.entries)))
    return [_MAKERS[mode](of_mode, anchors, colours) for mode, of_mode in by_mode.items()]
