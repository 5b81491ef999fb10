"""One test point: two agents driven by deadlines (docs/agent-protocol.md).

Start the subscriber, wait for its ``ready`` (its port), start the
publisher, wait for the publisher's ``ready`` and the subscriber's
``matched`` (matched and receiving), write ``go`` to the publisher (nothing
is sent before), wait for the publisher's ``result``, write ``stop SENT`` to
the subscriber, wait for its ``result`` (it drains what is in flight), then
``close`` the publisher (it keeps its endpoints until then, for its settle at
most) and wait for every exit. With N subscribers, N subscriber agents
(``--subscribers-as processes``) or one of N reader threads
(``--subscribers-as threads``: one ``ready`` with every reader's port, then
one ``result`` per reader). Any error event, non-zero exit or missed
deadline fails the point with a reason; both agents' process groups are
killed in a ``finally``, so an interrupted or failed point leaves no process
behind.

Where the agents run is the point's :class:`Placement` (made for the point
and taken down after it); a middleware that needs a helper process gets its
:class:`~mwperf.execute.services.Service` around the agents.
"""

from __future__ import annotations

import random
import secrets
import time
from dataclasses import dataclass
from typing import Callable

from mwperf.errors import AgentError, PointFailed, ServiceError
from mwperf.execute import clocks, keystore, services
from mwperf.execute.keeper import ServiceKeeper
from mwperf.execute.process import AgentProcess
from mwperf.execute.netns import NetnsPair
from mwperf.execute.phases import PhaseClock
from mwperf.execute.placement import Local, Placement
from mwperf.execute.services import Service
from mwperf.execute.session import SAID, Session, Tick, relay_converged, stop_at, tell
from mwperf.execute.ssh import SshHosts
from mwperf.interrupts import signals_deferred
from mwperf.plan.options import RunOptions, TestPoint
from mwperf.description import AgentInfo
from mwperf.execute.delivery import check_delivery
from mwperf.model.merge import PointOutcome
from mwperf.results.rundir import samples_path

__all__ = ["Timeouts", "DEFAULT_TIMEOUTS", "agent_argv", "check_placement", "placement_for", "run_point",
           "point_ticks", "salvage", "RUN_ID_ENV"]


@dataclass(frozen=True)
class Timeouts:
    """Seconds; ``slack`` (--point-timeout) is added to each deadline, and the
    publisher's result deadline also holds --match-timeout (discovery). What
    the agent's own timing decides (its drain, a reliable publisher's linger,
    the ping timeout) comes from its description unless given here (tests)."""

    ready: float = 5.0        # sub start-up until its ready event
    after_result: float | None = None  # a side's exit after its result: the agent's settle and linger, + 2 s
    stop: float = 5.0         # sub result after 'stop SENT' (plus drain)
    drain: float | None = None  # the subscriber's longest drain (the agent's, under reliable QoS)
    ping: float | None = None   # a last unanswered ping of warm-up and of the run (twice the agent's ping timeout)
    blocked: float = 2.0      # a send still blocked in the middleware when the measured phase ends
    start: float = 1.0        # the publisher's start after 'go' (threads, timers; discovery is done by then)

    def resolved(self, agent: AgentInfo) -> Resolved:
        """Every figure, the agent's where none was given."""
        return Resolved(
            ready=self.ready, stop=self.stop, blocked=self.blocked, start=self.start,
            after_result=self.after_result if self.after_result is not None else
            agent.timing_s("linger_ns") + agent.timing_s("settle_ns") + EXIT_MARGIN_S,
            drain=self.drain if self.drain is not None else agent.timing_s("drain_reliable_ns"),
            ping=self.ping if self.ping is not None else 2 * agent.table["ping-timeout"].default / 1e9)


@dataclass(frozen=True)
class Resolved(Timeouts):
    """Timeouts with every figure known (:meth:`Timeouts.resolved`): what the protocol waits on."""

    after_result: float = 0.0
    drain: float = 0.0
    ping: float = 0.0


#: A side's exit after its result, beyond what the agent says it waits.
EXIT_MARGIN_S = 2.0
#: The subscriber starts waiting for its match before the publisher even
#: starts, so it waits this much longer than the publisher.
SUB_MATCH_MARGIN_NS = 5_000_000_000
#: How far a send stamp may lie outside [subscriber start, now] on one clock.
ONE_CLOCK_STAMP_SLACK_NS = 1_000_000
#: The agents read the point's run id from here.
RUN_ID_ENV = "MWPERF_RUN_ID"


DEFAULT_TIMEOUTS = Timeouts()


