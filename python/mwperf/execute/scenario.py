"""Several flows at once: one scenario point (docs/agent-protocol.md, N:M).

Every flow is measured by the single-flow machinery's agents: one agent
process per publisher and per subscriber of each flow (never one process
carrying several flows), so each flow's CPU and memory are its own
processes' and the flows contend as separate applications of one host do.
Each flow has its own topic (its own run id) and key; its N publishers each
number their samples in their own sequence space (``--seq-start p << 48``)
and its M subscribers (``--publishers N``) count loss and order per
publisher. All subscribers start and say ready, then all publishers; once
every publisher is ready and every subscriber matched, ``go`` goes to all
publishers at once (the start barrier of all flows); each flow's subscribers
are told ``stop S0,S1,...`` (each publisher's count) when its publishers
have reported, and its publishers ``close`` once its subscribers have.

For the runner (:mod:`mwperf.execute.runner`) a scenario point is steps
(:class:`ScenarioStep`): its flows together, then each flow alone; a step
yields one record's makings per flow, each record carrying its ``scenario``
section (results/schema: the scenario, the flow, together or alone, the
publishers' counts), so results.jsonl holds every flow and the totals are
made where they are shown.
"""

from __future__ import annotations

import hashlib
import json
import random
import secrets
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterator

from mwperf.errors import AgentError, PointFailed, ServiceError
from mwperf.execute import keystore, services
from mwperf.execute.process import AgentProcess
from mwperf.execute.delivery import check_delivery
from mwperf.execute.point import RUN_ID_ENV, Resolved, Timeouts, agent_argv, placement_for
from mwperf.execute.session import Session, stop_at, tell
from mwperf.execute.placement import Placement
from mwperf.execute.services import Service
from mwperf.interrupts import signals_deferred
from mwperf.plan.options import PlannedPoint, RunOptions, TestPoint
from mwperf.plan.sweep_plan import point_hash
from mwperf.model import measures as m
from mwperf.model.merge import PointOutcome, utc_now_iso

__all__ = ["FlowJob", "FlowOutcome", "run_flows", "ScenarioStep", "scenario_steps", "flow_section",
           "PUBLISHER_SHIFT", "PROCESS_MODEL"]

#: Publisher p of a flow numbers its samples from p << PUBLISHER_SHIFT (the agent's kPublisherShift).
PUBLISHER_SHIFT = 48
PROCESS_MODEL = ("one agent process per publisher and per subscriber of every flow: a flow's CPU, memory and "
                 "threads are its own processes'")


@dataclass(frozen=True)
class FlowJob:
    """One flow of a scenario point: its name, options, point (one middleware) and publishers."""

    name: str
    opts: RunOptions
    point: TestPoint
    publishers: int
    payload: str = "pattern"
    check_payload: bool = False


@dataclass
class FlowOutcome:
    job: FlowJob
    outcome: PointOutcome = field(default_factory=PointOutcome)
    pubs: list[dict] = field(default_factory=list)  # each publisher's result, as they came


@dataclass
class _Flow:
    """One flow's agents: its session (its topic's subscribers and publishers), run id and key."""

    result: FlowOutcome
    run_id: int
    key: str
    session: Session = field(default_factory=lambda: Session([]))


def _start(flow: _Flow, agent: str, role: str, ports: str, index: int, placement: Placement,
           service: Service) -> AgentProcess:
    job = flow.result.job
    argv = agent_argv(placement.agent(role, agent), role, job.point, job.opts, ports, two_hosts=placement.two_hosts,
                      one_clock=placement.same_clock, sub_index=index if role == "sub" else 0)
    if job.payload != "pattern":  # the subscriber reads it only to check what arrives
        argv += ["--payload", job.payload]
    if role == "sub":
        argv += ["--publishers", str(job.publishers)]
        if job.check_payload:
            argv += ["--check-payload", "1"]
    else:
        argv += ["--seq-start", str(index << PUBLISHER_SHIFT)]
    env = {RUN_ID_ENV: str(flow.run_id), **service.agent_env(role)}
    if not placement.carries_env():
        argv, env = ["env", *(f"{k}={v}" for k, v in env.items()), *argv], {}
    info = job.opts.adapters.get(job.point.mw)
    process = AgentProcess(placement.wrap(role, argv + service.agent_args(role),
                                          nic=info is None or info.honours("nic")),
                           f"{job.name}.{role}{index}", env=env)
    tell(process, f"key {flow.key}", close=False)
    return process


