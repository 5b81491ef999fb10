"""``DIR/report.html``: one self-contained page that opens offline (plotly.js
inline, nothing fetched). First what a reader decides on
(:mod:`mwperf.export.answer`): per mode, the middlewares ranked at each size
with their intervals and their ratio to the floor, and a figure with every
middleware on one axis; then the warnings, the run's provenance, the floor,
the detail (:mod:`mwperf.export.figures`: a panel per middleware; hover for
the exact value and its sample count, drag to zoom, click a legend entry to
hide it, log/linear buttons) and the tables.
"""

from __future__ import annotations

import sys
from html import escape
from pathlib import Path
from typing import Sequence

from mwperf.export.advice import warnings_for
from mwperf.export.answer import answer_html
from mwperf.export.discovery_report import html_section, read_discovery
from mwperf.export.exporter import Exporter
from mwperf.export.figures import SECTIONS, Figure, point_figures, run_figures
from mwperf.export.floor import Anchors, floor_figure
from mwperf.export.history_figures import HISTORY_SECTION
from mwperf.export.scenario import plain, scenario_figures, scenario_sections
from mwperf.export.page import CSS, PLOTLY_CONFIG, figure_html, plotly_js, section_html
from mwperf.export.ranking import rankings
from mwperf.export.summaries import ranges, summaries
from mwperf.export.tables import build_sections, floor_sections
from mwperf.model.record import Record
from mwperf.results.rundir import RunDir, write_atomic

__all__ = ["REPORT_HTML", "warnings_for", "render_html", "HtmlReport", "PLOTLY_CONFIG", "plotly_js"]

REPORT_HTML = "report.html"

def _tables_html(records: list[Record], anchors: Anchors | None) -> str:
    return "\n".join(section_html(s) for s in ranges(records) + build_sections(records, anchors) + summaries(records))


def _scenario_html(records: list[Record], anchors: Anchors | None) -> str:
    """Each scenario point: its flows alone and together (table and figure)."""
    sections, figures = scenario_sections(records, anchors), scenario_figures(records)
    if not sections:
        return ""
    return ('<section id="scenario"><h2>Scenarios</h2><p class="hint">Each flow of a scenario measured with every '
            "other flow at once (together) and, unless --no-solo, alone with the same settings; <b>x</b> is together "
            "/ alone (above 1: the other flows hurt it). Every publisher and subscriber of every flow is an agent "
            "process of its own. <b>x floor</b>: the flow's one-way p50 over the floor's at its size. The (all) row "
            "adds up the flows measured together.</p>"
            + "\n".join(section_html(s) + figure_html(f) for s, f in zip(sections, figures)) + "</section>")


def _floor_html(floor: dict | None) -> str:
    """The floor section: what no middleware can beat here, and how to read "x floor"."""
    if floor is None:
        return ('<section id="floor"><h2>The floor</h2><p>Not measured for this run (--no-floor, or a run '
                "made before mwperf measured it; <code>mwperf floor --out DIR</code> adds it).</p></section>")
    figure = floor_figure(floor)
    return ('<section id="floor"><h2>The floor</h2><p class="hint">What no middleware can beat on this machine, '
            "measured before the first point at the run's sizes, CPU placements and wait strategies: memcpy of one "
            "message, and ping-pongs between two processes over a Unix socket, UDP on loopback and shared memory "
            "(futex when the run blocks, a spin when it spins). The tables' <b>x floor</b> is a point's one-way p50 "
            "over the lowest ping-pong p50 here at the same size, placement and wait; <b>% memcpy</b> its Mbit/s "
            "over memcpy's.</p>" + "\n".join(section_html(s) for s in floor_sections(floor))
            + (figure_html(figure) if figure else "") + "</section>")


def _summary(records: list[Record], run: dict | None, warnings: list[str]) -> str:
    """One line under the title: what was measured, where, when, and the warnings below."""
    run = run or {}
    ok = sum(1 for r in records if r.ok)
    mws = len({r.pair_name for r in records})
    modes = ", ".join(dict.fromkeys(r.mode for r in records))
    where = ", ".join(str(v) for v in (run.get("hostname"), run.get("cpu_model"),
                                       f"{run['vcpus']} vCPUs" if run.get("vcpus") else None, run.get("started"))
                      if v)
    text = (f"{len(records)} point(s), {ok} ok, of {mws} middleware(s) ({escape(modes)})"
            + (f"; {escape(where)}" if where else "")  # run.json's text: never markup
            + (f"; <a href=\"#warnings\">{len(warnings)} warning(s)</a> below" if warnings else "; no warning"))
    return f'<p class="lead">{text}</p>' if records else ""


def _provenance_html(run: dict | None) -> str:
    run = run or {}
    sysctl = run.get("sysctl") or {}
    agent = run.get("agent") or {}
    rows = [
        ("command", " ".join(run.get("command") or []) or "-"),
        ("started / finished", f"{run.get('started', '-')} / {run.get('finished', '-')} ({run.get('status', '-')})"),
        ("mwperf", f"{run.get('mwperf_version', '-')}, git {(run.get('git') or {}).get('sha') or '-'}"),
        ("host", f"{run.get('hostname', '-')}, kernel {run.get('kernel', '-')}"),
        ("CPU", f"{run.get('cpu_model', '-')}, {run.get('vcpus', '-')} vCPUs, governor "
                f"{run.get('governor') or run.get('governor_note') or '-'}, clocksource {run.get('clocksource', '-')}"),
        ("net.core", ", ".join(f"{k.split('.')[-1]} {v}" for k, v in sysctl.items()) or "-"),
        ("haltpoll guest_halt_poll_ns", str(run.get("guest_halt_poll_ns", "-"))),
        ("agent", f"{agent.get('version', '-')} ({agent.get('build_type', '-')}, "
                  f"compiler {agent.get('compiler', '-')})"),
        ("adapters", ", ".join(f"{a.get('name')} {a.get('version') or ''}".strip()
                               for a in run.get("adapters") or []) or "-"),
    ]
    rows += [(f"{a.get('name')} license", a["license"]) for a in run.get("adapters") or [] if a.get("license")]
    if run.get("imported"):
        rows.append(("imported", f"{run['imported'].get('tool')} {run['imported'].get('file')}"))
    return "<table>" + "".join(f'<tr><th class="l">{escape(k)}</th><td class="l">{escape(str(v))}</td></tr>'
                               for k, v in rows) + "</table>"


