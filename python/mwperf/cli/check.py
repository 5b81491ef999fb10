"""``mwperf check BUDGETS.yaml DIR... | --db [STORE]``: declarative budgets
(:mod:`mwperf.analysis.budgets`) as a CI gate, decided on each point's
launches: the checks that do not hold are printed; exit 0 when every check
holds, 1 when one is violated or not measurable (or a budget matches no
point), else 3 when one cannot be decided (too few launches, or launches on
both sides of the limit), 2 for a bad budgets file. ``--db`` checks the
newest run in the store; a budget whose points only older runs hold matches
no point, and says which older run has them."""

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
        description="Check the budgets of BUDGETS.yaml on the points of run directories, or of the newest run "
                    "in the results store (--db), each on its launches (95 %% bounds of their median). Exit 0: "
                    "every check holds; 1: one is violated or not measurable, or a budget matches no point; 3: "
                    "none of that, but one cannot be decided (too few launches: 5 needed; or launches on both "
                    "sides of the limit); 2: the budgets file is bad.",
        epilog="example budgets.yaml:\n  budgets:\n    - match: {mw: cyclonedds, mode: latency, size: 1k}\n"
               "      p99: \"<= 2ms\"\n      loss: \"<= 0.1%\"\n\n"
               "examples:\n  mwperf check budgets.yaml results/mine\n  mwperf check budgets.yaml --db\n",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    check.add_argument("budgets", metavar="BUDGETS.yaml", help="the budgets")
    check.add_argument("dirs", metavar="DIR", nargs="*", help="run directories")
    add_db_option(check, "check the newest run in the store instead (default store: $MWPERF_DB, else "
                         "results/mwperf.duckdb)", value_optional=True)
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


def _from_store(option: str | None) -> tuple[list[tuple[Record, str | None]], list[tuple[Record, str | None]]]:
    """The records of the store's newest run, and those of the older runs."""
    from mwperf.cli.db import reading_store
    from mwperf.store import opened
    from mwperf.store.query import stored_points

    with opened(reading_store(None if option == CONFIGURED else option)) as conn:
        entries = stored_points(conn)
    newest = entries[-1].run_key if entries else None  # oldest run first
    return ([(e.record, e.hostname) for e in entries if e.run_key == newest],
            [(e.record, e.hostname) for e in entries if e.run_key != newest])


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def check(budgets_file: str, dirs: list[str], db: str | None, out: TextIO) -> int:
    from mwperf.analysis.budgets import CANNOT_DECIDE, HOLDS, NO_POINT, evaluate, load_budgets, matches
    from mwperf.analysis.verdicts import UNDECIDED_EXIT
    from mwperf.export.terminal import table_text
    from mwperf.model.labels import point_id

    budgets = load_budgets(budgets_file)  # a bad file is named before anything is read
    if bool(dirs) == (db is not None):
        raise UsageError("check", None, "give run directories or --db (one of them)")
    points, older = _from_store(db) if db is not None else (_from_dirs(dirs), [])
    checks = evaluate(budgets, points)
    for c in checks:
        if c.verdict == NO_POINT:
            before = [r for r, h in older if matches(c.budget, r, h)]
            if before:
                run = points[0][0].run_id if points else "?"
                c.note = f"not in the newest run ({run}); run {before[-1].run_id} has it, older runs are not checked"
    bad = [c for c in checks if c.verdict != HOLDS]
    if bad:
        rows = []
        for c in bad:
            point = point_id(c.record).label if c.record is not None else "-"
            limit = f"{c.limit.name} {c.limit.text}" if c.limit else "-"
            rows.append([c.verdict.upper(), c.budget.describe(), point, limit, _fmt(c.value), str(c.launches),
                         c.note, (c.record.run_id if c.record is not None else None) or "-"])
        out.write(table_text(["verdict", "budget", "point", "limit", "value", "launches", "why", "run"], rows,
                             left=(0, 1, 2, 3, 6, 7)))
    counts = {v: sum(1 for c in checks if c.verdict == v) for v in dict.fromkeys(c.verdict for c in checks)}
    summary = ", ".join(f"{n} {v}" for v, n in counts.items())
    out.write(f"{len(budgets)} budget(s), {len(checks)} check(s): {summary}\n")
    if any(c.verdict not in (HOLDS, CANNOT_DECIDE) for c in checks):
        return 1
    return UNDECIDED_EXIT if bad else 0
