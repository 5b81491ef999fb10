"""``mwperf run --scenario FILE``: a scenario's flows at once, on each middleware.

For every ``--mw``: all flows together (one scenario point), then, unless
``--no-solo``, each flow alone with the same settings, one after another
(:class:`mwperf.execute.scenario.ScenarioStep`, through the runner as any
run's points). Each flow's record (everything a single-flow point has, and
its ``scenario`` section) goes to results.jsonl the moment its step ends;
the per-flow tables (alone and together, with their ratio, and the point's
totals added up from its flows) to stdout and report.html; the floor, at
every flow's size, to DIR/floor.json as for any run.
"""

from __future__ import annotations

import argparse
import sys

from mwperf.cli.common import run_outputs
from mwperf.errors import PlanError, UsageError
from mwperf.execute.scenario import PROCESS_MODEL, FlowJob, scenario_steps
from mwperf.plan.options import PlannedPoint, RunOptions, RunRequest
from mwperf.plan.scenario import Scenario, flow_options, load_scenario
from mwperf.model.merge import utc_now_iso

__all__ = ["add_arguments", "command", "plan_jobs"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("scenarios: several flows at once")
    group.add_argument("--scenario", metavar="FILE",
                       help="a YAML file of flows (name, size, rate or demand and burst-gap, publishers, subscribers, "
                            "payload, QoS) measured all at once on each --mw, each flow by its own agent processes")
    group.add_argument("--no-solo", action="store_true",
                       help="with --scenario: do not also measure each flow alone (no interference ratios)")


def plan_jobs(scenario: Scenario, flows: list[RunOptions]) -> list[tuple[str, str, list[FlowJob]]]:
    """The scenario's points: (middleware, label, one job per flow). The command line's lists sweep as in any
    run (each value a point of all flows); a flow whose lists make a number of points the others do not is
    refused."""
    per_mw: dict[str, list[tuple]] = {}
    for flow, opts in zip(scenario.flows, flows):
        mine: dict[str, list] = {}
        for point in opts.points():
            mine.setdefault(point.mw, []).append(point)
        for mw, points in mine.items():
            per_mw.setdefault(mw, []).append((flow, opts, points))
    out = []
    for mw, entries in per_mw.items():
        count = max(len(points) for _, _, points in entries)
        for flow, _, points in entries:
            if len(points) not in (1, count):
                raise PlanError(scenario.source, f"flow '{flow.name}'", None,
                                f"its lists make {len(points)} points where another flow's make {count}")
        widest = next(points for _, _, points in entries if len(points) == count)
        varying = [key for key, _ in widest[0].values if len({p.get(key) for p in widest}) > 1]
        table = entries[0][1].table
        for k in range(count):
            label = ", ".join(f"{key} {table[key].shown(widest[k].get(key))}" for key in varying)
            out.append((mw, label, [FlowJob(flow.name, opts, points[k if len(points) > 1 else 0], flow.publishers,
                                            flow.payload, flow.check_payload) for flow, opts, points in entries]))
    return out


def command(ns: argparse.Namespace, argv: list[str], request: RunRequest, found: tuple) -> int:
    """The scenario's points through the runner (each step's flows a record each in results.jsonl); exit 0 when
    every flow of every step is ok, 1 when one failed, 130 interrupted."""
    from mwperf.cli.db import check_run_store, ingest_after_run
    from mwperf.execute import lock, provenance
    from mwperf.execute.cleanup import clean_leftovers
    from mwperf.execute.floor import measure_run_floor, skipped
    from mwperf.execute.keystore import check_keystore
    from mwperf.execute.point import check_placement
    from mwperf.execute.runner import execute
    from mwperf.results.rundir import RunDir

    agent, agent_info = found
    scenario = load_scenario(ns.scenario)
    first = flow_options(scenario, scenario.flows[0], request, agent_info, agent, None)
    flows = [first] + [flow_options(scenario, f, request, agent_info, agent, first.out) for f in scenario.flows[1:]]
    if first.hosts is not None:  # the far side in place (mwperf.hosts): each host runs its bundle's agent
        from dataclasses import replace

        from mwperf.cli.hosts import far_side

        pair = far_side(first.hosts, ns).pair
        flows = [replace(f, hosts=pair) for f in flows]
    points = plan_jobs(scenario, flows)
    check_placement(*flows)
    check_keystore(flows)  # a user's keystore gives each flow's level, before anything runs
    store = check_run_store(ns.db, first.out)
    try:
        first.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError("--out", str(first.out), f"cannot create: {exc.strerror or exc}") from None
    steps = scenario_steps(scenario.name, scenario.digest, [(label, jobs) for _, label, jobs in points],
                           solo=not ns.no_solo)
    doc = provenance.collect(run_id=first.out.name, argv=argv, options=first.as_dict(), agent=agent,
                             started=utc_now_iso())
    doc["scenario"] = {"name": scenario.name, "source": scenario.source, "hash": scenario.digest,
                       "flows": [f.name for f in scenario.flows], "solo": not ns.no_solo,
                       "process_model": PROCESS_MODEL}
    with lock.hold(first.out, force=ns.force, measure=first.hosts is None, cores=str(first.cpu), argv=argv) as held:
        doc["machine_lock"] = held.machine
        rundir = RunDir(first.out).create(samples=True)
        if ns.no_floor:
            doc["floor"] = skipped("--no-floor")
        else:  # at every flow's size (the runner's would see the steps' first flows only)
            clean_leftovers(agent_info.leftovers, agent)
            every = [PlannedPoint(j.opts, j.point) for _, _, jobs in points for j in jobs]
            doc["floor"] = measure_run_floor(every, rundir, agent, sys.stderr)
        outputs = run_outputs(ns.format, verbose=ns.verbose, stored=store is not None)
        code = execute(steps, rundir, agent, doc, outputs=outputs,
                       leftovers=agent_info.leftovers)
    return ingest_after_run(store, first.out, code)
