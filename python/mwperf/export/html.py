"""``DIR/report.html``: one self-contained page (inline CSS and SVG, no
script, nothing fetched) with the run's provenance and warnings, the plots
of the reference reports and the tables.

Plots: throughput vs size per middleware, latency percentiles vs size (p50
with bands to p90 and to p99), each on linear and log axes; latency vs publish rate
and a loss-rate heatmap size x rate (rate mode, the reference sweep's views);
CPU and memory per middleware.
"""

from __future__ import annotations

import statistics
from html import escape
from typing import Iterable

from mwperf.export.tables import build_sections, qos_label
from mwperf.plots import Series, bar_chart, heatmap, histogram, line_chart
from mwperf.units import format_size

__all__ = ["warnings_for", "render_html", "plot_svgs", "point_svgs", "chosen_point"]

#: The latency-over-time plot shows at most this many samples (evenly strided).
MAX_TIME_POINTS = 2000

CSS = """
body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1320px;color:#222}
h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}h3{font-size:1em}
table{border-collapse:collapse;margin:.5em 0;font-size:.85em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f3f3f3}td.l,th.l{text-align:left}.warn{background:#fff4e0;border-left:4px solid #f0a000;padding:4px 8px;margin:4px 0}
.charts{display:flex;flex-wrap:wrap;gap:8px}svg.chart{background:#fff;border:1px solid #eee}
svg text{font-size:11px;fill:#333}svg text.title{font-size:13px;font-weight:bold}svg text.legend{font-size:10px}
svg rect.plot{fill:none;stroke:#999}svg line.grid{stroke:#eee}.failed{color:#b00}
"""


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


def warnings_for(records: list[dict], run: dict | None) -> list[str]:
    """What makes these numbers less comparable, each with what to do about it."""
    run = run or {}
    out: list[str] = []
    placements = {(r.get("cpu") or {}).get("placement") for r in records}
    if "unpinned" in placements:
        out.append("Some points ran unpinned: on VMs whose idle vCPUs halt, results are bimodal. "
                   "Pin both sides (--cpu 0,1 or 0,0).")
    if len(placements - {None, "unknown"}) > 1:
        out.append(f"Points ran under different CPU placements ({', '.join(sorted(p for p in placements if p))}): "
                   "compare like with like (the tables are split by placement).")
    for r in records:
        cpu = r.get("cpu") or {}
        if r.get("wait") == "spin" and cpu.get("placement") == "same-core":
            out.append("A spinning receiver shared its core with the sender: the two fight for the CPU. "
                       "Spin only cross-core (--cpu 0,1).")
            break
    if (run.get("agent") or {}).get("build_type") not in (None, "Release"):
        out.append(f"The agent is a {run['agent']['build_type']} build: rebuild it Release "
                   "(cmake -DCMAKE_BUILD_TYPE=Release) before trusting the numbers.")
    governor = run.get("governor")
    if governor and governor != "performance":
        out.append(f"CPU frequency governor is '{governor}': frequency changes add noise. "
                   "cpupower frequency-set -g performance (or record it and compare only like with like).")
    busy_read = (run.get("sysctl") or {}).get("net.core.busy_read")
    if busy_read == 0:
        out.append("net.core.busy_read is 0: latency at low publish rates includes the interrupt wake-up "
                   "(the reference sweep saw large gains with busy_read=50, at the cost of a busy core).")
    if run.get("git", {}).get("dirty"):
        out.append("The mwperf tree had uncommitted changes: the git sha does not identify the code that measured.")
    noisy = [r for r in records if r.get("status") == "ok" and (r.get("latency_us") or {}).get("p50")
             and ((r["latency_us"].get("p99") or 0) > 5 * r["latency_us"]["p50"])]
    if noisy:
        out.append(f"{len(noisy)} point(s) have p99 above 5 x p50 (high variance): run longer (--duration, "
                   "or --precision for the adaptive stop), pin the CPUs and keep the machine otherwise idle.")
    flagged = [r for r in records if (r.get("clock") or {}).get("flagged")]
    if flagged:
        out.append(f"{len(flagged)} one-way result(s) measured across two clocks whose offset is known only to more "
                   "than 10 % of the latency: synchronise the hosts (ptp4l/phc2sys, chrony) or use ping-pong "
                   "(latency mode, RTT/2), which needs no common clock.")
    failed = [r for r in records if r.get("status") != "ok"]
    if failed:
        out.append(f"{len(failed)} point(s) failed (see the tables for the reasons); they are not plotted.")
    tools = sorted({(r.get("source") or {}).get("tool") for r in records} - {None})
    if tools:
        out.append(f"Some points were imported from {', '.join(tools)}: measured elsewhere, with that tool's "
                   "method; their provenance is not this run's.")
    return out


def plot_svgs(records: list[dict]) -> list[tuple[str, str, str]]:
    """(section, chart id, svg) for every plot the records support."""
    plots: list[tuple[str, str, str]] = []
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