def agent_argv(agent: str, role: str, point: TestPoint, opts: RunOptions, port: int | str, *,
               two_hosts: bool = False, clock_offset_ns: int = 0, sub_index: int = 0,
               one_clock: bool = True) -> list[str]:
    """The agent's own arguments for one side of the point: every option of
    the table that applies to the role and the point's mode, where the point's
    value is not the option's default (where it runs and what a service adds
    are the placement's and the service's). ``port``: the subscriber's (the
    publisher's destination), or every subscriber's, comma-separated (1:N);
    ``sub_index``: which subscriber process (the agent makes subscriber 0 the
    echoer and the last the slow one)."""
    table = opts.table
    values = dict(point.values)
    info = opts.adapters.get(point.mw)
    if role == "sub" and values.get("match-timeout") is not None:
        values["match-timeout"] += SUB_MATCH_MARGIN_NS
    if values.get("transport") is None and two_hosts and info is not None and info.remote_transport:
        values["transport"] = info.remote_transport  # its default crosses no host (shared memory)
    # Cross-vendor: the subscriber (and the echo) run the peer's middleware, on the same topic, type and QoS.
    mw = point.get("peer-mw") or point.mw if role == "sub" else point.mw
    argv = [agent, "run", "--role", role, "--mw", mw, "--mode", point.mode]
    for row in table.user_rows:
        value = values.get(row.name)
        if row.name not in ("mw", "mode") and row.for_role(role) and row.applies(point.mode) \
                and value is not None and value != row.default:
            argv += [row.flag, row.argv(value)]
    core = opts.cpu.pub if role == "pub" else opts.cpu.sub
    argv += ["--cpu", str(-1 if core is None else core), "--port", str(port),
             "--samples-out", str(opts.out / samples_path(point.index)),
             "--key", "stdin"]  # the key of every message's tag: the first control line, never here
    argv += keystore.enclave_args(opts, point, role, sub_index)  # a secured point's keys and documents
    if role == "sub":
        if sub_index:
            argv += ["--subscriber-index", str(sub_index)]
        if clock_offset_ns:
            argv += ["--clock-offset", str(clock_offset_ns)]
        if one_clock:
            # Both sides read one clock: a send stamp from before the subscriber
            # started, or from the future, is no sample of this run (1 ms for two
            # realtime bases' estimates). Between two clocks the agent allows 10 s.
            argv += ["--stamp-slack", str(ONE_CLOCK_STAMP_SLACK_NS)]
    return argv


def placement_for(opts: RunOptions, index: int) -> Placement:
    """Where the options put point ``index`` (a namespace pair takes its
    subnet from the index, so consecutive points never share addresses)."""
    if opts.link is not None:
        return NetnsPair(opts.link, index)
    if opts.hosts is not None:
        return SshHosts(opts.hosts)
    return Local()


def check_placement(*options: RunOptions) -> None:
    """UsageError, before anything runs, when a placement the options chose
    cannot be made here (``--link netns`` as another user than root)."""
    for link in {opts.link for opts in options if opts.link is not None}:
        NetnsPair.check_possible(link)


def run_point(opts: RunOptions, point: TestPoint, agent: str,
              timeouts: Timeouts = DEFAULT_TIMEOUTS, keeper: ServiceKeeper | None = None) -> PointOutcome:
    """Run one point where its placement puts it; never raises for agent,
    link or service trouble (see outcome.error). ``keeper``: the run's
    services, kept across points (a point's own, started and stopped with it,
    without)."""
    timeouts = timeouts.resolved(opts.agent)
    phases = PhaseClock()
    placement = placement_for(opts, point.index)
    info = opts.adapters.get(point.mw)
    serving = services.running(info, placement, point) if keeper is None else keeper.running(info, placement, point)
    kept = None
    try:
        with placement, serving as service:
            kept = keeper.describe() if keeper is not None and service.name else None
            clock, offset_ns = None, 0
            if placement.two_hosts:
                clock = clocks.estimate(placement.command("pub", [placement.agent("pub", agent), "clock"]),
                                        placement.command("sub", [placement.agent("sub", agent), "clock"]),
                                        same_clock=placement.same_clock, kind=point.get("clock"),
                                        sync=placement.sync())
                # Two monotonic clocks: the subscriber subtracts the estimated offset
                # from every one-way sample. A realtime clock is trusted to be
                # synchronised (PTP, chrony): its estimate is recorded as a check.
                if not placement.same_clock and point.get("clock") != "realtime":
                    offset_ns = int(round(clock["offset_us"] * 1000))
            phases.mark("placed")  # with the two clocks compared
            outcome = _run_agents(opts, point, agent, timeouts, placement, service, phases, offset_ns)
            outcome.clock = clock
            if outcome.error is not None and keeper is not None:
                keeper.failed()  # a new instance for the next point
    except ServiceError as exc:
        outcome = PointOutcome(error=str(exc))
    except OSError as exc:
        outcome = PointOutcome(error=f"link {placement.name}: {exc}")
    outcome.link = placement.as_dict()
    outcome.service = kept
    outcome.security = keystore.section(opts, point)
    phases.mark("end")
    outcome.phases = phases.as_dict()
    return outcome