def _fixed(value, digits: int) -> str:
    """A number of baseline.json (typed on reading: a number or None) as text, '-' when there is none."""
    return "-" if value is None else f"{value:.{digits}f}"


def _baseline_html(baseline: dict) -> str:
    tcp, udp = baseline.get("tcp") or {}, baseline.get("udp") or {}
    link = (baseline.get("link") or {}).get("profile") or "?"
    duration = baseline.get("duration_s")
    return (f'<section id="baseline"><h2>Raw link (iperf3)</h2><table>'
            f'<tr><th class="l">link</th><th>TCP Gbit/s</th><th>UDP 65507 B Gbit/s</th><th>UDP lost %</th></tr>'
            f'<tr><td class="l">{escape(link)}</td><td>{_fixed(tcp.get("gbps"), 3)}</td>'
            f'<td>{_fixed(udp.get("gbps"), 3)}</td><td>{_fixed(udp.get("lost_percent") or 0, 2)}</td></tr></table>'
            f'<p>{escape(baseline.get("tool") or "")}, {escape("?" if duration is None else f"{duration:g}")} s each, '
            f'{escape(baseline.get("time") or "")}</p></section>')


def render_html(records: list[Record], run: dict | None, title: str,
                extra_figures: Sequence[Figure] = (), baseline: dict | None = None, *, script: str | None = None,
                anchors: Anchors | None = None, discovery: Sequence[dict] = ()) -> str:
    """The page. ``script`` replaces plotly.js (the golden test keeps the page without its 4.8 MB);
    ``anchors``: the run's floor (a section of its own, "x floor" in the tables) and baseline;
    ``discovery``: the run's discovery records (its plan's discovery matrices), a section of their own."""
    placements = sorted({f"{r.cpu.placement} / wait {r.wait}" for r in records})
    warnings = warnings_for(records, run)
    flows, records = records, plain(records)  # a scenario's flows: a section of their own
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
             f"<style>{CSS}</style><script type=\"text/javascript\">{plotly_js() if script is None else script}"
             f"</script></head><body>",
             f"<h1>{escape(title)}</h1>", _summary(flows, run, warnings),
             answer_html(rankings(records, anchors), anchors or Anchors()),
             '<section id="warnings"><h2>Warnings</h2>']
    parts += [f'<div class="warn">{escape(w)}</div>' for w in warnings] or ["<p>None.</p>"]
    parts.append("</section>")
    parts.append(f'<section id="provenance"><h2>Provenance</h2>{_provenance_html(run)}'
                 f"<p>CPU placement / wait strategy of the points: {escape(', '.join(placements))}</p></section>")
    if anchors is not None:
        parts.append(_floor_html(anchors.floor))
    if baseline:
        parts.append(_baseline_html(baseline))
    scenario = _scenario_html(flows, anchors)
    if scenario:
        parts.append(scenario)
    figures = run_figures(records) + list(extra_figures)
    for key, heading in SECTIONS + (HISTORY_SECTION,):
        mine = [f for f in figures if f.section == key]
        if mine:
            parts.append(f'<section id="{key}"><h2>{escape(heading)}</h2>'
                         '<p class="hint">Hover a point for its value and samples; drag to zoom, double-click to '
                         "reset; click a legend entry to hide it; the camera saves the figure as SVG.</p>"
                         + "\n".join(figure_html(f) for f in mine) + "</section>")
    if discovery:
        parts.append(html_section(list(discovery)))
    parts.append(f'<section id="tables"><h2>Tables</h2>{_tables_html(records, anchors)}</section>')
    parts.append(f"<p>{len(flows)} point(s); results.jsonl is the source of truth.</p></body></html>")
    return "\n".join(p for p in parts if p) + "\n"


def _warn(message: str) -> None:
    sys.stderr.write(f"mwperf: warning: {message}\n")


class HtmlReport(Exporter):
    """DIR/report.html, written whole (a reader never sees half a page)."""

    name = "html"

    def __init__(self, point: int | None = None, history: Sequence[Figure] = ()):
        self.point = point  # the point whose samples are plotted (default: the first latency point)
        self.history = list(history)  # the points over the stored runs (export.history_figures), when given

    def write(self, records: list[Record], rundir: RunDir) -> list[Path]:
        anchors = Anchors.of(rundir.path)
        html = render_html(records, rundir.read_run_json(), f"mwperf run {rundir.path.name}",
                           point_figures(rundir.path, records, self.point) + self.history,
                           baseline=rundir.read_baseline(), anchors=anchors,
                           discovery=read_discovery(rundir.path, _warn))
        target = rundir.path / REPORT_HTML
        write_atomic(target, html)
        return [target]
