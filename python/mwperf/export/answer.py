"""report.html's first section, what a reader decides on: per mode, the
rankings (:mod:`mwperf.export.ranking`) at each size (and rate) side by
side, then the figure with every middleware on one axis
(:mod:`mwperf.export.answer_figures`), and which intervals they are.
"""

from __future__ import annotations

from collections import Counter
from html import escape

from mwperf.export.answer_figures import answer_figures
from mwperf.export.floor import PCT_MEMCPY, X_FLOOR, Anchors
from mwperf.export.page import figure_html
from mwperf.export.ranking import ANCHOR, RANKED, Entry, Ranking, places_text, shown
from mwperf.model.headline import Headline

__all__ = ["answer_html", "MODE_TITLES"]

MODE_TITLES = {"latency": "Latency: ping-pong, one sample outstanding (one-way = RTT/2, as RTI Perftest)",
               "throughput": "Throughput: the publisher as fast as it can (what is delivered, what is lost)",
               "rate": "Publish rate: a fixed rate (one-way latency from the intended send time, what is lost)"}
_HEADERS = {"p50": "p50 µs", "p99": "p99 µs", "mbps": "Mbit/s", "delivered": "delivered", "loss": "lost"}
_ANCHOR_HEADER = {X_FLOOR: "× floor", PCT_MEMCPY: "% memcpy"}
#: the figures a ranking's table shows with their interval
_WITH_INTERVAL = {"p50", "p99", "mbps"}


def _interval(metric: str, h: Headline) -> str:
    if h.low is None or h.high is None:
        return "–"
    return f"{shown(metric, h.low)}–{shown(metric, h.high)}"


def _same(entry: Entry) -> tuple[str, str]:
    """The ≈ cell and its hover: the places it cannot be told from, ``?`` where that is not known."""
    text = " ".join(part for part in (places_text(entry.same), "?" if entry.unknown else "") if part) or "–"
    said = [f"cannot be told from #{places_text(entry.same)}" if entry.same else "told apart from every other"
            " it is known against"]
    if entry.unknown:
        said.append(f"not known against #{places_text(entry.unknown)} (an interval missing)")
    return text, "; ".join(said)


def _table(ranking: Ranking) -> str:
    metrics = RANKED[ranking.mode]
    head = ["#", "middleware"] + [_HEADERS[m] for m in metrics]
    head += ["≈ #", _ANCHOR_HEADER[ANCHOR[ranking.mode]]]
    rows = []
    for e in ranking.entries:
        name = f'<td class="l" title="{escape(e.name)}">{escape(e.label)}</td>'
        if e.failed is not None:
            rows.append(f'<tr><td>{e.place}</td>{name}<td class="l failed" colspan="{len(head) - 2}" '
                        f'title="{escape(e.failed)}">FAILED</td></tr>')
            continue
        cells = []
        for i, m in enumerate(metrics):
            value = shown(m, e.figures[m].value)
            value = f"<b>{value}</b>" if i == 0 else value
            if m in _WITH_INTERVAL:
                value += f' <span class="ci">{_interval(m, e.figures[m])}</span>'
            cells.append(f'<td title="{escape(e.figures[m].about)}">{value}</td>')
        same, said = _same(e)
        cells.append(f'<td title="{escape(said)}">{escape(same)}</td><td>{escape(e.floor or "–")}</td>')
        rows.append(f'<tr{" class=tied" if e.same else ""}><td>{e.place}</td>{name}{"".join(cells)}</tr>')
    return (f'<table class="rank"><caption>{escape(ranking.where)}</caption><tr>'
            + "".join(f'<th{" class=l" if h == "middleware" else ""}>{escape(h)}</th>' for h in head) + "</tr>"
            + "".join(rows) + "</table>")


def _intervals(ranked: list[Ranking]) -> str:
    """Which intervals the mode's figures have, and for how many points."""
    out = []
    for metric in [m for m in RANKED[ranked[0].mode] if m in _WITH_INTERVAL or m == RANKED[ranked[0].mode][0]]:
        kinds = Counter(e.figures[metric].about for r in ranked for e in r.entries if e.failed is None)
        if kinds:
            out.append(f"<b>{escape(_HEADERS[metric])}</b>: " + "; ".join(
                f"{escape(about)} ({n} point{'s' if n > 1 else ''})" for about, n in kinds.most_common()))
    return "<br>".join(out)


def answer_html(ranked: list[Ranking], anchors: Anchors) -> str:
    """The section: each mode's rankings and its one-axis figure, then which intervals they are."""
    if not ranked:
        return ""
    figures = {f.id: f for f in answer_figures(ranked, anchors)}
    parts = ['<section id="answer"><h2>Which middleware: ranked at each size, every middleware on one axis</h2>']
    modes = list(dict.fromkeys(r.mode for r in ranked))
    for mode in modes:
        of_mode = [r for r in ranked if r.mode == mode]
        first = RANKED[mode][0]
        parts.append(f'<div class="mode" id="answer-{mode}-mode"><h3>{escape(MODE_TITLES[mode])}</h3>'
                     f'<p class="hint">Ranked on {escape(_HEADERS[first])} ({"highest" if first != "p50" else "lowest"}'
                     f" first), each figure with its interval in grey; <b>≈ #</b>: the places whose interval overlaps "
                     "this one's, not told apart on this machine (shaded); <b>?</b>: an interval missing, not known; "
                     "hover a cell for what it is.</p>"
                     '<div class="ranks">' + "".join(_table(r) for r in of_mode) + "</div>"
                     + figure_html(figures[f"answer-{mode}"])
                     + f'<p class="hint">Intervals. {_intervals(of_mode)}</p></div>')
    parts.append("</section>")
    return "\n".join(parts)
