"""``mwperf max-rate``: per middleware, size and QoS, the highest publish rate
that meets a criterion (``--loss 1%``, optionally ``--p99 2ms``), found by a
probabilistic bisection over rate-mode points (:mod:`mwperf.execute.search`);
``--resume DIR`` finishes an interrupted search from its probes.

Its options are ``mwperf run``'s (``--rate``: where each search starts), the
criterion and the search's step and bounds; or a max-rate plan (a sweep plan
with a ``search`` mapping, ``plans/max-rate.yaml``) whose options and
criterion the command line's criterion options override. Every probe is a
record of the run directory with its ``search`` section; the tables and
report.html end with the answer (a table and a figure of max rate vs size).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Mapping, TextIO

from mwperf.cli.common import described_agent, no_agent, run_outputs
from mwperf.cli.run import add_run_options, request
from mwperf.errors import PlanError, UsageError
from mwperf.execute.progress import format_eta
from mwperf.execute.search import DEFAULT_START_HZ, Criterion, Search, parse_criterion, worst_case_probes, worst_case_s
from mwperf.model.record import Record
from mwperf.plan.budget import check_budget
from mwperf.plan.options import PlannedPoint

__all__ = ["add_parser", "command", "describe", "plan_cells", "PLAN_FILE"]

PLAN_FILE = "plan.yaml"
#: The adaptive stop of every probe on its latency, with --p99, unless --precision is given.
DEFAULT_PRECISION = "5%"


def _stop(values: dict, crit: Criterion | None) -> None:
    """Each probe stops on what it is judged by: once its loss lies below or above
    the loss allowed (the agent's --stop-loss), with --p99 its p50 and p99 too."""
    if crit is None or crit.p99_us is not None:
        values.setdefault("precision", (DEFAULT_PRECISION,))
    if crit is not None:
        values.setdefault("stop-loss", (f"{100 * max(crit.loss, 1e-6):g}%",))


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("max-rate", help="the highest publish rate meeting a criterion, per middleware and size",
                            description="Search, per middleware, size and QoS, the highest publish rate whose "
                                        "rate-mode point meets the criterion: a probabilistic bisection that "
                                        "probes again near the boundary (a noisy or failed probe neither caps nor "
                                        "inflates the answer) until the rate the limit lies above at 95 %% is "
                                        "within --step of its median. Options as mwperf run's (--rate: where the "
                                        "search starts), or a max-rate PLAN.")
    parser.add_argument("plan", metavar="PLAN.yaml", nargs="?",
                        help="a max-rate plan (plans/max-rate.yaml): run options and a search mapping")
    crit = parser.add_argument_group("the criterion and the search")
    crit.add_argument("--loss", metavar="P", help="at most this share of the samples due may not arrive (lost or "
                                                  "unsent), e.g. 1%%")
    crit.add_argument("--p99", metavar="T", help="and a one-way p99 latency of at most T, e.g. 2ms")
    crit.add_argument("--step", metavar="P", help="stop when the answer is within P of the limit's median "
                                                  "(default: 5%%)")
    crit.add_argument("--bounds", metavar="LO,HI", help="the lowest and highest rate searched (default: 1,1M)")
    crit.add_argument("--dry-run", action="store_true",
                      help="print the searches and their worst-case time; run nothing")
    crit.add_argument("--resume", metavar="DIR", help="finish an interrupted search's run directory: its probes are "
                                                      "replayed and each search goes on where it stopped")
    add_run_options(parser)
    parser.set_defaults(func=command)


def _criterion(ns: argparse.Namespace, written: Mapping[str, str] | None, source: str | None) -> Criterion:
    """The command line's criterion options, else the plan's ``search`` mapping's."""
    written = written or {}
    given = {key: getattr(ns, key) if getattr(ns, key) is not None else written.get(key)
             for key in ("loss", "p99", "step", "bounds")}
    try:
        return parse_criterion(given["loss"], given["p99"], given["step"], given["bounds"])
    except UsageError as exc:
        key = (exc.option or "").lstrip("-")
        if source is None or getattr(ns, key, None) is not None:
            raise
        raise PlanError(source, f"search.{key}", exc.value, exc.reason) from None


def _command_line_cells(ns: argparse.Namespace, agent: str, agent_info, crit: Criterion,
                        check_out: bool = True) -> list[PlannedPoint]:
    from mwperf.plan.validate import build_run_options

    for flag, given in (("--launches", ns.launches), ("--max-launches", ns.max_launches)):
        if given is not None:
            raise UsageError(flag, str(given), "not with max-rate: a search's probe is one launch")
    if ns.mode not in (None, "rate"):
        raise UsageError("--mode", ns.mode, "max-rate searches over rate-mode points (leave --mode out)")
    req = request(ns)
    values = dict(req.values)
    rates = values.get("rate", (str(DEFAULT_START_HZ),))
    if len(rates) != 1:
        raise UsageError("--rate", ns.rate, "one rate: where each search starts")
    values.update(mode=("rate",), rate=rates)
    _stop(values, crit)
    opts = build_run_options(replace(req, values=values), agent_info, agent=agent, check_out=check_out)
    if opts.both_directions:
        raise UsageError("--direction", "both", "a search runs one direction (run it again with the hosts swapped)")
    return [PlannedPoint(opts, point) for point in opts.points()]


def plan_cells(plan, agent: str | None, agent_info, cpu_count: int | None = None,
               crit: Criterion | None = None) -> list[PlannedPoint]:
    """A max-rate plan's searches: its points, in rate mode at its one start rate."""
    from mwperf.plan.sweep_plan import expand
    from mwperf.plan.validate import default_out

    options = dict(plan.options)
    if options.setdefault("mode", ("rate",)) != ("rate",):
        raise PlanError(plan.source, "mode", ",".join(options["mode"]), "a max-rate plan's points are rate mode")
    if len(options.setdefault("rate", (str(DEFAULT_START_HZ),))) != 1:
        raise PlanError(plan.source, "rate", ",".join(options["rate"]), "one rate: where each search starts")
    _stop(options, crit)
    if plan.repetitions not in (None, 1) or plan.max_launches not in (None, 1):
        raise PlanError(plan.source, "launches", str(plan.repetitions or plan.max_launches),
                        "a search's probe is one launch (leave it out)")
    points = expand(replace(plan, options=options), out=default_out(), agent=agent, agent_info=agent_info,
                    cpu_count=cpu_count, launches=1)
    return [replace(p, point_hash=None, repetition=None, repetitions=1) for p in points]


def _run_options(ns: argparse.Namespace) -> list[tuple[str, object]]:
    """The run options given on the command line (a plan's points take none)."""
    from mwperf.table import snapshot

    table = [(row.flag, getattr(ns, row.key, None)) for row in snapshot().user_rows]
    return table + [(f"--{k.replace('_', '-')}", getattr(ns, k)) for k in ("best", "keyed", "cpu", "link", "hosts",
                                                                          "data", "direction", "point_timeout",
                                                                          "launches", "max_launches")]


def describe(cells: list[PlannedPoint], crit: Criterion) -> str:
    """The searches, one a line, their worst-case time and (last line) ``N searches``."""
    width = len(str(len(cells)))
    lines = []
    for i, cell in enumerate(cells):
        start = cell.point.rate_hz or DEFAULT_START_HZ
        lines.append(f"{i + 1:>{width}}  {cell.point.label(cell.opts.table)}: from {start:g} Hz, at most "
                     f"{worst_case_probes(crit)} probes of at most {cell.point.planned_s:g} s")
    lines.append(f"criterion: {crit.said()}; step {100 * crit.step:g}%, rates {crit.bounds_hz[0]:g} to "
                 f"{crit.bounds_hz[1]:g} Hz")
    lines.append(f"at most about {format_eta(worst_case_s(cells, crit))} (every search at its most probes, "
                 "each at its full duration)")
    lines.append(f"{len(cells)} searches")
    return "\n".join(lines) + "\n"


def command(ns: argparse.Namespace, argv: list[str], out: TextIO | None = None) -> int:
    if ns.resume is not None:
        return _resume(ns, argv)
    return _start(ns, argv, out)


def _start(ns: argparse.Namespace, argv: list[str], out: TextIO | None = None,
           resumed: tuple[dict, list[Record]] | None = None) -> int:
    plan = None
    if ns.plan is not None:
        from mwperf.plan.sweep_plan import load_plan

        plan = load_plan(ns.plan)
        if plan.search is None:
            raise PlanError(ns.plan, "search", None, "not a max-rate plan (no search mapping: mwperf sweep runs it)")
        given = [flag for flag, value in _run_options(ns) if value]
        if given:
            raise UsageError(given[0], None, "with a PLAN, the points are the plan's (give the option there)")
    if getattr(ns, "reuse_agents", False) or (plan is not None and any(plan.options.get("reuse_agents", ()))):
        raise UsageError("--reuse-agents", None, "not with max-rate: each probe's rate follows from the last "
                                                 "probe's result, on agents of its own")
    crit = _criterion(ns, plan.search if plan else None, plan.source if plan else None)
    found = described_agent(ns.agent)
    if found is None:
        return no_agent()
    agent, agent_info = found
    cells = (plan_cells(plan, agent, agent_info, crit=crit) if plan
             else _command_line_cells(ns, agent, agent_info, crit, check_out=resumed is None))
    check_budget(plan.source if plan else "max-rate", len(cells) * worst_case_probes(crit), worst_case_s(cells, crit),
                 max_points=getattr(ns, "max_points", None), max_duration_ns=getattr(ns, "max_duration", None),
                 plan=plan is not None, what="probes", bound="at most")
    if ns.dry_run:
        (out or sys.stdout).write(describe(cells, crit))
        return 0
    far = None
    if cells[0].opts.hosts is not None:  # --hosts: each host given its bundle, the searches checked against it
        far, cells = _on_hosts(ns, cells, agent, crit)
    return _search(ns, argv, cells, crit, agent, plan.source if plan else None, plan.text if plan else None, resumed,
                   far)


#: What --resume may come with (how, not what, to measure).
_WITH_RESUME = {"resume", "agent", "force", "format", "db", "no_floor", "verbose", "func", "command"}


def _resume(ns: argparse.Namespace, argv: list[str]) -> int:
    """``--resume DIR``: the search the command line in the directory's run.json started, its probes replayed."""
    from mwperf.results.rundir import RESULTS_JSONL, RunDir, read_records

    blank = vars(_parser().parse_args(["max-rate"]))
    given = [key for key, value in blank.items() if key not in _WITH_RESUME and getattr(ns, key, value) != value]
    if given:
        raise UsageError("--resume", ns.resume, f"goes without --{given[0].replace('_', '-')} (the run directory "
                                                "says what to measure)")
    rundir = RunDir(ns.resume)
    doc = rundir.read_run_json() if (rundir.path / RESULTS_JSONL).is_file() else None
    saved = (doc or {}).get("command")
    if not isinstance(saved, list) or saved[1:2] != ["max-rate"] or not all(isinstance(a, str) for a in saved):
        raise UsageError("--resume", ns.resume, "not a max-rate run directory (no run.json and results.jsonl of one)")
    try:
        first = _parser().parse_args(saved[1:])
    except SystemExit:
        raise UsageError("--resume", ns.resume, "its run.json's command line no longer parses") from None
    if first.plan is not None:
        first.plan = str(rundir.path / PLAN_FILE)  # the plan as it was, saved with the run
    for key in ("agent", "force", "format", "db", "no_floor", "verbose"):
        setattr(first, key, getattr(ns, key))
    first.out = str(rundir.path)
    assert doc is not None  # it has a command line
    earlier = read_records(rundir.path, warn=lambda m: print(f"mwperf: warning: {m}", file=sys.stderr))
    return _start(first, argv, resumed=(doc, earlier))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mwperf", add_help=False)
    add_parser(parser.add_subparsers(dest="command"))
    return parser


def _on_hosts(ns: argparse.Namespace, cells: list[PlannedPoint], agent: str, crit: Criterion):
    """The far side in place as run --hosts puts it (:func:`mwperf.cli.hosts.far_side`), the searches checked
    against each host's bundled agent: (the far side, the searches on it)."""
    from mwperf.cli.hosts import far_side
    from mwperf.errors import BadInput

    built: dict[str, list[PlannedPoint]] = {}

    def check(target: str, bundle, info) -> None:
        try:
            built[target] = _command_line_cells(ns, agent, info, crit, check_out=False)
        except BadInput as exc:
            raise UsageError("--hosts", target, f"its {bundle.arch} bundle's agent: {exc}") from None

    side = far_side(cells[0].opts.hosts, ns, check=check)
    return side, [replace(c, opts=replace(c.opts, hosts=side.pair)) for c in built.get(side.pair.pub, cells)]


def _search(ns: argparse.Namespace, argv: list[str], cells: list[PlannedPoint], crit: Criterion, agent: str,
            source: str | None, plan_text: str | None = None, resumed: tuple[dict, list[Record]] | None = None,
            far=None) -> int:
    from mwperf.cli.db import check_run_store, ingest_after_run
    from mwperf.execute import lock, provenance
    from mwperf.execute.keystore import check_keystore
    from mwperf.execute.point import check_placement
    from mwperf.execute.runner import clean_far, execute
    from mwperf.execute.ssh import close_shared_connections
    from mwperf.plan.validate import default_out
    from mwperf.model.merge import utc_now_iso
    from mwperf.results.rundir import RunDir, write_atomic

    out = Path(ns.out) if ns.out else cells[0].opts.out if source is None else default_out()
    cells = [replace(c, opts=replace(c.opts, out=out)) for c in cells]
    check_placement(*(c.opts for c in cells))
    check_keystore([c.opts for c in cells])  # a user's keystore gives each cell's level, before anything runs
    store = check_run_store(ns.db, out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError("--out", str(out), f"cannot create: {exc.strerror or exc}") from None
    earlier = resumed[1] if resumed else []
    search = Search(cells, crit, earlier)
    options = {"plan": source, **cells[0].opts.as_dict(),
               "search": {**crit.as_dict(), "step": crit.step, "bounds_hz": list(crit.bounds_hz)}}
    hosts = cells[0].opts.hosts
    with lock.hold(out, force=ns.force, measure=hosts is None, cores=str(cells[0].opts.cpu), argv=argv) as held:
        if resumed:
            doc = resumed[0]
            doc.setdefault("resumed", []).append({"time": utc_now_iso(), "argv": argv, "points": len(earlier),
                                                  "machine_lock": held.machine})
        else:
            if plan_text is not None:
                write_atomic(out / PLAN_FILE, plan_text)  # what --resume expands again
            doc = provenance.collect(run_id=out.name, argv=argv, options=options, agent=agent, started=utc_now_iso())
            doc["machine_lock"] = held.machine
        if far is not None:
            doc["hosts"] = {"pub": far.pair.facts[0], "sub": far.pair.facts[1]}
            clean_far(far, cells[0].opts, sys.stderr)
        outputs = run_outputs(ns.format, verbose=ns.verbose, stored=store is not None)
        try:
            code = execute(search.planned(), RunDir(out), agent, doc, outputs=outputs, earlier=earlier,
                           leftovers=cells[0].opts.agent.leftovers,
                           floor=not ns.no_floor, feed=search, on_record=search.on_record)
        finally:
            if far is not None:
                clean_far(far, cells[0].opts, sys.stderr)
                close_shared_connections()
    return ingest_after_run(store, out, code)

