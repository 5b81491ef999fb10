"""``mwperf compare DIR_A DIR_B [...]``: the same points side by side, the
first run the baseline; ``--fail-if-slower`` / ``--fail-if-lossier`` make it
a CI gate (exit 1; 3: cannot decide), on the runs' launches and, with
``--db``, the launch-to-launch spread of the points' stored history."""

from __future__ import annotations

import argparse
import sys

from mwperf.cli.db import CONFIGURED, add_db_option

__all__ = ["add_parser", "command"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    compare = sub.add_parser("compare", help="the same points of several runs side by side (the first is the baseline)")
    compare.add_argument("dirs", metavar="DIR", nargs="+", help="run directories")
    compare.add_argument("--fail-if-slower", metavar="PCT", type=_percent,
                         help="exit 1 if a point's p50 latency is more than PCT %% above the baseline's at 95 %% "
                              "confidence (on the launches); exit 3 if its launches cannot tell")
    compare.add_argument("--fail-if-lossier", metavar="PCT", type=_percent,
                         help="exit 1 if a point's loss rate is more than PCT percentage points above the baseline's "
                              "at 95 %% confidence; exit 3 if its launches cannot tell")
    add_db_option(compare, "pool the gates' launch-to-launch spread with each point's history in the results store "
                           "(default store: $MWPERF_DB, else results/mwperf.duckdb)", value_optional=True)
    compare.add_argument("--force", action="store_true", help="compare runs measured under different placements")
    compare.add_argument("--versions", metavar="OLD,NEW[,...]", type=_names,
                         help="builds of one middleware point by point, each against the first "
                              "(cyclonedds,cyclonedds11): from one run directory, or the first's points from DIR "
                              "and the others' from a second")
    compare.set_defaults(func=command)


def _percent(text: str) -> float:
    value = text.strip().rstrip("%")
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: not a percentage") from None
    if not 0 <= number < 1e6:
        raise argparse.ArgumentTypeError(f"{text}: must be 0 or more")
    return number


def _history(option: str):
    """A point's stored runs but the given ones (its launches, a list a run), from the store."""
    from mwperf.cli.db import reading_store
    from mwperf.model.labels import point_id
    from mwperf.store import opened
    from mwperf.store.query import stored_points

    with opened(reading_store(None if option == CONFIGURED else option)) as conn:
        entries = stored_points(conn)
    runs: dict = {}
    for e in entries:
        if e.record.ok:
            runs.setdefault(point_id(e.record), {}).setdefault(e.run_key, []).append(e.record)

    def of(key, exclude: set) -> list:
        return [rs for rs in runs.get(key, {}).values() if rs[0].run_id not in exclude]

    return of


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.export.compare import compare_runs

    return compare_runs(ns.dirs, sys.stdout, fail_if_slower=ns.fail_if_slower,
                        fail_if_lossier=ns.fail_if_lossier, force=ns.force,
                        history=_history(ns.db) if ns.db is not None else None, versions=ns.versions)
