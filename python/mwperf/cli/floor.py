"""``mwperf floor``: what no middleware can beat on this machine (memcpy
bandwidth, Unix socket, UDP and shared-memory ping-pongs) at the given sizes,
CPU placements and wait strategies, printed as tables; with ``--out DIR``
stored as DIR/floor.json (a run made with --no-floor, or an older one, gets
its floor and its "x floor" columns that way). ``mwperf run`` and ``sweep``
measure it by themselves before their first point."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from mwperf.cli.common import described_agent, no_agent
from mwperf.errors import UnitError, UsageError
from mwperf.plan.options import CpuPlacement
from mwperf.plan.validate import parse_cpu
from mwperf.table import Row, snapshot
from mwperf.units import parse_list

__all__ = ["add_parser", "command"]

#: A run's default size (the option table's).
DEFAULT_SIZE = str(snapshot()["size"].default)


def _row(name: str) -> Row:
    """The agent's ``floor`` option ``name`` (its range, choices, default and help)."""
    return snapshot().command("floor")[name]


def add_parser(sub: argparse._SubParsersAction) -> None:
    wait, budget = _row("wait"), _row("budget")
    floor = sub.add_parser("floor", help="what no middleware can beat here: memcpy, Unix socket, UDP and "
                                         "shared-memory ping-pongs", description=__doc__)
    floor.add_argument("--size", metavar="LIST", help=f"message sizes: 32,1k,63000 (default: {DEFAULT_SIZE})")
    floor.add_argument("--cpu", metavar="PUB,SUB", action="append",
                       help="cores of the two ends, or 'none'; give it twice for two placements "
                            "(--cpu 0,0 --cpu 0,1; default: 0,1, or 0,0 on one CPU)")
    floor.add_argument("--wait", metavar="LIST", help=f"{' and/or '.join(wait.choices or ())}: {wait.help} "
                                                      f"(default: {wait.default})")
    floor.add_argument("--budget", metavar="T", default=budget.shown(budget.default),
                       help=f"{budget.help} (default: {budget.shown(budget.default)})")
    floor.add_argument("--out", metavar="DIR", help="store it as DIR/floor.json (the report shows it)")
    floor.add_argument("--agent", metavar="PATH", help="mwperf-agent binary")
    floor.add_argument("--format", choices=("text", "md"), default="text", help="table format")
    floor.add_argument("--force", action="store_true",
                       help="measure even while another mwperf measurement runs on this machine (both are perturbed)")
    floor.set_defaults(func=command)


def _parsed(flag: str, row: Row, text: str) -> Any:
    try:
        return row.parse(text)
    except ValueError as exc:
        raise UsageError(flag, text, str(exc)) from None


def _sizes(text: str | None) -> list[int]:
    return sorted(set(_parsed("--size", _row("sizes"), text or DEFAULT_SIZE)))


def _waits(text: str | None) -> list[str]:
    row = _row("wait")
    try:
        waits = parse_list(text or row.default)
    except UnitError as exc:
        raise UsageError("--wait", text, str(exc)) from None
    return list(dict.fromkeys(_parsed("--wait", row, wait) for wait in waits))


def _budget(text: str) -> float:
    return _parsed("--budget", _row("budget"), text) / 1e9


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    from mwperf.execute import lock
    from mwperf.execute.floor import measure
    from mwperf.export.tables import floor_sections, render_markdown, render_text
    from mwperf.results.floor import shape_floor, write_floor
    from mwperf.results.rundir import RunDir, check_new_dir

    sizes, waits, budget = _sizes(ns.size), _waits(ns.wait), _budget(ns.budget)
    cpus: list[CpuPlacement] = list(dict.fromkeys(parse_cpu(text) for text in (ns.cpu or [None])))
    if ns.out is not None:
        check_new_dir(ns.out, fresh=False)
    found = described_agent(ns.agent)
    if found is None:
        return no_agent()
    groups = {(cpu, wait): sizes for cpu in cpus for wait in waits}
    if ns.out is None:
        with lock.measuring(force=ns.force, argv=argv):
            doc = measure(found[0], groups, budget)
    else:
        with lock.hold(ns.out, force=ns.force, argv=argv):
            doc = measure(found[0], groups, budget)
            path = write_floor(RunDir(ns.out), doc)
    sections = floor_sections(shape_floor(doc))
    sys.stdout.write(render_markdown(sections) if ns.format == "md" else render_text(sections))
    sys.stdout.write(f"\n{len(doc['floors'])} floor(s) in {doc['elapsed_s']:.1f} s, {doc['budget_s'] * 1000:g} ms "
                     f"a measurement" + (f" -> {path}" if ns.out is not None else "") + "\n")
    return 0 if not any(f["error"] for f in doc["floors"]) else 1
