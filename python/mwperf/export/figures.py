"""The report's figures, as Plotly figures made from a run's records; the
same definitions give the interactive page (report.html, plotly.js inline)
and the SVG/PNG files for documents (kaleido).

Every figure is small multiples where lines would pile up (one panel per
middleware and QoS, shared axes, one legend whose entries toggle the trace
in every panel), hovers the exact value with its sample count, zooms (drag;
double-click resets) and, where the values span decades, switches its y
axis between log and linear (the buttons above it). Repetitions of a point
are shown as their median, and the hover says how many there were.

The headline's figures, every middleware on one axis (throughput and loss
vs size among them), are :mod:`mwperf.export.answer_figures`. The detail
figures here (``section``, ``id``):

* latency mode (Perftest's): ``latency-size`` the percentiles vs size;
* rate mode (the reference sweep's): ``rate-delivered`` delivered / offered
  and the loop rate (sent / offered) vs rate, one colour per size;
  ``rate-latency-rate`` p50 (solid) and p99 (dotted) vs rate, one colour per
  size; ``rate-loss`` loss heatmap size x rate;
* burst mode: ``burst-demand`` samples/s vs demand per size,
  ``burst-latency`` first/last sample of a burst vs demand;
* fan-out: ``fanout`` latency and loss vs the number of subscribers;
* cross-vendor: ``interop-N`` p50 and loss heatmaps, publisher x subscriber
  (:mod:`mwperf.export.interop`);
* max-rate searches: ``max-rate-size`` the highest rate meeting the criterion vs size;
* resources: ``cpu``, ``cpu-per-msg`` (µs per sample delivered), ``memory``
  per middleware and side, ``threads`` CPU of
  mwperf's own threads vs the middleware's;
* one point: ``point-histogram``, ``point-time``.
"""

from __future__ import annotations

import math
import statistics
from functools import partial
from pathlib import Path
from typing import Callable

from mwperf.export.figure_parts import (
    SIZE_HOVER, WIDTH, Figure, collect, grid, layout, line, log_switch, num, ok_records, palette, panel, plotly, ramp,
    series_name,
)
from mwperf.export.interop import interop_figures
from mwperf.export.max_rate import max_rate_figures
from mwperf.model.headline import delivered
from mwperf.model.labels import qos_label
from mwperf.model.record import Record
from mwperf.results.rundir import read_samples
from mwperf.units import format_rate_hz, format_size

__all__ = ["Figure", "run_figures", "point_figures", "chosen_point", "series_name", "SECTIONS", "WIDTH"]

#: report sections, in page order: (id, heading)
SECTIONS = (("latency", "Latency percentiles vs message size, per middleware"),
            ("rate", "Publish-rate sweep: delivered / offered, latency and loss vs rate"),
            ("burst", "Bursts: samples/s and first/last-sample latency vs demand"),
            ("fanout", "Fan-out: latency and loss vs the number of subscribers"),
            ("interop", "Cross-vendor: p50 and loss, publisher x subscriber"),
            ("max-rate", "The highest publish rate meeting a criterion vs message size (mwperf max-rate)"),
            ("resources", "CPU and memory"),
            ("point", "One point: latency histogram and latency over time"))
MAX_TIME_POINTS = 2000
PERCENTILES = (("p50", "p50"), ("p90", "p90"), ("p99", "p99"), ("p9999", "p99.99"))
#: the samples a percentile needs (q needs n >= 1 / (1 - q)): below, it is not plotted
_NEEDS = {"p50": 2, "p90": 10, "p99": 100, "p9999": 10_000}


def _plotted(key: str, without_count: bool = False) -> Callable[[Record], float | None]:
    """A percentile of the latency where its samples support it (``without_count``: and where the count is
    not known, as in an imported table)."""
    def value(r: Record) -> float | None:
        count = r.stat("count")
        return r.stat(key) if (count or 0) >= _NEEDS[key] or (without_count and count is None) else None
    return value


def _stat_of(key: str, field: str) -> Callable[[Record], float | None]:
    return lambda r: r.stat(key, field)