def _tables_html(records: list[dict]) -> str:
    out = []
    for section in build_sections(records):
        out.append(f"<h3>{escape(section.title)}</h3><table><tr>"
                   + "".join(f"<th>{escape(h)}</th>" for h in section.headers) + "</tr>")
        for row in section.rows:
            if row.failure is None:
                out.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row.cells) + "</tr>")
            else:
                lead = [c for c in row.cells if c]
                out.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in lead)
                           + f'<td class="l failed" colspan="{len(section.headers) - len(lead)}">'
                           + f"{escape(row.failure)}</td></tr>")
        out.append("</table>")
    return "\n".join(out)


def _provenance_html(run: dict | None) -> str:
    run = run or {}
    sysctl = run.get("sysctl") or {}
    agent = run.get("agent") or {}
    rows = [
        ("command", " ".join(run.get("command") or []) or "-"),
        ("started / finished", f"{run.get('started', '-')} / {run.get('finished', '-')} ({run.get('status', '-')})"),
        ("mwperf", f"{run.get('mwperf_version', '-')}, git {(run.get('git') or {}).get('sha', '-')}"),
        ("host", f"{run.get('hostname', '-')}, kernel {run.get('kernel', '-')}"),
        ("CPU", f"{run.get('cpu_model', '-')}, {run.get('vcpus', '-')} vCPUs, governor "
                f"{run.get('governor') or run.get('governor_note') or '-'}, clocksource {run.get('clocksource', '-')}"),
        ("net.core", ", ".join(f"{k.split('.')[-1]} {v}" for k, v in sysctl.items()) or "-"),
        ("haltpoll guest_halt_poll_ns", str(run.get("guest_halt_poll_ns", "-"))),
        ("agent", f"{agent.get('version', '-')} ({agent.get('build_type', '-')}, compiler {agent.get('compiler', '-')})"),
        ("adapters", ", ".join(f"{a.get('name')} {a.get('version') or ''}".strip()
                               for a in run.get("adapters") or []) or "-"),
    ]
    if run.get("imported"):
        rows.append(("imported", f"{run['imported'].get('tool')} {run['imported'].get('file')}"))
    return "<table>" + "".join(f'<tr><th class="l">{escape(k)}</th><td class="l">{escape(str(v))}</td></tr>'
                               for k, v in rows) + "</table>"


def chosen_point(records: list[dict], index: int | None) -> dict | None:
    """The point whose samples the report shows: ``index`` (the record's
    ``point``), else the first ok latency-mode point with samples, else any."""
    with_samples = [r for r in records if r.get("status") == "ok" and r.get("samples_file")]
    if index is not None:
        return next((r for r in records if r.get("point") == index), None)
    return next((r for r in with_samples if r["mode"] == "latency"), with_samples[0] if with_samples else None)


def point_svgs(record: dict, samples: list[float]) -> list[tuple[str, str, str]]:
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


SECTIONS = (("throughput", "Throughput vs message size"), ("latency", "Latency vs message size"),
            ("rate", "Publish-rate sweep: latency vs rate, loss heatmap"), ("resources", "CPU and memory"),
            ("point", "One point: latency histogram and latency over time"))


def _baseline_html(baseline: dict) -> str:
    tcp, udp = baseline.get("tcp") or {}, baseline.get("udp") or {}
    link = (baseline.get("link") or {}).get("profile", "?")
    return (f'<section id="baseline"><h2>Raw link (iperf3)</h2><table>'
            f'<tr><th class="l">link</th><th>TCP Gbit/s</th><th>UDP 65507 B Gbit/s</th><th>UDP lost %</th></tr>'
            f'<tr><td class="l">{escape(str(link))}</td><td>{tcp.get("gbps", 0):.3f}</td>'
            f'<td>{udp.get("gbps", 0):.3f}</td><td>{udp.get("lost_percent") or 0:.2f}</td></tr></table>'
            f'<p>{escape(str(baseline.get("tool", "")))}, {baseline.get("duration_s", "?")} s each, '
            f'{escape(str(baseline.get("time", "")))}</p></section>')


def render_html(records: list[dict], run: dict | None, title: str,
                extra_plots: list[tuple[str, str, str]] = (), baseline: dict | None = None) -> str:
    placements = sorted({f"{(r.get('cpu') or {}).get('placement')} / wait {r.get('wait')}" for r in records})
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
             f"<style>{CSS}</style></head><body>",
             f"<h1>{escape(title)}</h1>",
             f'<section id="provenance"><h2>Provenance</h2>{_provenance_html(run)}'
             f"<p>CPU placement / wait strategy of the points: {escape(', '.join(placements))}</p></section>",
             '<section id="warnings"><h2>Warnings</h2>']
    warnings = warnings_for(records, run)
    parts += [f'<div class="warn">{escape(w)}</div>' for w in warnings] or ["<p>None.</p>"]
    parts.append("</section>")
    if baseline:
        parts.append(_baseline_html(baseline))
    plots = plot_svgs(records) + list(extra_plots)
    for key, heading in SECTIONS:
        charts = [svg for section, _, svg in plots if section == key]
        if charts:
            parts.append(f'<section id="{key}"><h2>{escape(heading)}</h2><div class="charts">'
                         + "\n".join(charts) + "</div></section>")
    parts.append(f'<section id="tables"><h2>Tables</h2>{_tables_html(records)}</section>')
    parts.append(f"<p>{len(records)} point(s); results.jsonl is the source of truth.</p></body></html>")
    return "\n".join(parts) + "\n"