def _run_agents(opts: RunOptions, point: TestPoint, agent: str, timeouts: Resolved, placement: Placement,
                service: Service, phases: PhaseClock, clock_offset_ns: int = 0) -> PointOutcome:
    """The protocol of one point; never raises for agent trouble (see outcome.error)."""
    run_id = random.getrandbits(32)
    # The key of every message's tag: only the agents' stdin sees it (another
    # local process can read their command line and, as root, environment).
    key = secrets.token_hex(16)

    def start(role: str, ports: str, index: int = 0) -> AgentProcess:
        argv = agent_argv(placement.agent(role, agent), role, point, opts, ports, two_hosts=placement.two_hosts,
                          one_clock=placement.same_clock,
                          clock_offset_ns=clock_offset_ns if role == "sub" else 0, sub_index=index)
        # The run id (topic, port and segment names) goes in the environment, where other
        # users cannot read it (a command line is world-readable in /proc); the key, on stdin.
        env = {RUN_ID_ENV: str(run_id), **service.agent_env(role)}
        if not placement.carries_env():
            argv = ["env", *(f"{k}={v}" for k, v in env.items()), *argv]
            env = {}
        name = role if index == 0 else f"{role}{index}"
        info = opts.adapters.get(point.mw)
        nic = info is None or info.honours("nic")  # the link's interface, for a middleware that chooses one
        process = AgentProcess(placement.wrap(role, argv + service.agent_args(role), nic=nic), name, env=env)
        tell(process, f"key {key}", close=False)
        return process

    outcome = PointOutcome()
    # 1:N as processes: N subscriber agents of one reader each; as threads:
    # one subscriber agent of N readers (--subscribers-as threads).
    readers = point.subscribers if point.threaded else 1
    session = Session([], readers, opts.point_timeout_ns / 1e9)
    try:
        # Every subscriber starts, then each says it is ready (its port, or each reader's).
        for index in range(point.subscribers // readers):
            session.subs.append(start("sub", "0", index))
        outcome.sub_ready, ports = session.ready(timeouts.ready)
        phases.mark("ready")

        pub = start("pub", ",".join(str(p) for p in ports) if any(ports) else "0")
        session.pubs.append(pub)
        run_s = point.planned_s
        outcome.pub_ready = session.matched(point.get("match-timeout") / 1e9 + timeouts.ready)
        phases.mark("matched")
        session.go()
        ticks = point_ticks(point, session, time.monotonic() + run_s + timeouts.start + session.slack)
        (outcome.pub,) = session.results(time.monotonic() + run_s + timeouts.start + timeouts.ping + timeouts.blocked
                                         + session.slack, ticks)
        phases.mark("result")

        # The publisher keeps its endpoints (the agent's settle: no disposal overtakes
        # its last sample) until every subscriber has its result, or the settle is over.
        sent = outcome.pub.get("sent")
        session.stop([sent])
        results = session.drained(timeouts.drain + timeouts.stop)
        phases.mark("drained")  # the last subscriber's last result: the drain is over
        session.close(timeouts.after_result)
        phases.mark("closed")
        check_delivery(results, sent)
        outcome.sub = results[0]
        if len(results) > 1:
            outcome.subs = results
    except PointFailed as exc:
        outcome.error = str(exc)
        if "no matching peer" in outcome.error and not SAID.search(outcome.error):
            outcome.error += session.subscribers_said(SUB_MATCH_MARGIN_NS / 1e9 + 1.0)
        if session.pubs and session.subs and not str(exc).startswith("sub"):
            salvage(session, outcome, timeouts.drain + 1.0)
    except AgentError as exc:
        outcome.error = str(exc)
    finally:
        with signals_deferred():
            session.kill()
    return outcome


def point_ticks(point: TestPoint, session: Session, cut: float) -> Callable[[AgentProcess], Tick | None] | None:
    """What runs while a point's publisher measures: the adaptive stop of rate and throughput mode relayed
    from the subscriber (--precision), a burst still being written at ``cut`` cut there."""
    sub = session.subs[0]

    def ticks(pub: AgentProcess) -> Tick | None:
        each = [relay_converged(sub, pub)] if point.get("precision") and point.mode in ("rate", "throughput") else []
        if point.mode == "burst":
            each.append(stop_at(pub, cut))
        if not each:
            return None

        def every() -> None:
            for tick in each:
                tick()

        return every

    return ticks


def salvage(session: Session, outcome: PointOutcome, seconds: float) -> None:
    """After a publisher failure, what the subscribers have (the outcome's subscriber side)."""
    results = session.salvage(seconds, outcome.subs)
    outcome.sub = results[0]
    if len(results) > 1:
        outcome.subs = results