def run_flows(jobs: list[FlowJob], agent: str, timeouts: Timeouts, index: int) -> list[FlowOutcome]:
    """All ``jobs`` at once (one middleware) where the first job's options put
    them; never raises for agent, link or service trouble (each flow's
    outcome.error says it)."""
    first = jobs[0]
    timeouts = timeouts.resolved(first.opts.agent)
    placement = placement_for(first.opts, index)
    slack = max(job.opts.point_timeout_ns for job in jobs) / 1e9
    flows = [_Flow(FlowOutcome(job), random.getrandbits(32), secrets.token_hex(16), Session([], 1, slack))
             for job in jobs]
    error = None
    try:
        with placement, services.running(first.opts.adapters.get(first.point.mw), placement, first.point) as service:
            _run(flows, agent, timeouts, placement, service)
    except (PointFailed, AgentError, ServiceError) as exc:
        error = str(exc)
    except OSError as exc:
        error = f"link {placement.name}: {exc}"
    finally:
        with signals_deferred():
            for flow in flows:
                flow.session.kill()
    for flow in flows:
        flow.result.outcome.link = placement.as_dict()
        flow.result.outcome.security = keystore.section(flow.result.job.opts, flow.result.job.point)
        if error is not None and flow.result.outcome.error is None:
            flow.result.outcome.error = error
    return [flow.result for flow in flows]


def _run(flows: list[_Flow], agent: str, timeouts: Resolved, placement: Placement, service: Service) -> None:
    """Every flow's session, in step (:mod:`mwperf.execute.session`): all subscribers ready, all publishers
    ready and every subscriber matched, then ``go`` to all publishers at once; from then on a flow that
    fails fails alone."""
    for flow in flows:  # every subscriber of every flow, then each one's ready
        job = flow.result.job
        flow.session.subs = [_start(flow, agent, "sub", "0", i, placement, service)
                             for i in range(job.point.subscribers)]
    ports = [flow.session.ready(timeouts.ready) for flow in flows]
    for flow, (ready, each) in zip(flows, ports):
        flow.result.outcome.sub_ready = ready
        text = ",".join(str(p) for p in each) if any(each) else "0"
        flow.session.pubs = [_start(flow, agent, "pub", text, p, placement, service)
                             for p in range(flow.result.job.publishers)]
    match_s = max(f.result.job.point.get("match-timeout") for f in flows) / 1e9
    for flow in flows:
        flow.result.outcome.pub_ready = flow.session.matched(match_s + timeouts.ready)
    for flow in flows:  # the start barrier of every flow
        flow.session.go()
    started = time.monotonic()
    run_s = max(f.result.job.point.planned_s for f in flows)
    slack = flows[0].session.slack
    deadline = started + run_s + timeouts.start + timeouts.ping + timeouts.blocked + slack
    # From here on a flow that fails fails alone: the others' results stand.
    for flow in flows:
        _each(flow, lambda f: _publishers_report(f, started + run_s + timeouts.start + slack, deadline))
    for flow in flows:
        _each(flow, lambda f: f.session.stop([r.get("sent") for r in f.result.pubs]))
    for flow in flows:
        _each(flow, lambda f: _subscribers_report(f, timeouts.drain + timeouts.stop, timeouts.after_result))


def _each(flow: _Flow, step: Callable[[_Flow], None]) -> None:
    """One flow's step, unless it failed already; its failure is its own."""
    if flow.result.outcome.error is not None:
        return
    try:
        step(flow)
    except PointFailed as exc:
        flow.result.outcome.error = str(exc)


def _publishers_report(flow: _Flow, cut: float, deadline: float) -> None:
    burst = flow.result.job.point.mode == "burst"  # a burst still being written at the deadline is cut there
    flow.session.results(deadline, (lambda pub: stop_at(pub, cut)) if burst else None, into=flow.result.pubs)


def _subscribers_report(flow: _Flow, result_s: float, exit_s: float) -> None:
    results = flow.session.drained(result_s)
    flow.session.close(exit_s)  # the publishers' endpoints may go now; gone: its exit says
    outcome = flow.result.outcome
    outcome.pub = _publishers(flow.result.pubs)
    if outcome.pub is not None:  # more than its publishers sent: another sender's messages, nothing trusted
        check_delivery(results, outcome.pub.get("sent"), [sub.role for sub in flow.session.subs],
                       [r.get("sent") for r in flow.result.pubs])
    outcome.sub = results[0]
    if len(results) > 1:
        outcome.subs = results