def _latency(records: list[Record]) -> list[Figure]:
    lat = ok_records(records, "latency")
    if not lat:
        return []
    names = list(dict.fromkeys(series_name(r) for r in lat))
    colours = ramp([label for _, label in PERCENTILES])
    fig, cols = grid(names, "Latency percentiles vs message size (latency mode: one-way = RTT/2, as RTI Perftest)",
                      "message size (bytes)", "one-way latency (µs)", log_x=True, log_y=True)
    for key, label in PERCENTILES:
        cells = collect(lat, lambda r: (series_name(r), r.size),
                         _plotted(key, without_count=True), lambda r: r.stat("count"))
        shown = False
        for i, name in enumerate(names):
            xs = sorted(k[1] for k in cells if k[0] == name)
            if not xs:
                continue
            custom = [[cells[(name, x)].text, len(cells[(name, x)].values), name] for x in xs]
            fig.add_trace(line(xs, [cells[(name, x)].value for x in xs], label, colours[label], group=label,
                                show=not shown, custom=custom,
                                hover=f"%{{customdata[2]}}<br>{SIZE_HOVER}<br>{label} %{{y:.4g}} µs<br>"
                                      "%{customdata[0]} samples (%{customdata[1]} point(s))"), **panel(i, cols))
            shown = True
    log_switch(fig, log_y=True)
    return [Figure("latency", "latency-size", "Latency percentiles vs size", fig)]


def _per_size(fig, cols: int, rate: list[Record], names: list[str], sizes: list[int], lines: list[tuple]) -> None:
    """In each middleware's panel, a line per size of each of ``lines`` (its name, value, count, dash and
    the hover's tail) vs the publish rate, one colour per size."""
    colours = ramp(sizes)
    for key, value, count, dash, tail in lines:
        cells = collect(rate, lambda r: (series_name(r), r.size, r.rate_hz), value, count)
        for size in sizes:
            label = format_size(size)
            shown = False
            for i, name in enumerate(names):
                xs = sorted(k[2] for k in cells if k[0] == name and k[1] == size)
                if not xs:
                    continue
                fig.add_trace(line(xs, [cells[(name, size, x)].value for x in xs], f"{label} {key}", colours[size],
                                    group=label, show=not shown, dash=dash,
                                    custom=[[cells[(name, size, x)].text, len(cells[(name, size, x)].values),
                                             name] for x in xs],
                                    hover=f"%{{customdata[2]}}<br>{label}, %{{x:,}} Hz<br>{key} {tail}"),
                              **panel(i, cols))
                shown = True


def _rate(records: list[Record]) -> list[Figure]:
    go, _ = plotly()

    rate = [r for r in ok_records(records, "rate") if num(r.rate_hz)]
    if not rate:
        return []
    names = list(dict.fromkeys(series_name(r) for r in rate))
    rates = sorted({r.rate_hz for r in rate if r.rate_hz is not None})
    sizes = sorted({r.size for r in rate})
    out = []
    # what arrived of what was offered (solid) and what the publisher sent of it (dotted) vs rate, per size
    fig, cols = grid(names, "Delivered / offered (solid) and loop rate, sent / offered (dotted), vs publish rate, "
                             "one colour per size (rate mode)", "publish rate (Hz)", "share of the offered samples",
                      log_x=True, log_y=False)
    scheduled = "%{y:.4f}<br>of %{customdata[0]} scheduled (%{customdata[1]} point(s))"
    _per_size(fig, cols, rate, names, sizes, [("delivered", delivered, lambda r: r.scheduled, None, scheduled),
                                              ("loop rate", lambda r: r.loop_rate, lambda r: r.scheduled, "dot",
                                               scheduled)])
    out.append(Figure("rate", "rate-delivered", "Delivered and sent / offered vs rate per size", fig))
    # latency p50 (solid) and p99 (dotted) vs rate, one colour per size
    fig, cols = grid(names, "Latency p50 (solid) and p99 (dotted) vs publish rate, one colour per size "
                             "(rate mode: one-way from the intended send time)",
                      "publish rate (Hz)", "one-way latency (µs)", log_x=True, log_y=True)
    samples = "%{y:.4g} µs<br>%{customdata[0]} samples (%{customdata[1]} point(s))"
    _per_size(fig, cols, rate, names, sizes, [(key, _plotted(key), lambda r: r.stat("count"), dash, samples)
                                              for key, dash in (("p50", None), ("p99", "dot"))])
    log_switch(fig, log_y=True)
    out.append(Figure("rate", "rate-latency-rate", "Latency vs rate per size", fig))
    # loss heatmap, size x rate
    cells = collect(rate, lambda r: (series_name(r), r.size, r.rate_hz),
                     lambda r: None if r.loss_rate is None else 100 * r.loss_rate, lambda r: r.sent)
    top = max([c.value for c in cells.values()] + [1e-9])
    fig, cols = grid(names, "Loss (% of sent), message size x publish rate (rate mode)", "publish rate (Hz)",
                      "message size", log_x=False, log_y=False)
    labels_x = [format_rate_hz(hz) for hz in rates]
    labels_y = [format_size(s) for s in sizes]
    for i, name in enumerate(names):
        z, text, custom = [], [], []
        for size in sizes:
            row, trow, crow = [], [], []
            for hz in rates:
                cell = cells.get((name, size, hz))
                row.append(None if cell is None else cell.value)
                trow.append("" if cell is None else f"{cell.value:.2g}")
                crow.append([None if cell is None else cell.text, name])
            z.append(row)
            text.append(trow)
            custom.append(crow)
        fig.add_trace(go.Heatmap(x=labels_x, y=labels_y, z=z, text=text, texttemplate="%{text}", zmin=0, zmax=top,
                                 colorscale="Reds", showscale=i == 0, colorbar={"title": {"text": "lost %"}},
                                 customdata=custom, name=name, xgap=1, ygap=1,
                                 hovertemplate="%{customdata[1]}<br>%{y}, %{x} Hz<br>%{z:.4g} % lost<br>"
                                               "of %{customdata[0]} sent<extra></extra>"), **panel(i, cols))
    fig.update_xaxes(type="category")
    fig.update_yaxes(type="category")
    out.append(Figure("rate", "rate-loss", "Loss heatmap, size x rate", fig))
    return out


