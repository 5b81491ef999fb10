"""``mwperf report DIR``: re-print the tables and regenerate results.csv
from results.jsonl (the one source of truth of a run directory)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from mwperf.export.tables import render
from mwperf.options import UsageError
from mwperf.rundir import RESULTS_JSONL, RunDir, read_records

__all__ = ["report"]


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
    out.write(render(usable, fmt))
    return 0
