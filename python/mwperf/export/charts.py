"""The report's charts, as SVG, from a run's records: throughput vs size per
middleware, latency percentiles vs size (p50 with bands to p90 and to p99),
each on linear and log axes; latency vs publish rate and a loss-rate heatmap
size x rate (rate mode, the reference sweep's views); CPU and memory per
middleware; and one point's latency histogram and latency over time.

Each chart is ``(section, chart id, svg)``: the HTML page groups them by
section, the plot files are named by id.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Iterable

from mwperf.export.svg import Series, bar_chart, heatmap, histogram, line_chart
from mwperf.results.labels import qos_label
from mwperf.results.rundir import read_samples
from mwperf.units import format_size

__all__ = ["Chart", "plot_svgs", "point_svgs", "chosen_point", "point_charts"]

#: The latency-over-time plot shows at most this many samples (evenly strided).
MAX_TIME_POINTS = 2000
#: (section, chart id, svg)
Chart = tuple[str, str, str]


def _series_name(r: dict) -> str:
    qos = qos_label(r)
    return f"{r['mw']} ({qos})" if qos else r["mw"]


def _ok(records: Iterable[dict], mode: str) -> list[dict]:
    return [r for r in records if r.get("status") == "ok" and r.get("mode") == mode]


def _median_by(records: list[dict], key, value) -> dict:
    """{key(r): median of value(r)} over the records whose value is known (repetitions collapse)."""
    groups: dict = {}
    for r in records:
        v = value(r)
        if v is not None:
            groups.setdefault(key(r), []).append(v)
    return {k: statistics.median(vs) for k, vs in groups.items()}


def plot_svgs(records: list[dict]) -> list[Chart]:
    """(section, chart id, svg) for every plot the records support."""
    plots: list[Chart] = []
    by_size = lambda r: (_series_name(r), r["size"])  # noqa: E731 - one key for every size plot

    def both_axes(section: str, base: str, title: str, series: list[Series], y_label: str) -> None:
        """The plot on linear and on log axes (x is always log: sizes span decades)."""
        for log in (False, True):
            chart_id = f"{base}-log" if log else base
            plots.append((section, chart_id, line_chart(chart_id, f"{title} ({'log' if log else 'linear'})", series,
                                                        "message size (bytes)", y_label, log_x=True, log_y=log)))

    tput = _ok(records, "throughput")
    if tput:
        both_axes("throughput", "throughput-size", "Throughput vs size",
                  _group(_median_by(tput, by_size, lambda r: r.get("mbps"))), "Mbit/s received")
    lat = _ok(records, "latency")
    if lat:
        q = {k: _median_by(lat, by_size, lambda r, k=k: (r.get("latency_us") or {}).get(k))
             for k in ("p50", "p90", "p99")}
        series = _group(q["p50"])
        for s in series:
            known = [(x, y) for x, y in s.points if (s.name, x) in q["p90"] and (s.name, x) in q["p99"]]
            s.bands = [[(x, y, q["p90"][(s.name, x)]) for x, y in known],
                       [(x, q["p90"][(s.name, x)], q["p99"][(s.name, x)]) for x, _ in known]]
        both_axes("latency", "latency-size", "Latency p50, bands to p90 and p99, vs size", series,
                  "one-way latency (us)")
    rate = [r for r in _ok(records, "rate") if r.get("rate_hz")]
    for name in dict.fromkeys(_series_name(r) for r in rate):
        mine = [r for r in rate if _series_name(r) == name]
        ave = _median_by(mine, lambda r: (format_size(r["size"]), r["rate_hz"]),
                         lambda r: (r.get("latency_us") or {}).get("mean"))
        slug = "".join(c if c.isalnum() else "-" for c in name)
        plots.append(("rate", f"latency-rate-{slug}",
                      line_chart(f"latency-rate-{slug}", f"{name}: latency (ave) vs publish rate", _group(ave),
                                 "publish rate (Hz)", "one-way latency, ave (us)", log_x=True, log_y=True)))
        loss = _median_by(mine, lambda r: (r["size"], r["rate_hz"]), lambda r: r.get("loss_rate"))
        sizes = sorted({k[0] for k in loss})
        rates = sorted({k[1] for k in loss})
        plots.append(("rate", f"loss-heatmap-{slug}",
                      heatmap(f"loss-heatmap-{slug}", f"{name}: loss rate, size x rate", sizes, rates, loss,
                              "message size", "publish rate (Hz)", row_fmt=format_size,
                              col_fmt=lambda v: f"{v:g}")))
    ok = [r for r in records if r.get("status") == "ok" and r.get("source") is None]
    if ok:
        mws = list(dict.fromkeys(r["mw"] for r in ok))
        cpu = {side: [_cpu_pct(ok, mw, side) for mw in mws] for side in ("pub", "sub")}
        rss = {side: [_rss_mib(ok, mw, side) for mw in mws] for side in ("pub", "sub")}
        plots.append(("resources", "cpu", bar_chart("cpu", "CPU per side (median over points, % of one core)",
                                                    mws, cpu, "% of a core")))
        plots.append(("resources", "memory", bar_chart("memory", "Peak memory per side (max RSS over points)",
                                                       mws, rss, "MiB")))
    return plots


def _group(values: dict) -> list[Series]:
    series: dict[str, Series] = {}
    for (name, x), y in values.items():
        series.setdefault(name, Series(name, [])).points.append((float(x), float(y)))
    for s in series.values():
        s.points.sort()
    return list(series.values())


def _cpu_pct(records: list[dict], mw: str, side: str) -> float | None:
    vals = []
    for r in records:
        if r["mw"] != mw:
            continue
        t = (r.get("cpu_s") or {}).get(side)
        span = r.get("elapsed_s") or r.get("duration_s")
        if t and span:
            vals.append(100.0 * (t["user"] + t["sys"]) / span)
    return statistics.median(vals) if vals else None


def _rss_mib(records: list[dict], mw: str, side: str) -> float | None:
    vals = [(r.get("rss_kb") or {}).get(side) for r in records if r["mw"] == mw]
    vals = [v for v in vals if v is not None]
    return max(vals) / 1024.0 if vals else None


def chosen_point(records: list[dict], index: int | None) -> dict | None:
    """The point whose samples the report shows: ``index`` (the record's
    ``point``), else the first ok latency-mode point with samples, else any."""
    with_samples = [r for r in records if r.get("status") == "ok" and r.get("samples_file")]
    if index is not None:
        return next((r for r in records if r.get("point") == index), None)
    return next((r for r in with_samples if r["mode"] == "latency"), with_samples[0] if with_samples else None)


def point_svgs(record: dict, samples: list[float]) -> list[Chart]:
    """Histogram and latency over time of one point's samples."""
    name = f"point {record['point']}: {_series_name(record)} {record['mode']} {format_size(record['size'])}"
    if record.get("rate_hz"):
        name += f" {record['rate_hz']:g} Hz"
    stride = max(1, len(samples) // MAX_TIME_POINTS)
    over_time = Series("latency", [(float(i), v) for i, v in enumerate(samples) if i % stride == 0])
    order = "in arrival order" if (record.get("samples_file") or {}).get("time_ordered") else \
        "a uniform sample, not in arrival order"
    return [("point", "point-histogram", histogram("point-histogram", f"{name}: latency histogram", samples,
                                                   "one-way latency (us)")),
            ("point", "point-time", line_chart("point-time", f"{name}: latency over the run ({order})",
                                               [over_time], "sample", "one-way latency (us)"))]


def point_charts(directory: Path, records: list[dict], point: int | None) -> list[Chart]:
    """The histogram and time series of the chosen point, when its samples were kept."""
    record = chosen_point(records, point)
    samples = read_samples(directory, record) if record else None
    return point_svgs(record, samples) if samples else []