def _burst(records: list[Record]) -> list[Figure]:
    burst = [r for r in ok_records(records, "burst") if num(r.demand)]
    if not burst:
        return []
    names = list(dict.fromkeys(series_name(r) for r in burst))
    sizes = sorted({r.size for r in burst})
    colours = ramp(sizes)
    fig, cols = grid(names, "Samples/s received vs demand (samples a burst), one line per size (burst mode)",
                      "demand (samples a burst)", "samples/s received", log_x=True, log_y=False)
    cells = collect(burst, lambda r: (series_name(r), r.size, r.demand), lambda r: r.samples_per_s,
                     lambda r: r.received)
    for size in sizes:
        shown = False
        for i, name in enumerate(names):
            xs = sorted(k[2] for k in cells if k[0] == name and k[1] == size)
            if xs:
                label = format_size(size)
                fig.add_trace(line(xs, [cells[(name, size, x)].value for x in xs], label, colours[size], group=label,
                                    show=not shown,
                                    custom=[[cells[(name, size, x)].text, len(cells[(name, size, x)].values),
                                             name] for x in xs],
                                    hover=f"%{{customdata[2]}}<br>{label}, demand %{{x:,}}<br>%{{y:,.0f}} samples/s<br>"
                                          "%{customdata[0]} received (%{customdata[1]} point(s))"),
                              **panel(i, cols))
                shown = True
    log_switch(fig, log_y=False)
    out = [Figure("burst", "burst-demand", "Samples/s vs demand", fig)]
    fig, cols = grid(names, "Latency p50 of the first (dotted) and the last (solid) sample of a burst vs demand",
                      "demand (samples a burst)", "one-way latency (µs)", log_x=True, log_y=True)
    for field, word, dash in (("burst_last_us", "last", None), ("burst_first_us", "first", "dot")):
        cells = collect(burst, lambda r: (series_name(r), r.size, r.demand), _stat_of("p50", field),
                         _stat_of("count", field))
        for size in sizes:
            shown = False
            label = format_size(size)
            for i, name in enumerate(names):
                xs = sorted(k[2] for k in cells if k[0] == name and k[1] == size)
                if xs:
                    fig.add_trace(line(xs, [cells[(name, size, x)].value for x in xs], f"{label} {word}",
                                        colours[size], group=label, show=not shown, dash=dash,
                                        custom=[[cells[(name, size, x)].text, name] for x in xs],
                                        hover=f"%{{customdata[1]}}<br>{label}, demand %{{x:,}}<br>{word} sample p50 "
                                              "%{y:.4g} µs<br>%{customdata[0]} bursts"), **panel(i, cols))
                    shown = True
    if any(fig.data):
        log_switch(fig, log_y=True)
        out.append(Figure("burst", "burst-latency", "First/last sample of a burst", fig))
    return out


def _fan_value(r: Record, field: str, which: str) -> float | None:
    spread = None if r.fanout is None else r.fanout.figure(field)
    if spread is not None:
        return spread.median if which == "median" else spread.worst
    return {"latency_p50_us": r.stat("p50"), "latency_p99_us": r.stat("p99"), "loss_rate": r.loss_rate}[field]


