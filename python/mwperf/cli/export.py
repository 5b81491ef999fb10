"""``mwperf export DIR --format perftest-csv``: a run in another tool's layout."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mwperf.cli.common import PROG
from mwperf.errors import UsageError

__all__ = ["add_parser", "command"]

FORMATS = ("perftest-csv",)


def add_parser(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser("export", help="write a run in another tool's layout")
    export.add_argument("dir", metavar="DIR", help="run directory")
    export.add_argument("--format", choices=FORMATS, required=True, help="perftest-csv: RTI Perftest's tables")
    export.add_argument("--out", metavar="DIR", help="where the files go (default: DIR/perftest)")
    export.set_defaults(func=command)


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.export.perftest import PerftestCsv
    from mwperf.results.rundir import RESULTS_JSONL, RunDir, read_records

    path = Path(ns.dir)
    if not (path / RESULTS_JSONL).is_file():
        raise UsageError("export", ns.dir, f"no {RESULTS_JSONL} there")
    written = PerftestCsv(Path(ns.out) if ns.out else None).write(read_records(path), RunDir(path))
    if not written:
        print(f"{PROG}: no ok latency or throughput point in {ns.dir}: nothing to export", file=sys.stderr)
        return 1
    for file in written:
        print(file)
    return 0
