"""``mwperf sweep PLAN.yaml``: run every point of a plan into one run directory.

The plan (:mod:`mwperf.plan.sweep_plan`) is expanded and validated whole
before anything runs; ``--dry-run`` prints its points and stops there.

The plan is saved as ``DIR/plan.yaml``; each record carries its point key, so
``mwperf sweep --resume DIR`` expands the saved plan again and runs only the
points whose key is not in results.jsonl yet (a point that failed was
measured and recorded: it is not run again).

The plan's discovery matrices (``also`` entries with ``mode: discovery``) are
measured after its other points, under the same machine lock, into the run
directory's discovery.jsonl (:func:`mwperf.cli.discovery.measure`; ``--resume``
skips those already there); report.html has their section.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from mwperf.cli import discovery, sweep_lab
from mwperf.cli.common import described_agent, no_agent, run_outputs
from mwperf.cli.run import duration_limit
from mwperf.description import AgentInfo
from mwperf.errors import PlanError, UsageError
from mwperf.execute.progress import START_UP_SAID, format_eta, start_up_s
from mwperf.plan.options import PlannedPoint
from mwperf.plan.discovery_plan import is_discovery_plan
from mwperf.plan.validate import default_out
from mwperf.plan.sweep_plan import Plan, expand, load_plan
from mwperf.execute import lock
from mwperf.execute.point import check_placement
from mwperf.results.confined import refuse_link
from mwperf.results.rundir import (RESULTS_JSONL, RunDir, UnsafeFile, check_new_dir, open_inside, read_records,
                                   write_atomic)
from mwperf.model.upgrade import OLD_KEY_PREFIX

if TYPE_CHECKING:
    from mwperf.execute.runner import Outputs

__all__ = ["PLAN_FILE", "add_parser", "command", "describe", "plan_doc"]

PLAN_FILE = "plan.yaml"


def add_parser(sub: argparse._SubParsersAction) -> None:
    sweep = sub.add_parser("sweep", help="run every point of a plan (YAML of mwperf run options, lists expand)",
                           description="Expand PLAN (mwperf run options, each a value or a list; exclude rules; "
                                       "launches) and run every launch of every point into one run directory.")
    sweep.add_argument("plan", metavar="PLAN.yaml", nargs="?", help="the plan (see plans/)")
    sweep.add_argument("--out", metavar="DIR", help="run directory (default: results/<UTC YYYYmmdd-HHMMSS>)")
    sweep.add_argument("--dry-run", action="store_true", help="print the expanded points and their count; run nothing")
    sweep.add_argument("--resume", metavar="DIR", help="finish a sweep's run directory: run only its missing points")
    sweep.add_argument("--launches", metavar="N", type=_launches,
                       help="each point as N launches instead of the plan's (its duration and warm-up shared "
                            "among them; kept in run.json, which --resume follows)")
    sweep.add_argument("--agent", metavar="PATH", help="mwperf-agent binary")
    sweep.add_argument("--format", choices=("text", "md"), default="text", help="table format printed at the end")
    sweep.add_argument("--verbose", action="store_true",
                       help="print every table at the end (the floor, each middleware's, CPU per thread group, ...), "
                            "not only the headline; report.html has them all")
    sweep.add_argument("--max-points", metavar="N", type=_positive, help="allow a plan of more points than "
                       "10000 (or $MWPERF_MAX_POINTS)")
    sweep.add_argument("--max-duration", metavar="D", type=duration_limit, help="allow a plan estimated to "
                       "take longer than 24h, e.g. 72h (or $MWPERF_MAX_DURATION)")
    sweep.add_argument("--db", metavar="STORE", help="results store to ingest the run into: a DuckDB file, "
                       "postgresql://..., or none (default: $MWPERF_DB, else results/mwperf.duckdb for runs in "
                       "results/)")
    sweep.add_argument("--no-floor", action="store_true",
                       help="skip the floor measured before the first point (run.json records the skip)")
    sweep.add_argument("--force", action="store_true",
                       help="measure even while another mwperf measurement runs on this machine (both are perturbed)")
    sweep_lab.add_options(sweep)
    sweep.set_defaults(func=command)


def command(ns: argparse.Namespace, argv: list[str]) -> int:
    if (ns.plan is None) == (ns.resume is None):
        raise UsageError("sweep", None, "give a PLAN.yaml, or --resume DIR (not both)")
    if ns.resume is not None and (ns.out or ns.dry_run or ns.launches):
        raise UsageError("--resume", ns.resume, "goes alone (the directory and its saved plan say everything)")
    if ns.plan is not None and is_discovery_plan(ns.plan):  # mode: discovery
        found = described_agent(ns.agent)
        lab_asked = sweep_lab.check(ns) is not None
        return no_agent() if found is None else discovery.sweep_mode(ns, argv, found[0], lab_asked)
    _check(ns.plan, ns.resume)  # bad input is named before anything else is looked at
    lab = sweep_lab.check(ns)
    if lab is not None and ns.plan is not None and load_plan(ns.plan).discovery:
        raise PlanError(ns.plan, load_plan(ns.plan).discovery[0].where, None, "a discovery matrix is not for a lab")
    if lab is not None and ns.launches is not None:
        raise UsageError("--launches", str(ns.launches), "not with a lab: give the plan its launches")
    found = described_agent(ns.agent)
    if found is None:
        return no_agent()
    agent, agent_info = found
    if ns.dry_run:
        if lab is not None:
            pairs = lab[1]
            sys.stdout.write(f"on each of {len(pairs)} host pair(s), one at a time: "
                             f"{', '.join(p.name or f'{p.pub}:{p.sub}' for p in pairs)}\n")
        return _dry_run(ns.plan, agent, agent_info, sys.stdout, ns.max_points, ns.launches, ns.max_duration)
    from mwperf.cli.db import check_run_store, ingest_after_run

    out = Path(ns.resume or ns.out or default_out())
    store = check_run_store(ns.db, out)
    if lab is not None:
        code = sweep_lab.sweep(ns, argv, agent, agent_info, out, lab, PLAN_FILE, plan_doc, stored=store is not None)
    elif ns.resume is not None:
        with lock.hold(ns.resume, force=ns.force, argv=argv) as held:  # one writer: the records read stay the records
            code = _resume(ns.resume, agent, agent_info, argv, ns.format, ns.max_points, held.machine,
                           floor=not ns.no_floor, verbose=ns.verbose, stored=store is not None,
                           max_duration_ns=ns.max_duration)
    else:
        code = _sweep(ns.plan, str(out), agent, agent_info, argv, ns.format, ns.max_points, ns.force,
                      floor=not ns.no_floor, verbose=ns.verbose, stored=store is not None, launches=ns.launches,
                      max_duration_ns=ns.max_duration)
    return ingest_after_run(store, out, code)


def _launches(text: str) -> int:
    from mwperf.plan.launches import MAX_LAUNCHES

    if not text.strip().isdigit() or not 1 <= int(text) <= MAX_LAUNCHES:
        raise argparse.ArgumentTypeError(f"{text}: must be a whole number from 1 to {MAX_LAUNCHES}")
    return int(text)


def _with_launches(plan: Plan, launches: int | None) -> Plan:
    """The plan with ``launches`` a point instead of its own (None: as it is)."""
    if launches is None:
        return plan
    if plan.max_launches is not None and plan.max_launches < launches:
        raise UsageError("--launches", str(launches), f"more than the plan's max_launches ({plan.max_launches})")
    return dataclasses.replace(plan, repetitions=launches)


def _positive(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text}: expected a whole number of points, 1 or more")
    return int(text)


def _label(p: PlannedPoint) -> str:
    """The point, then what it runs under that its label does not say: the
    placement and wait, every other option of the table not at its default,
    how long, the repetition."""
    opts, point, table = p.opts, p.point, p.opts.table
    extras = [f"cpu {opts.cpu}", f"wait {point.get('wait')}"]
    said = {"mw", "mode", "size", "rate", "demand", "subscribers", "subscribers-as", "duration", "samples",
            "precision", "wait"}
    for row in table.user_rows:
        value = point.get(row.name)
        if row.name not in said and row.label is None and value is not None and value != row.default:
            extras.append(row.name if row.kind == "flag" else f"{row.name} {row.shown(value)}")
    if point.get("samples"):
        extras.append(f"{point.get('samples')} samples")
    precision = point.get("precision")
    extras.append(("max " if precision or point.get("samples") else "") + f"{(point.get('duration') or 0) / 1e9:g} s")
    if precision:
        extras.append(f"precision {table['precision'].shown(precision)}")
    if p.repetitions > 1:
        extras.append(f"launch {(p.repetition or 0) + 1} of {p.repetitions}")
    return f"{point.label(table)}; {', '.join(extras)}"


def describe(points: list[PlannedPoint]) -> str:
    """The expanded points, one a line, then the time they take at most and
    (last line) ``N points``."""
    width = len(str(len(points)))
    lines = [f"{p.point.index + 1:>{width}}  {_label(p)}" for p in points]
    total = sum(p.point.planned_s + start_up_s(p.point.mw) for p in points)
    lines.append(f"at most about {format_eta(total)} (warm-up + duration + {START_UP_SAID})")
    distinct = sum(1 for p in points if not p.repetition)
    lines.append(f"{len(points)} points" if distinct == len(points) else f"{distinct} points, {len(points)} launches")
    return "\n".join(lines) + "\n"


def _check(plan_path: str | None, resume_dir: str | None) -> None:
    """PlanError for a plan that does not parse, UsageError for a directory that holds no sweep."""
    if plan_path is not None and load_plan(plan_path).search is not None:
        raise PlanError(plan_path, "search", None, f"a max-rate plan: run it with mwperf max-rate {plan_path}")
    if resume_dir is None:
        return
    if ((RunDir(resume_dir).read_run_json() or {}).get("command") or [None, None])[1:2] == ["max-rate"]:
        raise UsageError("--resume", resume_dir, f"a max-rate run: mwperf max-rate --resume {resume_dir} finishes it")
    try:
        os.close(open_inside(resume_dir, PLAN_FILE))  # no link out of it: its content is never shown
    except FileNotFoundError:
        raise UsageError("--resume", resume_dir, f"no {PLAN_FILE} there (not a sweep's run directory)") from None
    except UnsafeFile as exc:
        raise UsageError("--resume", resume_dir, str(exc)) from None
    except OSError as exc:  # a name too long, a directory not searchable
        raise UsageError("--resume", resume_dir, f"not usable: {exc.strerror or exc}") from None
    refuse_link(Path(resume_dir) / RESULTS_JSONL)  # the records would be appended through it


def _dry_run(plan_path: str, agent: str | None, agent_info: AgentInfo, out: TextIO,
            max_points: int | None = None, launches: int | None = None, max_duration_ns: int | None = None) -> int:
    plan = load_plan(plan_path)
    points = expand(_with_launches(plan, launches), out=default_out(), agent=agent, agent_info=agent_info,
                    max_points=max_points, max_duration_ns=max_duration_ns)
    found = discovery.sweep_points(plan)
    out.write(describe(points) + (discovery.dry_run([p for p, _ in found]) if found else ""))
    return 0


def _sweep(plan_path: str, out_dir: str | None, agent: str, agent_info: AgentInfo,
           argv: list[str], fmt: str = "text", max_points: int | None = None, force: bool = False,
           floor: bool = False, verbose: bool = False, stored: bool = False, launches: int | None = None,
           max_duration_ns: int | None = None) -> int:
    from mwperf.execute import provenance
    from mwperf.execute.runner import execute
    from mwperf.model.merge import utc_now_iso

    plan = _with_launches(load_plan(plan_path), launches)
    out = Path(out_dir) if out_dir else default_out()
    check_new_dir(out, fresh=False)
    if (out / RESULTS_JSONL).exists():
        raise UsageError("--out", str(out), f"already holds {RESULTS_JSONL} (mwperf sweep --resume {out} finishes it)")
    points = expand(plan, out=out, agent=agent, agent_info=agent_info, max_points=max_points,
                    max_duration_ns=max_duration_ns)
    check_placement(*(p.opts for p in points))  # before the run directory is made
    found = discovery.sweep_points(plan)
    discovery.check_links(found)
    with lock.hold(out, force=force, argv=argv) as held:
        if (out / RESULTS_JSONL).exists():  # another sweep began there meanwhile
            raise UsageError("--out", str(out), f"already holds {RESULTS_JSONL}")
        write_atomic(out / PLAN_FILE, plan.text)
        doc = provenance.collect(run_id=out.name, argv=argv, options=plan_doc(plan, len(points)), agent=agent,
                                 started=utc_now_iso())
        doc["machine_lock"] = held.machine
        outputs, measured = _then_discovery(run_outputs(fmt, verbose=verbose, stored=stored), found, agent, doc)
        code = execute(points, RunDir(out), agent, doc, outputs=outputs,
                       leftovers=agent_info.leftovers, floor=floor)
        return _with_discovery_code(code, measured)


def _resume(run_dir: str, agent: str, agent_info: AgentInfo, argv: list[str],
            fmt: str = "text", max_points: int | None = None, machine_lock: str | None = None,
            floor: bool = False, verbose: bool = False, stored: bool = False,
            max_duration_ns: int | None = None) -> int:
    from mwperf.execute import provenance
    from mwperf.execute.runner import execute
    from mwperf.model.merge import utc_now_iso

    path = Path(run_dir)
    plan_file = path / PLAN_FILE
    try:
        plan = load_plan(plan_file)
    except PlanError as exc:
        raise UsageError("--resume", run_dir, str(exc)) from None
    saved = (RunDir(path).read_run_json() or {}).get("options") or {}
    launches = saved.get("repetitions")  # the launches the sweep was started with (--launches or the plan's)
    if isinstance(launches, int) and not isinstance(launches, bool) and launches >= 1:
        plan = dataclasses.replace(plan, repetitions=launches)
    points = expand(plan, out=path, agent=agent, agent_info=agent_info, max_points=max_points,
                    max_duration_ns=max_duration_ns)
    earlier = read_records(path, warn=lambda m: print(f"mwperf: warning: {m}", file=sys.stderr))
    if any((r.point_hash or "").startswith(OLD_KEY_PREFIX) for r in earlier):
        raise UsageError("--resume", run_dir, "written by an older mwperf (records v1): its points cannot be matched "
                                              "to this plan's; run the plan into a new directory")
    done = {r.point_hash for r in earlier}
    todo = [p for p in points if p.point_hash not in done]
    rundir = RunDir(path)
    doc = rundir.read_run_json() or provenance.collect(
        run_id=path.name, argv=argv, options=plan_doc(plan, len(points)), agent=agent, started=utc_now_iso())
    doc.setdefault("resumed", []).append({"time": utc_now_iso(), "argv": argv, "points": len(todo),
                                          "machine_lock": machine_lock})
    if not todo:
        print(f"mwperf: {run_dir}: all {len(points)} points are there; nothing to resume")
    found = discovery.sweep_points(plan)
    discovery.check_links(found)
    outputs, measured = _then_discovery(run_outputs(fmt, verbose=verbose, stored=stored), found, agent, doc)
    code = execute(todo, rundir, agent, doc, outputs=outputs, earlier=earlier,
                   leftovers=agent_info.leftovers, floor=floor)
    return _with_discovery_code(code, measured)


def _then_discovery(outputs: Outputs, found: list, agent: str, doc: dict) -> tuple[Outputs, list[dict]]:
    """``outputs`` whose end measures the plan's discovery points first (those not in discovery.jsonl yet),
    when the other points ran to completion (still under the run's lock), then says it all (report.html
    with their section); the list their records go to."""
    measured: list[dict] = []
    if not found:
        return outputs, measured

    def at_end(everything: list, records: list, rundir: RunDir) -> None:
        try:
            if doc.get("status") == "complete":
                measured.extend(discovery.measure(found, agent, rundir.path, progress=sys.stderr))
        finally:  # a point the agent refuses (exit 2) or an interrupt: what was measured is said all the same
            outputs.at_end(everything, records, rundir)

    return dataclasses.replace(outputs, at_end=at_end), measured


def _with_discovery_code(code: int, measured: list[dict]) -> int:
    """The sweep's exit code, 1 when a discovery point did not complete."""
    return 1 if code == 0 and not all(r.get("complete") for r in measured) else code


def plan_doc(plan: Plan, count: int) -> dict:
    doc = {"plan": plan.source, "description": plan.description, "points": count, "repetitions": plan.launches,
           **_matrix_doc(plan.options, plan.exclude)}
    if plan.also:  # the matrices after the main one
        doc["also"] = [_matrix_doc(m.options, m.exclude) for m in plan.also]
    if plan.discovery:
        doc["discovery"] = [dict(m.options) for m in plan.discovery]
    return doc


def _matrix_doc(options, exclude) -> dict:
    return {"options": {k: list(v) for k, v in options.items()},
            "exclude": [{k: sorted(v, key=str) if isinstance(v, set) else v for k, v in r.items()} for r in exclude]}