def _fan_scaled(field: str, which: str, scale: float) -> Callable[[Record], float | None]:
    def value(r: Record) -> float | None:
        v = _fan_value(r, field, which)
        return None if v is None else scale * v
    return value


def _fanout(records: list[Record]) -> list[Figure]:
    _, make_subplots = plotly()

    ok = [r for r in records if r.ok]

    def key(r):
        where = f"{r.mode} {format_size(r.size)}" + (f" {format_rate_hz(r.rate_hz)} Hz"
                                                           if r.rate_hz else "")
        qos = qos_label(r)
        return f"{r.mw} {where}{f' ({qos})' if qos else ''}"

    groups: dict[str, list[Record]] = {}
    for r in ok:
        # subscribers as threads are a line of their own; one subscriber starts both lines
        if r.subscribers > 1:
            names = [key(r) + (" as threads" if r.subscribers_as == "threads" else "")]
        else:
            names = [key(r), key(r) + " as threads"]
        for name in names:
            groups.setdefault(name, []).append(r)
    groups = {k: v for k, v in groups.items() if len({r.subscribers for r in v}) > 1}
    if not groups:
        return []
    colours = palette(list(groups))
    fig = make_subplots(rows=1, cols=3, subplot_titles=["latency p50 (µs)", "latency p99 (µs)", "lost %"],
                        horizontal_spacing=0.07)
    for name, members in groups.items():
        for col, field, scale in ((1, "latency_p50_us", 1), (2, "latency_p99_us", 1), (3, "loss_rate", 100)):
            for which, dash in (("median", None), ("worst", "dash")):
                cells = collect(members, lambda r: (r.subscribers,), _fan_scaled(field, which, scale))
                xs = sorted(k[0] for k in cells)
                if not xs:
                    continue
                fig.add_trace(line(xs, [cells[(x,)].value for x in xs], f"{name} {which}", colours[name],
                                    group=name, show=col == 1, dash=dash,
                                    custom=[[len(cells[(x,)].values), name] for x in xs],
                                    hover=f"%{{customdata[1]}}<br>%{{x}} subscribers<br>{which} subscriber: "
                                          "%{y:.4g}<br>%{customdata[0]} point(s)"), row=1, col=col)
    fig.update_xaxes(title_text="subscribers", type="log", dtick=math.log10(2))
    layout(fig, "Fan-out: latency and loss vs the number of subscribers (median subscriber solid, worst dashed)")
    log_switch(fig, log_y=False)
    return [Figure("fanout", "fanout", "Fan-out", fig)]


def _resources(records: list[Record]) -> list[Figure]:
    go, _ = plotly()

    ok = [r for r in records if r.ok and not r.imported]
    if not ok:
        return []
    names = list(dict.fromkeys(series_name(r) for r in ok))
    out = []
    for key, value, unit, axis, title in (
            ("cpu", lambda r, side: r.cpu_pct.side(side), "% of a core", "CPU, % of one core (median over points)",
             "CPU per side (median over the points, % of one core)"),
            ("cpu-per-msg", lambda r, side: r.cpu_us_per_msg.side(side), "us of CPU per sample delivered",
             "CPU per sample delivered, us "
             "(median over points)", "CPU per message per side (median over the points, us per sample delivered)")):
        fig = go.Figure()
        for side, colour in (("pub", "#1f77b4"), ("sub", "#ff7f0e")):
            cells = collect(ok, lambda r: (series_name(r),), partial(value, side=side))
            fig.add_trace(go.Bar(x=names, y=[cells[(n,)].value if (n,) in cells else None for n in names],
                                 name={"pub": "publisher", "sub": "subscriber"}[side], marker_color=colour,
                                 customdata=[[len(cells[(n,)].values) if (n,) in cells else 0] for n in names],
                                 hovertemplate="%{x}<br>%{y:.1f} " + unit + " (median)<br>%{customdata[0]} point(s)"))
        fig.update_layout(barmode="group", yaxis_title=axis)
        layout(fig, title)
        fig.update_xaxes(tickangle=-20, automargin=True)
        out.append(Figure("resources", key, title.split(" (")[0], fig))
    fig = go.Figure()
    for side, colour in (("pub", "#1f77b4"), ("sub", "#ff7f0e")):
        peak: dict[str, float] = {}
        for r in ok:
            kb = r.rss_kb.side(side)
            if kb is not None:
                peak[series_name(r)] = max(peak.get(series_name(r), 0), kb / 1024)
        fig.add_trace(go.Bar(x=names, y=[peak.get(n) for n in names], marker_color=colour,
                             name={"pub": "publisher", "sub": "subscriber"}[side],
                             hovertemplate="%{x}<br>%{y:.1f} MiB peak RSS"))
    fig.update_layout(barmode="group", yaxis_title="MiB (max RSS over points)")
    layout(fig, "Peak memory per side (max RSS over the points)")
    fig.update_xaxes(tickangle=-20, automargin=True)
    out.append(Figure("resources", "memory", "Peak memory per side", fig))
    # CPU per thread group: mwperf's own threads vs the middleware's, per side
    bars: dict[tuple, dict[bool, list[float]]] = {}
    for r in ok:
        for side in ("pub", "sub"):
            groups = r.threads.side(side)
            if not groups:
                continue
            sums = {True: 0.0, False: 0.0}
            for g in groups:
                if g.cpu_pct is not None:
                    sums[g.own] += g.cpu_pct
            for own, v in sums.items():
                bars.setdefault((series_name(r), side), {True: [], False: []})[own].append(v)
    if bars:
        fig = go.Figure()
        xs = [[n for n, _ in bars], [{"pub": "publisher", "sub": "subscriber"}[s] for _, s in bars]]
        for own, label, colour in ((True, "mwperf's own threads", "#7f7f7f"), (False, "middleware threads",
                                                                                 "#2ca02c")):
            ys = [statistics.median(v[own]) for v in bars.values()]
            fig.add_trace(go.Bar(x=xs, y=ys, name=label, marker_color=colour,
                                 customdata=[[len(v[own])] for v in bars.values()],
                                 hovertemplate="%{x}<br>" + label + ": %{y:.1f} % of a core (median)<br>"
                                               "%{customdata[0]} point(s)<extra></extra>"))
        fig.update_layout(barmode="stack", yaxis_title="CPU, % of one core")
        layout(fig, "CPU per thread group and side: mwperf's own threads vs the middleware's (median over points)")
        out.append(Figure("resources", "threads", "CPU per thread group", fig))
    return out


