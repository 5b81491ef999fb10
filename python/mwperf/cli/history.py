"""``mwperf history [--db STORE] [--mw ... --size ...]``: each point over the
stored runs (p50, p99, loss, CPU), its change points marked
(:mod:`mwperf.analysis.history`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from mwperf.cli.compare import _percent
from mwperf.cli.db import add_db_option
from mwperf.errors import UnitError, UsageError
from mwperf.units import parse_list, parse_rate_hz, parse_size

__all__ = ["add_parser", "command", "filters"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    history = sub.add_parser(
        "history", help="each point over the stored runs: p50, p99, loss, CPU, change points",
        description="Each point (as compare matches them) over the runs of the results store, oldest first, with "
                    "the change points Apache Otava finds in its p50, p99, loss and CPU. Runs on other hosts or "
                    "placements are other series unless --any-host / --any-placement.",
        epilog="examples:\n  mwperf history --mw cyclonedds --size 1k\n"
               "  mwperf history --db postgresql://ci@dbhost/mwperf --changes-only\n"
               "  mwperf history --json > history.json",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    add_db_option(history)
    for option, text in (("--mw", "middlewares"), ("--mode", "modes"), ("--size", "message sizes (1k, 63000)"),
                         ("--rate", "publish rates in Hz"), ("--host", "hosts (as run.json names them)"),
                         ("--host-pair", "pairs of hosts of a lab (PUB:SUB, as sweep --inventory names them)")):
        history.add_argument(option, metavar="LIST", help=f"only these {text}, comma-separated")
    history.add_argument("--any-host", action="store_true", help="one series across hosts")
    history.add_argument("--any-placement", action="store_true",
                         help="one series across CPU placements, wait strategies and links")
    history.add_argument("--pvalue", metavar="P", type=_fraction, default=None,
                         help="a change must be significant at P (t-test; default 0.001)")
    history.add_argument("--min-change", metavar="PCT", type=_percent, default=None,
                         help="and its means differ by more than PCT %% (default 10)")
    history.add_argument("--changes-only", action="store_true", help="only the points with a change point")
    history.add_argument("--json", action="store_true", help="the series as JSON")
    history.set_defaults(func=command)


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text}: not a number") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"{text}: must be between 0 and 1")
    return value


def _items(option: str, text: str | None, parse=str) -> list | None:
    if text is None:
        return None
    try:
        return [parse(item) for item in parse_list(text)]
    except UnitError as exc:
        raise UsageError(option, text, str(exc)) from None


def filters(ns: argparse.Namespace) -> dict:
    """The --mw/--mode/--size/--rate/--host/--host-pair filters as the store's query takes them."""
    return {"mw": _items("--mw", ns.mw), "mode": _items("--mode", ns.mode),
            "size": _items("--size", ns.size, parse_size), "rate": _items("--rate", ns.rate, parse_rate_hz),
            "host": _items("--host", ns.host), "host_pair": _items("--host-pair", ns.host_pair)}


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.analysis.history import DEFAULT_MIN_CHANGE, DEFAULT_PVALUE, build_series, find_change_points
    from mwperf.cli.db import reading_store
    from mwperf.store import opened
    from mwperf.store.query import stored_points

    wanted = filters(ns)
    with opened(reading_store(ns.db)) as conn:
        entries = stored_points(conn, **wanted)
    series = build_series(entries, any_host=ns.any_host, any_placement=ns.any_placement)
    pvalue = ns.pvalue if ns.pvalue is not None else DEFAULT_PVALUE
    min_change = ns.min_change / 100 if ns.min_change is not None else DEFAULT_MIN_CHANGE
    for each in series:
        find_change_points(each, max_pvalue=pvalue, min_change=min_change)
    if ns.changes_only:
        series = [s for s in series if s.changes]
    if ns.json:
        json.dump([_as_json(s) for s in series], sys.stdout, indent=1, default=str)
        sys.stdout.write("\n")
    else:
        write_text(series, sys.stdout, pvalue, min_change)
    return 0


def _as_json(series) -> dict:
    from mwperf.analysis.history import placement_label

    return {"point": series.label, "host": series.host, "placement": placement_label(series.placement),
            "runs": [{"run_id": r.run_id, "run_key": r.run_key, "time": r.time, "repetitions": r.repetitions,
                      **r.values, "provenance": r.provenance} for r in series.runs],
            "change_points": [{"metric": c.metric, "run": c.index + 1, "run_id": series.runs[c.index].run_id,
                               "before": c.before, "after": c.after, "change": c.change, "pvalue": c.pvalue}
                              for c in series.changes]}


def write_text(series: list, out: TextIO, pvalue: float, min_change: float) -> None:
    from mwperf.analysis.history import METRICS
    from mwperf.export.terminal import table_text

    if not series:
        out.write("no stored point matches (mwperf db info says what the store holds)\n")
        return
    header = ["#", "time", "run", *(f"{h} ({u})" for h, u, _ in METRICS.values()), "change point"]
    for s in series:
        out.write(f"== {s.label} | {s.where}\n")
        rows = []
        for i, run in enumerate(s.runs):
            marks = "; ".join(c.text() for c in s.changes if c.index == i)
            rows.append([str(i + 1), (run.time or "-")[:19].replace("T", " "), run.run_id or "-",
                         *("-" if run.values[m] is None else f"{run.values[m]:.4g}" for m in METRICS),
                         f"<- {marks}" if marks else ""])
        out.write(table_text(header, rows, left=(1, 2, len(header) - 1)))
        out.write("\n")
    changes = sum(len(s.changes) for s in series)
    out.write(f"{len(series)} point(s), {changes} change point(s) (Apache Otava: t-test p < {pvalue:g} and a change "
              f"of more than {min_change:.0%})\n")
