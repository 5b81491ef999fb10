"""``DIR/report.html``: one self-contained page that opens offline (plotly.js
inline, nothing fetched): the run's provenance and warnings, the headline
table (what to look at first), the interactive figures
(:mod:`mwperf.export.figures`: hover for the exact value and its sample
count, drag to zoom, click a legend entry to hide it, log/linear buttons)
and the tables.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from pathlib import Path
from typing import Any, Sequence

from mwperf.export.exporter import Exporter
from mwperf.export.figures import SECTIONS, Figure, point_figures, run_figures
from mwperf.export.floor import Anchors, floor_figure
from mwperf.export.history_figures import HISTORY_SECTION
from mwperf.export.scenario import plain, scenario_figures, scenario_sections
from mwperf.export.sections import Section
from mwperf.export.summaries import headline, summaries
from mwperf.export.tables import build_sections, floor_sections
from mwperf.model.record import Record
from mwperf.results.rundir import RunDir, write_atomic

__all__ = ["REPORT_HTML", "warnings_for", "render_html", "HtmlReport", "PLOTLY_CONFIG", "plotly_js"]

REPORT_HTML = "report.html"

CSS = ("\n"
       "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1320px;padding:0 1em;color:#222}\n"
       "h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}h3{font-size:1em}\n"
       "table{border-collapse:collapse;margin:.5em 0;font-size:.85em}"
       "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\n"
       "th{background:#f3f3f3}td.l,th.l{text-align:left}"
       ".warn{background:#fff4e0;border-left:4px solid #f0a000;padding:4px 8px;margin:4px 0}\n"
       ".figure{margin:.8em 0 1.6em}.failed{color:#b00}.hint{color:#555;font-size:.9em}\n"
       "#headline table{font-size:.95em}#headline td{padding:3px 8px}\n")

#: The figures' toolbar: no logo, the camera button saves an SVG named after the figure.
PLOTLY_CONFIG: dict[str, Any] = {"displaylogo": False, "responsive": True, "scrollZoom": False,
                                 "toImageButtonOptions": {"format": "svg", "scale": 1},
                                 "modeBarButtonsToRemove": ["select2d", "lasso2d"]}


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.js as the plotly package ships it, to inline in the page."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def warnings_for(records: list[Record], run: dict | None) -> list[str]:
    """What makes these numbers less comparable, each with what to do about it."""
    run = run or {}
    out: list[str] = []
    placements = {r.cpu.placement for r in records}
    if "unpinned" in placements:
        out.append("Some points ran unpinned: on VMs whose idle vCPUs halt, results are bimodal. "
                   "Pin both sides (--cpu 0,1 or 0,0).")
    if len(placements - {None, "unknown"}) > 1:
        out.append(f"Points ran under different CPU placements ({', '.join(sorted(p for p in placements if p))}): "
                   "compare like with like (the tables are split by placement).")
    for r in records:
        if r.wait == "spin" and r.cpu.placement == "same-core":
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
    if (run.get("git") or {}).get("dirty"):
        out.append("The mwperf tree had uncommitted changes: the git sha does not identify the code that measured.")
    noisy = [r for r in records if r.ok and (p50 := r.stat("p50")) and (r.stat("p99") or 0) > 5 * p50]
    if noisy:
        out.append(f"{len(noisy)} point(s) have p99 above 5 x p50 (high variance): run longer (--duration, "
                   "or --precision for the adaptive stop), pin the CPUs and keep the machine otherwise idle.")
    flagged = [r for r in records if r.clock is not None and r.clock.flagged]
    if flagged:
        out.append(f"{len(flagged)} one-way result(s) measured across two clocks whose offset is known only to more "
                   "than 10 % of the latency: synchronise the hosts (ptp4l/phc2sys, chrony) or use ping-pong "
                   "(latency mode, RTT/2), which needs no common clock.")
    failed = [r for r in records if not r.ok]
    if failed:
        out.append(f"{len(failed)} point(s) failed (see the tables for the reasons); they are not plotted.")
    tools = sorted({r.source.tool for r in records if r.source is not None})
    if tools:
        out.append(f"Some points were imported from {', '.join(tools)}: measured elsewhere, with that tool's "
                   "method; their provenance is not this run's.")
    return out


def _cls(left: bool) -> str:
    return ' class="l"' if left else ""


def _section_html(section: Section, title: bool = True) -> str:
    out = [(f"<h3>{escape(section.title)}</h3>" if title else "") + "<table><tr>"
           + "".join(f"<th{_cls(i in section.left)}>{escape(h)}</th>" for i, h in enumerate(section.headers))
           + "</tr>"]
    for row in section.rows:
        if row.failure is None:
            out.append("<tr>" + "".join(f"<td{_cls(i in section.left)}>{escape(c)}</td>"
                                        for i, c in enumerate(row.cells)) + "</tr>")
        else:
            lead = [c for c in row.cells if c]
            out.append("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in lead)
                       + f'<td class="l failed" colspan="{len(section.headers) - len(lead)}">'
                       + f"{escape(row.failure)}</td></tr>")
    out.append("</table>")
    return "\n".join(out)


def _tables_html(records: list[Record], anchors: Anchors | None) -> str:
    return "\n".join(_section_html(s) for s in build_sections(records, anchors) + summaries(records))


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
            + "\n".join(_section_html(s) + figure_html(f) for s, f in zip(sections, figures)) + "</section>")


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
            "over memcpy's.</p>" + "\n".join(_section_html(s) for s in floor_sections(floor))
            + (figure_html(figure) if figure else "") + "</section>")


def _headline_html(records: list[Record]) -> str:
    sections = headline(records)
    if not sections:
        return ""
    return (f'<section id="headline"><h2>Look here first</h2><p class="hint">One row per middleware, QoS and mode: '
            f"the ranges over the sizes and rates measured. The figures below show each point; hover for exact values."
            f"</p>{_section_html(sections[0], title=False)}</section>")


def figure_html(figure: Figure) -> str:
    """A figure's div and the script that draws it (plotly.js is loaded once, in the page's head)."""
    import plotly.io as pio

    config = dict(PLOTLY_CONFIG, toImageButtonOptions=dict(PLOTLY_CONFIG["toImageButtonOptions"],
                                                           filename=figure.id))
    return (f'<div class="figure" id="figure-{figure.id}">'
            + pio.to_html(figure.fig, include_plotlyjs=False, full_html=False, div_id=figure.id, config=config,
                          default_width="100%", default_height=f"{figure.fig.layout.height or 450}px",
                          validate=False)
            + "</div>")


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


def _baseline_html(baseline: dict) -> str:
    tcp, udp = baseline.get("tcp") or {}, baseline.get("udp") or {}
    link = (baseline.get("link") or {}).get("profile", "?")
    return (f'<section id="baseline"><h2>Raw link (iperf3)</h2><table>'
            f'<tr><th class="l">link</th><th>TCP Gbit/s</th><th>UDP 65507 B Gbit/s</th><th>UDP lost %</th></tr>'
            f'<tr><td class="l">{escape(str(link))}</td><td>{tcp.get("gbps", 0):.3f}</td>'
            f'<td>{udp.get("gbps", 0):.3f}</td><td>{udp.get("lost_percent") or 0:.2f}</td></tr></table>'
            f'<p>{escape(str(baseline.get("tool", "")))}, {baseline.get("duration_s", "?")} s each, '
            f'{escape(str(baseline.get("time", "")))}</p></section>')


def render_html(records: list[Record], run: dict | None, title: str,
                extra_figures: Sequence[Figure] = (), baseline: dict | None = None, *, script: str | None = None,
                anchors: Anchors | None = None) -> str:
    """The page. ``script`` replaces plotly.js (the golden test keeps the page without its 4.8 MB);
    ``anchors``: the run's floor (a section of its own, "x floor" in the tables) and baseline."""
    placements = sorted({f"{r.cpu.placement} / wait {r.wait}" for r in records})
    parts = [f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{escape(title)}</title>"
             f"<style>{CSS}</style><script type=\"text/javascript\">{plotly_js() if script is None else script}"
             f"</script></head><body>",
             f"<h1>{escape(title)}</h1>",
             f'<section id="provenance"><h2>Provenance</h2>{_provenance_html(run)}'
             f"<p>CPU placement / wait strategy of the points: {escape(', '.join(placements))}</p></section>",
             '<section id="warnings"><h2>Warnings</h2>']
    warnings = warnings_for(records, run)
    parts += [f'<div class="warn">{escape(w)}</div>' for w in warnings] or ["<p>None.</p>"]
    parts.append("</section>")
    flows, records = records, plain(records)  # a scenario's flows: a section of their own
    headline = _headline_html(records)
    if headline:
        parts.append(headline)
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
    parts.append(f'<section id="tables"><h2>Tables</h2>{_tables_html(records, anchors)}</section>')
    parts.append(f"<p>{len(flows)} point(s); results.jsonl is the source of truth.</p></body></html>")
    return "\n".join(parts) + "\n"


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
                           baseline=rundir.read_baseline(), anchors=anchors)
        target = rundir.path / REPORT_HTML
        write_atomic(target, html)
        return [target]
