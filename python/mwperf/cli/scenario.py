"""``mwperf run --scenario FILE``: a scenario's flows at once, on each middleware.

For every ``--mw``: all flows together (one scenario point), then, unless
``--no-solo``, each flow alone with the same settings, one after another.
Each flow's record (everything a single-flow point has) and the point's
totals go to DIR/scenario.json; the per-flow tables (alone and together,
with their ratio) to stdout and DIR/scenario.html; the floor to
DIR/floor.json as for any run.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from mwperf.errors import PlanError, UsageError
from mwperf.execute.scenario import PROCESS_MODEL, FlowJob, run_flows
from mwperf.plan.options import PlannedPoint, RunOptions, RunRequest
from mwperf.plan.scenario import Scenario, flow_options, load_scenario
from mwperf.results.measures import cpu_side
from mwperf.results.record import merge_record, utc_now_iso

__all__ = ["add_arguments", "command", "plan_jobs"]

SCENARIO_JSON = "scenario.json"


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
    per_mw: dict[str, list[list]] = {}
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


def _indexed(jobs: list[FlowJob], base: int) -> list[FlowJob]:
    """Each flow's point its own index (its samples files, its namespace pair's subnet)."""
    return [replace(job, point=replace(job.point, index=base + i)) for i, job in enumerate(jobs)]


def _records(results, run_id: str, started: str) -> dict[str, dict]:
    out = {}
    for result in results:
        job = result.job
        record = merge_record(PlannedPoint(job.opts, job.point), result.outcome, run_id=run_id, time=started)
        record["flow"] = job.name
        record["publishers"] = job.publishers
        record["payload"] = job.payload
        record["publisher_sent"] = [(pub or {}).get("sent") for pub in result.pubs]
        # every process of the flow: its publishers (added up in cpu_s.pub) and each subscriber
        sides = [record["cpu_s"]["pub"]] + [cpu_side(sub) for sub in (result.outcome.subs or [result.outcome.sub])]
        record["cpu_total_s"] = None if None in sides else sum(side["user"] + side["sys"] for side in sides)
        record["per_publisher"] = [(sub or {}).get("per_publisher") for sub in
                                   (result.outcome.subs or [result.outcome.sub])] if job.publishers > 1 else None
        if job.check_payload:
            record["payload_check"] = [{k: (sub or {}).get(k) for k in ("payload_matched", "payload_mismatched")}
                                       for sub in (result.outcome.subs or [result.outcome.sub])]
        out[job.name] = record
    return out


def _totals(records: dict[str, dict]) -> dict:
    def add(key):
        values = [r.get(key) for r in records.values()]
        return sum(values) if values and all(isinstance(v, (int, float)) for v in values) else None

    return {"flows": len(records), "sent": add("sent"), "received": add("received"), "lost": add("lost"),
            "mbps": add("mbps"), "cpu_s": sum(r["cpu_total_s"] or 0.0 for r in records.values()),
            "failed": sorted(name for name, r in records.items() if r["status"] != "ok")}


def command(ns: argparse.Namespace, argv: list[str], request: RunRequest, found: tuple) -> int:
    """The scenario's points; exit 0 when every flow of every point is ok, else 1."""
    from mwperf.execute import lock, provenance
    from mwperf.execute.cleanup import clean_leftovers
    from mwperf.execute.floor import measure_run_floor, skipped
    from mwperf.execute.point import DEFAULT_TIMEOUTS, check_placement
    from mwperf.export.scenario import ScenarioReport
    from mwperf.results.confined import write_inside
    from mwperf.results.rundir import RunDir
    import json

    agent, agent_info = found
    scenario = load_scenario(ns.scenario)
    first = flow_options(scenario, scenario.flows[0], request, agent_info, agent, None)
    flows = [first] + [flow_options(scenario, f, request, agent_info, agent, first.out) for f in scenario.flows[1:]]
    jobs = plan_jobs(scenario, flows)
    check_placement(*flows)
    try:
        first.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError("--out", str(first.out), f"cannot create: {exc.strerror or exc}") from None
    started = utc_now_iso()
    doc = {"scenario": scenario.name, "source": scenario.source, "process_model": PROCESS_MODEL,
           "solo": not ns.no_solo, "started": started, "argv": argv, "points": [],
           # the machine, the agent, the middlewares' versions, as a run's run.json has them
           "provenance": provenance.collect(run_id=first.out.name, argv=argv, options=first.as_dict(), agent=agent,
                                            started=started)}
    failed = False
    with lock.hold(first.out, force=ns.force, measure=first.hosts is None, cores=str(first.cpu), argv=argv):
        rundir = RunDir(first.out).create(samples=True)
        clean_leftovers(agent_info.leftovers, agent)
        try:
            every = [PlannedPoint(j.opts, j.point) for _, _, js in jobs for j in js]
            doc["floor"] = skipped("--no-floor") if ns.no_floor else measure_run_floor(every, rundir, agent,
                                                                                       sys.stderr)
            n = len(scenario.flows)
            for k, (mw, label, mw_jobs) in enumerate(jobs):
                base = k * n * (n + 1)
                name = f"{scenario.name} on {mw}" + (f" ({label})" if label else "")
                sys.stderr.write(f"mwperf: {name}: {n} flows together\n")
                started = utc_now_iso()
                together = _records(run_flows(_indexed(mw_jobs, base), agent, DEFAULT_TIMEOUTS, base),
                                    rundir.path.name, started)
                point = {"mw": mw, "label": label, "together": {"flows": together, "totals": _totals(together)},
                         "alone": None}
                if not ns.no_solo:
                    point["alone"] = {}
                    for i, job in enumerate(mw_jobs):
                        sys.stderr.write(f"mwperf: {name}: {job.name} alone\n")
                        index = base + n * (i + 1)
                        point["alone"].update(_records(run_flows(_indexed([job], index), agent, DEFAULT_TIMEOUTS,
                                                                 index), rundir.path.name, utc_now_iso()))
                failed |= bool(point["together"]["totals"]["failed"]) or any(
                    r["status"] != "ok" for r in (point["alone"] or {}).values())
                doc["points"].append(point)
                write_inside(rundir.path, SCENARIO_JSON, json.dumps(doc, indent=1, allow_nan=False))
        finally:
            clean_leftovers(agent_info.leftovers, agent)
    ScenarioReport().write_text(doc, sys.stdout, fmt=ns.format, directory=rundir.path)
    page = ScenarioReport().write_html(doc, rundir.path)
    sys.stdout.write(f"\nreport: {page}\nresults: {rundir.path}\n")
    return 1 if failed else 0
