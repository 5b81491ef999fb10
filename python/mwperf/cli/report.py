"""``mwperf report DIR``: re-print the tables (the headline last), regenerate
results.csv and write report.html from results.jsonl (the one source of
truth of a run directory); ``--format svg|png`` writes every figure of the
report as DIR/plots/ID.svg|png (for documents) instead of the tables."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from mwperf.display import shown
from mwperf.errors import UsageError

__all__ = ["add_parser", "command", "report"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    report = sub.add_parser("report", help="re-print the tables, regenerate results.csv, write report.html",
                            description="Re-print the tables of DIR, regenerate results.csv and write report.html "
                                        "(interactive figures, opens offline) from results.jsonl.",
                            epilog="examples:\n  mwperf report results/mine\n  mwperf report results/mine --format md"
                                   " > results.md\n  mwperf report results/mine --format svg   # DIR/plots/*.svg",
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    report.add_argument("dir", metavar="DIR", help="run directory (holds results.jsonl)")
    report.add_argument("--format", choices=("text", "md", "svg", "png"), default="text",
                        help="tables as text (default) or md; svg, png: every figure as DIR/plots/ID.svg|png")
    report.add_argument("--point", metavar="N", type=int,
                        help="the point whose latency histogram and time series are shown (default: the first "
                             "latency point)")
    report.add_argument("--db", metavar="STORE", nargs="?", const="",
                        help="add the history of the run's points from the results store (default store: "
                             "$MWPERF_DB, else results/mwperf.duckdb)")
    report.add_argument("--host-pair", metavar="PUB:SUB[,...]",
                        help="only the tables of these pairs of hosts (a lab's sweep --inventory: a table per pair)")
    report.set_defaults(func=command)


def discovery_run(path: Path) -> bool:
    """A run directory of discovery mode: discovery.jsonl and no results.jsonl."""
    from mwperf.export.discovery_report import RESULTS
    from mwperf.results.rundir import RESULTS_JSONL

    return (path / RESULTS).is_file() and not (path / RESULTS_JSONL).exists()


def discovery_report_again(path: Path, fmt: str, out: TextIO, err: TextIO) -> int:
    """A discovery run's tables and report.html again from its discovery.jsonl."""
    from mwperf.export.discovery_report import all_sections, discovery_report, read_discovery
    from mwperf.export.tables import render_markdown, render_text

    if fmt not in ("text", "md"):
        raise UsageError("--format", fmt, "a discovery run has tables only (text or md)")
    records = read_discovery(path, lambda m: err.write(f"mwperf: warning: {m}\n"))
    sections = all_sections(records)
    out.write(render_markdown(sections) if fmt == "md" else render_text(sections))
    err.write(f"report: {discovery_report(records, path, f'mwperf discovery {path.name}')}\n")
    return 0


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    pairs = None if ns.host_pair is None else [p.strip() for p in ns.host_pair.split(",") if p.strip()]
    return report(ns.dir, ns.format, point=ns.point, db=ns.db, host_pairs=pairs)


def report(directory: str, fmt: str = "text", out: TextIO | None = None, err: TextIO | None = None,
           point: int | None = None, db: str | None = None, host_pairs: list[str] | None = None) -> int:
    from mwperf.export.csv import RESULTS_CSV, ResultsCsv
    from mwperf.export.html import REPORT_HTML, HtmlReport
    from mwperf.export.plots import PlotFiles
    from mwperf.export.tables import Tables
    from mwperf.results.rundir import RunDir, read_records, records_file_problem

    out = out or sys.stdout
    err = err or sys.stderr
    path = Path(directory)
    if discovery_run(path):
        return discovery_report_again(path, fmt, out, err)
    problem = records_file_problem(path)
    if problem:
        raise UsageError("report", directory, problem)
    rundir = RunDir(path)
    usable = records = read_records(path, warn=lambda m: err.write(f"mwperf: warning: {m}\n"))
    try:
        ResultsCsv().write(records, rundir)
    except OSError as exc:
        err.write(f"mwperf: warning: cannot rewrite {RESULTS_CSV}: {exc.strerror or exc}\n")
    run = rundir.read_run_json()
    if point is not None and not any(r.point == point for r in usable):
        have = sorted(r.point for r in usable)
        there = f"points {have[0]}-{have[-1]}" if have else "it holds no usable point"
        raise UsageError("--point", str(point), f"no such point in {directory} ({there})")
    if host_pairs is not None:
        there_pairs = sorted({r.host_pair for r in records if r.host_pair is not None})
        unknown = [p for p in host_pairs if p not in there_pairs]
        if unknown:
            raise UsageError("--host-pair", ",".join(host_pairs), f"{unknown[0]} is not a host pair of {directory} "
                                                                 f"(its pairs: {', '.join(there_pairs) or 'none'})")
    if run and run.get("status") not in (None, "complete"):
        err.write(f"mwperf: note: this run is '{shown(run.get('status'), 40)}'\n")
    if fmt in ("svg", "png"):
        for file in PlotFiles(fmt, point).write(usable, rundir):
            out.write(f"{file}\n")
    else:
        Tables(fmt, out).write(usable if host_pairs is None else [r for r in usable if r.host_pair in host_pairs],
                               rundir)
    history = []
    if db is not None:
        from mwperf.cli.db import history_for, reading_store

        history = history_for(reading_store(db or None), usable, (run or {}).get("hostname"))
    try:
        (html,) = HtmlReport(point, history).write(usable, rundir)
    except OSError as exc:
        err.write(f"mwperf: warning: cannot write {REPORT_HTML}: {exc.strerror or exc}\n")
    else:
        err.write(f"report: {html}\n")
    return 0
