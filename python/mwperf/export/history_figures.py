"""The report's history: one small multiple per point (series of
:mod:`mwperf.analysis.history`), its p50 (solid) and p99 (dotted) over the
stored runs, change points marked; hover a run for its values and
provenance (run, host, kernel, mwperf and agent, the middleware's version,
the link). Drawn only for points with two runs or more."""

from __future__ import annotations

import math

from mwperf.export.figure_parts import grid, log_switch, panel, plotly
from mwperf.export.figures import Figure

__all__ = ["history_figures", "HISTORY_SECTION", "MAX_PANELS"]

HISTORY_SECTION = ("history", "History: each point over the stored runs, change points marked")
#: Panels in the figure; points with change points first (mwperf history lists every one).
MAX_PANELS = 30


def _hover(run) -> str:
    p = run.provenance
    lines = [f"run {p.get('run') or '-'} ({(run.time or '-')[:19].replace('T', ' ')})",
             f"host {p.get('host') or '-'}, kernel {p.get('kernel') or '-'}",
             f"mwperf {p.get('mwperf') or '-'}, agent {p.get('agent') or '-'}, {p.get('adapter') or '-'}"]
    if p.get("link"):
        lines.append(f"link {p['link']}")
    values = ", ".join(f"{k} {v:.4g}" for k, v in run.values.items() if v is not None)
    return "<br>".join(lines + [values])


def history_figures(series: list) -> list[Figure]:
    """The history figure of ``series`` (change points already found); none
    when no point has two runs."""
    go, _ = plotly()

    shown = [s for s in series if len(s.runs) >= 2]
    if not shown:
        return []
    shown.sort(key=lambda s: (not s.changes, s.label))
    more = len(shown) - MAX_PANELS
    shown = shown[:MAX_PANELS]
    title = "Each point over the stored runs: p50 (solid), p99 (dotted), change points (red)"
    if more > 0:
        title += f"; {more} more point(s): mwperf history"
    fig, cols = grid([f"{s.label} | {s.where}" for s in shown], title, "run", "latency (µs)",
                      log_x=False, log_y=True, shared_y=False)
    for i, s in enumerate(shown):
        xs = list(range(1, len(s.runs) + 1))
        hover = [_hover(run) for run in s.runs]
        for metric, dash, colour in (("p50", "solid", "#1f77b4"), ("p99", "dot", "#7f7f7f")):
            ys = [run.values[metric] for run in s.runs]
            if all(v is None for v in ys):
                continue
            fig.add_trace(go.Scatter(x=xs, y=ys, name=metric, legendgroup=metric, showlegend=i == 0,
                                     mode="lines+markers", line={"color": colour, "dash": dash, "width": 2},
                                     marker={"size": 6, "color": colour}, customdata=hover,
                                     hovertemplate=f"{metric} %{{y:.4g}} µs<br>%{{customdata}}<extra></extra>"),
                          **panel(i, cols))
        launched = [(k + 1, v) for k, run in enumerate(s.runs) if len(run.launches.get("p50", [])) > 1
                    for v in run.launches["p50"]]
        if launched:  # a run's launches, one value each, about their median
            fig.add_trace(go.Scatter(x=[x for x, _ in launched], y=[v for _, v in launched], name="p50 of a launch",
                                     legendgroup="launch", showlegend=i == 0, mode="markers",
                                     marker={"size": 4, "color": "#1f77b4", "opacity": 0.45},
                                     hovertemplate="a launch's p50 %{y:.4g} µs<extra></extra>"), **panel(i, cols))
        marks: dict[int, list[str]] = {}
        for change in s.changes:
            marks.setdefault(change.index, []).append(change.text())
        if marks:
            at = sorted(marks)
            fig.add_trace(go.Scatter(x=[k + 1 for k in at], y=[s.runs[k].values["p50"] for k in at],
                                     name="change point", legendgroup="change", showlegend=False,
                                     mode="markers", marker={"symbol": "x", "size": 13, "color": "#d62728"},
                                     customdata=["<br>".join(marks[k]) + "<br>" + hover[k] for k in at],
                                     hovertemplate="change point<br>%{customdata}<extra></extra>"), **panel(i, cols))
    longest = max(len(s.runs) for s in shown)
    fig.update_xaxes(tick0=1, dtick=max(1, math.ceil(longest / 12)))  # runs are whole numbers
    log_switch(fig, log_y=True)
    return [Figure("history", "history", "History of each point", fig)]