#: What several publishers' results add up to (the flow's publisher side as one).
_ADDED = ("sent", "warmup_sent", "scheduled", "unsent", "bursts", "send_errors", "send_timeouts", "foreign",
          "cpu_user_ns", "cpu_sys_ns")


def _publishers(results: list[dict]) -> dict | None:
    """The flow's publisher side: publisher 0's result with the counts and CPU of all added."""
    if not results:
        return None
    merged = dict(results[0])
    for key in _ADDED:
        values = [r.get(key) for r in results]
        if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            merged[key] = sum(values)
    return merged


# -- the runner's steps ----------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioStep(PlannedPoint):
    """One step of a scenario point for the runner: every flow at once
    (``together``) or one flow alone. ``opts`` and ``point`` are the first
    flow's (the placement checks and the progress plan read them)."""

    jobs: tuple[FlowJob, ...] = ()
    scenario: str = ""
    digest: str = ""
    flows: int = 1
    number: int = 0  # the scenario point (a middleware and a value of the command line's lists)
    label: str = ""
    together: bool = True

    @property
    def title(self) -> str:
        what = f"{len(self.jobs)} flows together" if self.together else f"{self.jobs[0].name} alone"
        return f"{self.scenario} on {self.point.mw}{f' ({self.label})' if self.label else ''}: {what}"

    def measure(self, agent: str, timeouts: Timeouts) -> Iterator[tuple[PlannedPoint, PointOutcome, str, dict]]:
        """(the flow's planned point, its outcome, when the step started, its record's scenario section), a flow
        at a time, once the step's flows are all measured."""
        started = utc_now_iso()
        for result in run_flows(list(self.jobs), agent, timeouts, self.jobs[0].point.index):
            job = result.job
            key = {"point": point_hash(job.opts, job.point, 0), "scenario": self.digest, "flow": job.name,
                   "together": self.together}
            planned = PlannedPoint(job.opts, job.point,
                                   point_hash=hashlib.sha256(json.dumps(key, sort_keys=True).encode()).hexdigest()[:16])
            yield planned, result.outcome, started, {"scenario": flow_section(self, result)}


def flow_section(step: ScenarioStep, result: FlowOutcome) -> dict:
    """A flow's record's ``scenario`` section (results/schema)."""
    job, outcome = result.job, result.outcome
    subs = outcome.subs or [outcome.sub]
    # every process of the flow: its publishers and each subscriber
    sides = [m.cpu_side(pub) for pub in result.pubs] + [m.cpu_side(sub) for sub in subs]
    cpus = [s for s in sides if s is not None]
    whole = bool(result.pubs) and len(result.pubs) == job.publishers and len(cpus) == len(sides)
    return {"name": step.scenario, "hash": step.digest, "flow": job.name, "together": step.together,
            "flows": step.flows, "point": step.number, "label": step.label, "publishers": job.publishers,
            "publisher_sent": [m.to_int((pub or {}).get("sent")) for pub in result.pubs] or [None] * job.publishers,
            "per_publisher": [(sub or {}).get("per_publisher") for sub in subs] if job.publishers > 1 else None,
            "payload": job.payload,
            "payload_check": [{k: m.to_int((sub or {}).get(k)) for k in ("payload_matched", "payload_mismatched")}
                              for sub in subs] if job.check_payload else None,
            "cpu_s": sum(s["user"] + s["sys"] for s in cpus) if whole else None}


def _indexed(jobs: list[FlowJob], base: int) -> tuple[FlowJob, ...]:
    """Each flow's point its own index (its samples files, its namespace pair's subnet)."""
    return tuple(replace(job, point=replace(job.point, index=base + i)) for i, job in enumerate(jobs))


def scenario_steps(name: str, digest: str, points: list[tuple[str, list[FlowJob]]], solo: bool) -> list[ScenarioStep]:
    """Every step of a scenario run: per scenario point (label, one job per flow), its flows together, then,
    with ``solo``, each flow alone; every flow of every step a point index of its own."""
    steps = []
    for k, (label, jobs) in enumerate(points):
        n = len(jobs)
        base = k * n * (n + 1)
        common: dict[str, Any] = dict(scenario=name, digest=digest, flows=n, number=k, label=label)
        together = _indexed(jobs, base)
        steps.append(ScenarioStep(together[0].opts, together[0].point, jobs=together, together=True, **common))
        for i, job in enumerate(jobs if solo else ()):
            (alone,) = _indexed([job], base + n * (i + 1))
            steps.append(ScenarioStep(alone.opts, alone.point, jobs=(alone,), together=False, **common))
    return steps
