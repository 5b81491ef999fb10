"""The parts of report.html's page (:mod:`mwperf.export.html`): its style,
plotly.js inline, a table (:class:`~mwperf.export.sections.Section`) as HTML
and a figure as the div and script that draw it."""

from __future__ import annotations

from functools import lru_cache
from html import escape
from typing import Any

from mwperf.export.figure_parts import Figure
from mwperf.export.sections import Section

__all__ = ["CSS", "PLOTLY_CONFIG", "plotly_js", "section_html", "figure_html"]

CSS = ("\n"
       "body{font-family:system-ui,sans-serif;margin:.8em auto;max-width:1400px;padding:0 .8em;color:#222;"
       "box-sizing:border-box}\n"
       "h1{font-size:1.4em;margin:.2em 0}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}"
       "h3{font-size:1em}p.lead{margin:.2em 0 .6em;color:#444}\n"
       "#answer h2{margin-top:.4em}#answer h3{margin:.5em 0 .2em}#answer p.hint{margin:.2em 0}\n"
       ".ranks{display:flex;flex-wrap:wrap;gap:4px 12px;align-items:flex-start}\n"
       "table.rank{font-size:.7em;margin:.2em 0}table.rank caption{font-weight:600;text-align:left}"
       "table.rank td,table.rank th{padding:1px 3px}table.rank .ci{color:#777;font-size:.92em}"
       "table.rank tr.tied td{background:#eef3fa}\n"
       "table{border-collapse:collapse;margin:.5em 0;font-size:.85em}"
       "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}\n"
       "th{background:#f3f3f3}td.l,th.l{text-align:left}"
       ".warn{background:#fff4e0;border-left:4px solid #f0a000;padding:4px 8px;margin:4px 0}\n"
       ".figure{margin:.8em 0 1.6em}#answer .figure{margin:.3em 0}.failed{color:#b00}"
       ".hint{color:#555;font-size:.9em}\n")

#: The figures' toolbar: no logo, the camera button saves an SVG named after the figure.
PLOTLY_CONFIG: dict[str, Any] = {"displaylogo": False, "responsive": True, "scrollZoom": False,
                                 "toImageButtonOptions": {"format": "svg", "scale": 1},
                                 "modeBarButtonsToRemove": ["select2d", "lasso2d"]}


@lru_cache(maxsize=1)
def plotly_js() -> str:
    """plotly.js as the plotly package ships it, to inline in the page."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def _cls(left: bool) -> str:
    return ' class="l"' if left else ""


def section_html(section: Section, title: bool = True) -> str:
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


