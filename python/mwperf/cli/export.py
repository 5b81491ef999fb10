"""``mwperf export DIR --format perftest-csv|parquet``: a run in another
tool's layout (RTI Perftest's CSV tables) or as Parquet for pandas, Arrow,
DuckDB and the like."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mwperf.cli.common import PROG
from mwperf.export.exporter import Exporter
from mwperf.errors import UsageError

__all__ = ["add_parser", "command"]

FORMATS = ("perftest-csv", "parquet")


def add_parser(sub: argparse._SubParsersAction) -> None:
    export = sub.add_parser("export", help="write a run as Parquet or in RTI Perftest's layout",
                            description="Write the run of DIR (its results.jsonl) in another format.",
                            epilog="examples:\n  mwperf export results/sweep --format parquet\n"
                                   "  mwperf export results/mine --format perftest-csv --out tables/",
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    export.add_argument("dir", metavar="DIR", help="run directory")
    export.add_argument("--format", choices=FORMATS, required=True,
                        help="perftest-csv: RTI Perftest's tables (DIR/perftest/); parquet: DIR/results.parquet, "
                             "one row per point, and DIR/subscribers.parquet after a fan-out")
    export.add_argument("--out", metavar="DIR", help="where the files go (default: DIR/perftest or DIR)")
    export.set_defaults(func=command)


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.results.rundir import RunDir, read_records, records_file_problem

    path = Path(ns.dir)
    problem = records_file_problem(path)
    if problem:
        raise UsageError("export", ns.dir, problem)
    records = read_records(path, warn=lambda m: sys.stderr.write(f"{PROG}: warning: {m}\n"))
    exporter: Exporter
    if ns.format == "parquet":
        from mwperf.export.parquet import Parquet

        exporter = Parquet(Path(ns.out) if ns.out else None)
    else:
        from mwperf.export.perftest import PerftestCsv

        exporter = PerftestCsv(Path(ns.out) if ns.out else None)
    written = exporter.write(records, RunDir(path))
    if not written:
        print(f"{PROG}: no ok latency or throughput point in {ns.dir}: nothing to export", file=sys.stderr)
        return 1
    for file in written:
        print(file)
    return 0