def run_figures(records: list[Record]) -> list[Figure]:
    """Every figure the records support, in page order."""
    return (_latency(records) + _rate(records) + _burst(records) + _fanout(records)
            + interop_figures(records) + max_rate_figures(records) + _resources(records))


def chosen_point(records: list[Record], index: int | None) -> Record | None:
    """The point whose samples the report shows: ``index`` (the record's
    ``point``), else the first ok latency-mode point with samples, else any."""
    with_samples = [r for r in records if r.ok and r.samples_file is not None]
    if index is not None:
        return next((r for r in records if r.point == index), None)
    return next((r for r in with_samples if r.mode == "latency"), with_samples[0] if with_samples else None)


def point_figures(directory: Path, records: list[Record], point: int | None) -> list[Figure]:
    """Histogram and latency over time of the chosen point's kept samples."""
    go, _ = plotly()

    record = chosen_point(records, point)
    samples = read_samples(directory, record) if record else None
    if record is None or not samples:
        return []
    name = f"point {record.point}: {series_name(record)} {record.mode} {format_size(record.size)}"
    if record.rate_hz:
        name += f" {format_rate_hz(record.rate_hz)} Hz"
    fig = go.Figure(go.Histogram(x=samples, nbinsx=80, marker_color="#1f77b4", name="samples",
                                 hovertemplate="%{x} µs<br>%{y:,} samples<extra></extra>"))
    fig.update_layout(xaxis_title="one-way latency (µs)", yaxis_title="samples", bargap=0.02)
    layout(fig, f"{name}: latency histogram ({len(samples):,} kept samples)")
    log_switch(fig, log_y=False)
    out = [Figure("point", "point-histogram", "Latency histogram", fig)]
    stride = max(1, math.ceil(len(samples) / MAX_TIME_POINTS))  # at most MAX_TIME_POINTS drawn
    xs = list(range(0, len(samples), stride))
    order = "in arrival order" if record.samples_file is not None and record.samples_file.time_ordered else \
        "a uniform sample, not in arrival order"
    fig = go.Figure(go.Scatter(x=xs, y=[samples[i] for i in xs], mode="lines", line={"width": 1, "color": "#1f77b4"},
                               name="latency", hovertemplate="sample %{x:,}<br>%{y:.4g} µs<extra></extra>"))
    fig.update_layout(xaxis_title=f"sample ({order}; every {stride})", yaxis_title="one-way latency (µs)")
    layout(fig, f"{name}: latency over the run")
    log_switch(fig, log_y=False)
    out.append(Figure("point", "point-time", "Latency over the run", fig))
    return out
