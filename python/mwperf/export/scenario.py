"""A scenario's tables: each flow's p50, p99 and loss alone and together, with
the ratio (together / alone: the number that says whether one stream hurts
another), the point's totals, and the floor (DIR/scenario.json -> stdout and
DIR/scenario.html)."""

from __future__ import annotations

import html
from pathlib import Path
from typing import TextIO

from mwperf.export.figure_parts import Figure
from mwperf.export.floor import Anchors, floor_tables
from mwperf.export.html import figure_html, plotly_js
from mwperf.export.terminal import table_text
from mwperf.results.confined import write_inside
from mwperf.results.floor import read_floor

__all__ = ["ScenarioReport", "flow_rows", "HEADERS", "SCENARIO_HTML"]

SCENARIO_HTML = "scenario.html"
HEADERS = ["flow", "size", "rate", "N:M", "p50 alone (us)", "p50 together (us)", "p50 x", "p99 alone (us)",
           "p99 together (us)", "p99 x", "loss alone", "loss together", "sent", "received", "lost", "cpu all processes (s)"]


def _us(value) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def _ratio(together, alone) -> str:
    if not isinstance(together, (int, float)) or not isinstance(alone, (int, float)) or alone <= 0:
        return "-"
    return f"{together / alone:.2f}"


def _loss(record: dict | None) -> str:
    if record is None:
        return "-"
    if record["status"] != "ok":
        return "failed"
    rate = record.get("loss_rate")
    return "-" if rate is None else f"{100 * rate:.2f} %"


def _pct(record: dict | None, key: str):
    return ((record or {}).get("latency_us") or {}).get(key)


def _cpu(record: dict) -> str:
    total = record.get("cpu_total_s")
    return "-" if total is None else f"{total:.2f}"


def _rate(record: dict) -> str:
    if record.get("rate_hz"):
        return f"{record['rate_hz']:g} Hz"
    return f"x{record.get('demand')}" if record.get("demand") else "-"


def _n(count) -> str:
    """A count, '-' when there is none (a failed flow's subscriber gave no result)."""
    return "-" if count is None else str(count)


def flow_rows(point: dict, anchors: Anchors | None = None) -> tuple[list[str], list[list[str]]]:
    """One row per flow of a scenario point (alone columns '-' without solo runs)."""
    alone = point.get("alone") or {}
    floor = anchors is not None and anchors.index
    rows = []
    for name, rec in point["together"]["flows"].items():
        solo = alone.get(name)
        row = [name, str(rec["size"]), _rate(rec), f"{rec['publishers']}:{rec.get('subscribers', 1)}",
               _us(_pct(solo, "p50")), _us(_pct(rec, "p50")), _ratio(_pct(rec, "p50"), _pct(solo, "p50")),
               _us(_pct(solo, "p99")), _us(_pct(rec, "p99")), _ratio(_pct(rec, "p99"), _pct(solo, "p99")),
               _loss(solo), _loss(rec), _n(rec.get("sent")), _n(rec.get("received")), _n(rec.get("lost")),
               _cpu(rec)]
        if floor:
            row += anchors.cells(rec, "rate")
        rows.append(row)
    totals = point["together"]["totals"]
    rows.append(["(all)", "", "", "", "", "", "", "", "", "", "", "", _n(totals["sent"]), _n(totals["received"]),
                 _n(totals["lost"]), f"{totals['cpu_s']:.2f}"] + (["" ] if floor else []))
    return HEADERS + (anchors.headers("rate") if floor else []), rows


def _flows(n: int) -> str:
    return "1 flow" if n == 1 else f"{n} flows"


def _title(doc: dict, point: dict) -> str:
    failed = point["together"]["totals"]["failed"]
    note = f"; failed: {', '.join(failed)}" if failed else ""
    label = f"{point['label']}, " if point.get("label") else ""
    return f"{doc['scenario']} on {point['mw']} ({label}{_flows(point['together']['totals']['flows'])} at once{note})"


class ScenarioReport:
    """The scenario's tables as text or markdown, and its page."""

    def write_text(self, doc: dict, out: TextIO, fmt: str = "text", directory: Path | None = None) -> None:
        anchors = Anchors.of(directory) if directory is not None else None
        for point in doc["points"]:
            headers, rows = flow_rows(point, anchors)
            out.write(f"\n{_title(doc, point)}\n")
            if fmt == "md":
                out.write("| " + " | ".join(headers) + " |\n|" + "---|" * len(headers) + "\n")
                out.writelines("| " + " | ".join(row) + " |\n" for row in rows)
            else:
                out.write(table_text(headers, rows, left=(0,)) + "\n")
        out.write(f"\n{doc['process_model']}; x = together / alone\n")

    def write_html(self, doc: dict, directory: Path) -> Path:
        anchors = Anchors.of(directory)
        parts = [f"<!doctype html><meta charset='utf-8'><title>{html.escape(doc['scenario'])}</title>",
                 f"<script>{plotly_js()}</script>",
                 "<style>body{font-family:sans-serif}td,th{padding:2px 8px;text-align:right}"
                 "td:first-child{text-align:left}</style>",
                 f"<h1>scenario {html.escape(doc['scenario'])}</h1>",
                 f"<p>{html.escape(doc['process_model'])}; x = together / alone.</p>"]
        for point in doc["points"]:
            headers, rows = flow_rows(point, anchors)
            parts.append(f"<h2>{html.escape(_title(doc, point))}</h2>" + _table(headers, rows))
            parts.append(figure_html(interference_figure(point)))
        parts.append("<h2>floor</h2>")
        tables = floor_tables(read_floor(directory))
        if not tables:
            parts.append("<p>no floor was measured (--no-floor)</p>")
        for table in tables:
            parts.append(f"<h3>{html.escape(table['title'])}</h3>" + _table(table["headers"], table["rows"]))
        return write_inside(directory, SCENARIO_HTML, "\n".join(parts) + "\n")


def interference_figure(point: dict) -> Figure:
    """Each flow's p50 and p99 alone and together (log scale): the bars that grow together are the flows hurt."""
    import plotly.graph_objects as go

    flows = list(point["together"]["flows"])
    alone = point.get("alone") or {}
    fig = go.Figure()
    for key in ("p50", "p99"):
        fig.add_bar(name=f"{key} alone", x=flows, y=[_pct(alone.get(f), key) for f in flows])
        fig.add_bar(name=f"{key} together", x=flows, y=[_pct(point["together"]["flows"][f], key) for f in flows])
    fig.update_layout(barmode="group", yaxis_type="log", yaxis_title="one-way latency (us)", height=400,
                      title=f"{point['mw']}: each flow alone and together")
    return Figure("scenario", f"scenario-{point['mw']}-{len(point.get('label') or '')}", f"{point['mw']}: alone and together", fig)


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><tr>{head}</tr>{body}</table>"
