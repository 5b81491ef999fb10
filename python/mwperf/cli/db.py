"""``mwperf db ingest DIR... | info | upgrade``: the results store.

The store is ``--db`` (a DuckDB file, or a ``postgresql://`` URL), else
``$MWPERF_DB``, else ``results/mwperf.duckdb``. ``run`` and ``sweep`` ingest
what they measured when a store is configured, or when they write into the
default results folder (:func:`ingest_after_run`).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from mwperf.errors import UsageError

if TYPE_CHECKING:
    from mwperf.model.record import Record

__all__ = ["add_parser", "command", "add_db_option", "CONFIGURED", "reading_store", "check_run_store",
           "ingest_after_run", "history_for"]

DB_HELP = ("results store: a DuckDB file or postgresql://USER@HOST/DB (default: $MWPERF_DB, else "
           "results/mwperf.duckdb)")


# ``--db`` given without a value (``check --db``): the configured store.
CONFIGURED = "\0configured"


def add_db_option(parser: argparse.ArgumentParser, text: str = DB_HELP, value_optional: bool = False) -> None:
    """``--db STORE``; with *value_optional*, a bare ``--db`` is :data:`CONFIGURED`."""
    if value_optional:
        parser.add_argument("--db", metavar="STORE", nargs="?", const=CONFIGURED, help=text)
    else:
        parser.add_argument("--db", metavar="STORE", help=text)


def add_parser(sub: argparse._SubParsersAction) -> None:
    db = sub.add_parser("db", help="the results store: ingest run directories, what it holds",
                        description="The results store (DuckDB file or PostgreSQL): every run over time, for "
                                    "mwperf history, mwperf check --db, SQL and mwperf.load(db=...).",
                        epilog="examples:\n  mwperf db ingest results/*/\n"
                               "  mwperf db ingest results/nightly --db postgresql://ci@dbhost/mwperf\n"
                               "  mwperf db info",
                        formatter_class=argparse.RawDescriptionHelpFormatter)
    what = db.add_subparsers(dest="db_command", metavar="ingest|info|upgrade")
    ingest = what.add_parser("ingest", help="put run directories into the store (a run is stored once)")
    ingest.add_argument("dirs", metavar="DIR", nargs="+", help="run directories")
    add_db_option(ingest)
    info = what.add_parser("info", help="what the store holds")
    add_db_option(info)
    upgrade = what.add_parser("upgrade", help="upgrade a store an older mwperf made")
    add_db_option(upgrade)
    db.set_defaults(func=command)


def reading_store(option: str | None) -> str:
    """The store a reading command uses; UsageError when there is none."""
    from mwperf.store.connect import DEFAULT_STORE, resolve

    url, _ = resolve(option)
    if url is None:
        raise UsageError("--db", option, f"no results store: give --db FILE|postgresql://..., or set MWPERF_DB "
                                         f"(the default, {DEFAULT_STORE}, does not exist)")
    return url


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.store import opened
    from mwperf.store.connect import DEFAULT_STORE, resolve, shown_url
    from mwperf.store.query import summary

    if ns.db_command is None:
        raise UsageError("db", None, "what: ingest DIR..., info or upgrade (see mwperf db --help)")
    if ns.db_command == "ingest":
        from mwperf.results.rundir import read_records, records_file_problem

        url, explicit = resolve(ns.db)
        if url is None and explicit:
            raise UsageError("--db", ns.db, "names no store ('none' is for run and sweep)")
        url = url or str(DEFAULT_STORE)
        for each in ns.dirs:
            problem = records_file_problem(each)
            if problem:
                raise UsageError("db ingest", each, problem)
            read_records(each, warn=_warn)  # a run the loader refuses (Refused): before the store is made or opened
        with opened(url, write=True) as conn:
            from mwperf.store.ingest import ingest_dir

            for each in ns.dirs:
                print(ingest_dir(conn, each, warn=_warn).line())
        print(f"store: {shown_url(url)}")
        return 0
    url = reading_store(ns.db)
    with opened(url, write=ns.db_command == "upgrade") as conn:
        if ns.db_command == "upgrade":
            print(f"{shown_url(url)}: store version {summary(conn)['store_version']}")
            return 0
        s = summary(conn)
    print(f"store: {shown_url(url)} (store version {s['store_version']})\n"
          f"runs: {s['runs']}, points: {s['points']}, hosts: {', '.join(s['hosts']) or '-'}\n"
          f"from {s['first'] or '-'} to {s['last'] or '-'}")
    return 0


def _warn(message: str) -> None:
    print(f"mwperf: warning: {message}", file=sys.stderr)


def check_run_store(option: str | None, out_dir: Path) -> str | None:
    """Before a run: the store it will ingest into (None: none). A store given
    explicitly (--db, $MWPERF_DB) that cannot be used is bad input now, not
    after the measurements; the default one is only tried at the end."""
    from mwperf.store import opened
    from mwperf.store.connect import resolve

    url, explicit = resolve(option, run_dir=out_dir)
    if url is not None and explicit:
        with opened(url, write=True):
            pass
    return url


def history_for(url: str, records: list[Record], hostname: str | None) -> list:
    """The report's history figures for the points of ``records`` (a run on
    ``hostname``): their series in the store, change points marked."""
    from mwperf.analysis.history import build_series, find_change_points, series_id
    from mwperf.export.history_figures import history_figures
    from mwperf.store import opened
    from mwperf.store.query import stored_points

    mine = [r for r in records if r.ok]
    if not mine:
        return []
    wanted = {series_id(r, hostname) for r in mine}
    with opened(url) as conn:
        entries = stored_points(conn, mw=sorted({r.mw for r in mine}), mode=sorted({r.mode for r in mine}),
                                size=sorted({r.size for r in mine}))
    series = [s for s in build_series(entries) if (s.key, s.host, s.placement) in wanted]
    for each in series:
        find_change_points(each)
    return history_figures(series)


def ingest_after_run(url: str | None, run_dir: Path, code: int, err: TextIO | None = None) -> int:
    """After a run: its directory into the store, and its report.html again
    with the history of its points. A failure is a warning (the results are
    in the run directory; ``mwperf db ingest`` stores them later) and never
    changes the run's exit code. Where the report is, last (the run's own
    end left it to this: :func:`mwperf.cli.common.run_outputs`)."""
    from mwperf.export.html import HtmlReport
    from mwperf.results.rundir import RunDir, read_records
    from mwperf.store import opened
    from mwperf.store.connect import secrets, shown_url
    from mwperf.store.ingest import ingest_dir

    err = err or sys.stderr
    if url is None or not Path(run_dir, "results.jsonl").is_file():
        return code
    try:
        with opened(url, write=True) as conn:
            done = ingest_dir(conn, run_dir)
        err.write(f"store: {done.outcome} in {shown_url(url)}\n")
    except Exception as exc:  # noqa: BLE001 - whatever goes wrong, the run's results are safe
        said = " ".join(str(exc).split())
        for secret in secrets(url):
            said = said.replace(secret, "***")
        err.write(f"mwperf: warning: not stored in {shown_url(url)}: {said}; the results are "
                  f"in {run_dir} (mwperf db ingest {run_dir} --db ... stores them)\n")
        return _report_last(run_dir, code, err)
    try:
        rundir = RunDir(run_dir)
        records = read_records(run_dir)
        figures = history_for(url, records, (rundir.read_run_json() or {}).get("hostname"))
        if figures:
            HtmlReport(history=figures).write(records, rundir)
    except Exception as exc:  # noqa: BLE001 - the report without its history is still the report
        err.write(f"mwperf: warning: report.html without the history: {' '.join(str(exc).split())}\n")
    return _report_last(run_dir, code, err)


def _report_last(run_dir: Path, code: int, err: TextIO) -> int:
    """The last word, after the store's: where to look."""
    from mwperf.export.html import REPORT_HTML

    if Path(run_dir, REPORT_HTML).is_file():
        err.write(f"report: {Path(run_dir, REPORT_HTML)}\n")
    return code
