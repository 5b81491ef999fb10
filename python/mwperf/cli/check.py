"""``mwperf check BUDGETS.yaml DIR... | --db [STORE]``: declarative budgets
(:mod:`mwperf.analysis.budgets`) as a CI gate: the checks that do not hold
are printed; exit 0 when every check holds, 1 when one is violated or not
measurable (or a budget matches no point), 2 for a bad budgets file."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, TextIO

from mwperf.cli.db import CONFIGURED, add_db_option
from mwperf.errors import UsageError

if TYPE_CHECKING:
    from mwperf.model.record import Record

__all__ = ["add_parser", "command", "check"]

def add_parser(sub: argparse._SubParsersAction) -> None:
    check = sub.add_parser(
        "check", help="check budgets (p99 <= 2ms, loss <= 0.1%%, ...) on runs: a CI gate (exit 1 when one fails)",
        description="Check the budgets of BUDGETS.yaml on the points of run directories, or on the newest run "
                    "of every point in the results store (--db). Exit 0: every check holds; 1: one is violated "
                    "or not measurable, or a budget matches no point; 2: the budgets file is bad.",
        epilog="example budgets.yaml:\n  budgets:\n    - match: {mw: cyclonedds, mode: latency, size: 1k}\n"
               "      p99: \"<= 2ms\"\n      loss: \"<= 0.1%\"\n\n"
               "examples:\n  mwperf check budgets.yaml results/mine\n  mwperf check budgets.yaml --db\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("budgets", metavar="BUDGETS.yaml", help="the budgets")
    check.add_argument("dirs", metavar="DIR", nargs="*", help="run directories")
    add_db_option(check, "check the newest run of every point in the store instead (default store: "
                         "$MWPERF_DB, else results/mwperf.duckdb)", value_optional=True)
    check.set_defaults(func=command)


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    return check(ns.budgets, ns.dirs, ns.db, sys.stdout)


def _from_dirs(dirs: list[str]) -> list[tuple[Record, str | None]]:
    from mwperf.results.rundir import RunDir, read_records, records_file_problem

    points = []
    for each in dirs:
        problem = records_file_problem(each)
        if problem:
            raise UsageError("check", each, problem)
        host = (RunDir(each).read_run_json() or {}).get("hostname")
        warn = lambda m: print(f"mwperf: warning: {m}", file=sys.stderr)  # noqa: E731
        points += [(r, host) for r in read_records(each, warn=warn)]
    return points


def _from_store(option: str | None) -> list[tuple[Record, str | None]]:
    """The records of the newest run of every series (point, host, placement)."""
    from mwperf.analysis.history import series_id
    from mwperf.cli.db import reading_store
    from mwperf.store import opened
    from mwperf.store.query import stored_points

    with opened(reading_store(None if option == CONFIGURED else option)) as conn:
        entries = stored_points(conn)
    newest: dict[tuple, tuple[str, str]] = {}
    for e in entries:
        sid = series_id(e.record, e.hostname)
        when = (e.record.time or "", e.run_key)
        newest[sid] = max(newest.get(sid, when), when)
    return [(e.record, e.hostname) for e in entries if newest[series_id(e.record, e.hostname)][1] == e.run_key]


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def check(budgets_file: str, dirs: list[str], db: str | None, out: TextIO) -> int:
    from mwperf.analysis.budgets import HOLDS, load_budgets, evaluate
    from mwperf.export.terminal import table_text
    from mwperf.model.labels import point_id

    budgets = load_budgets(budgets_file)  # a bad file is named before anything is read
    if bool(dirs) == (db is not None):
        raise UsageError("check", None, "give run directories or --db (one of them)")
    points = _from_store(db) if db is not None else _from_dirs(dirs)
    checks = evaluate(budgets, points)
    bad = [c for c in checks if c.verdict != HOLDS]
    if bad:
        rows = []
        for c in bad:
            point = point_id(c.record).label if c.record is not None else "-"
            limit = f"{c.limit.name} {c.limit.text}" if c.limit else "-"
            rows.append([c.verdict.upper(), c.budget.describe(), point, limit, _fmt(c.value),
                         c.note, (c.record.run_id if c.record is not None else None) or "-"])
        out.write(table_text(["verdict", "budget", "point", "limit", "value", "why", "run"], rows,
                             left=(0, 1, 2, 3, 5, 6)))
    counts = {v: sum(1 for c in checks if c.verdict == v) for v in dict.fromkeys(c.verdict for c in checks)}
    summary = ", ".join(f"{n} {v}" for v, n in counts.items())
    out.write(f"{len(budgets)} budget(s), {len(checks)} check(s): {summary}\n")
    return 1 if bad else 0
