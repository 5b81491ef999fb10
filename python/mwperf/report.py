"""``mwperf report DIR``: re-print the tables, regenerate results.csv and
write report.html from results.jsonl (the one source of truth of a run
directory); ``--format svg`` also writes every plot as DIR/plots/ID.svg."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from mwperf.export.html import plot_svgs, render_html
from mwperf.export.tables import render
from mwperf.options import UsageError
from mwperf.rundir import RESULTS_JSONL, RunDir, read_records

__all__ = ["report", "write_html"]

REPORT_HTML = "report.html"


def write_html(path: Path, records: list[dict], run: dict | None) -> Path:
    """DIR/report.html, written whole (a reader never sees half a page)."""
    target = path / REPORT_HTML
    tmp = target.with_suffix(".html.tmp")
    tmp.write_text(render_html(records, run, f"mwperf run {path.name}"), encoding="utf-8")
    tmp.replace(target)
    return target


def report(directory: str, fmt: str = "text", out: TextIO | None = None, err: TextIO | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    path = Path(directory)
    if not (path / RESULTS_JSONL).is_file():
        raise UsageError(f"report {directory}: no {RESULTS_JSONL} there")
    records = read_records(path, warn=lambda m: err.write(f"mwperf: warning: {m}\n"))
    usable = [r for r in records if all(k in r for k in ("mw", "mode", "size"))]
    if len(usable) != len(records):
        err.write(f"mwperf: warning: {len(records) - len(usable)} record(s) without mw/mode/size skipped\n")
    try:
        RunDir(path).regenerate_csv()
    except OSError as exc:
        err.write(f"mwperf: warning: cannot rewrite results.csv: {exc.strerror or exc}\n")
    run = RunDir(path).read_run_json()
    if run and run.get("status") not in (None, "complete"):
        err.write(f"mwperf: note: this run is '{run.get('status')}'\n")
    if fmt == "svg":
        plots = path / "plots"
        plots.mkdir(exist_ok=True)
        for _, chart_id, svg in plot_svgs(usable):
            (plots / f"{chart_id}.svg").write_text(svg + "\n", encoding="utf-8")
            out.write(f"{plots / (chart_id + '.svg')}\n")
    else:
        out.write(render(usable, fmt))
    try:
        html = write_html(path, usable, run)
    except OSError as exc:
        err.write(f"mwperf: warning: cannot write {REPORT_HTML}: {exc.strerror or exc}\n")
    else:
        err.write(f"report: {html}\n")
    return 0
