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
from dataclasses import dataclass, replace
from typing import Callable

from mwperf.errors import AgentError, PointFailed, ServiceError
from mwperf.execute import clocks, services
from mwperf.execute.keeper import ServiceKeeper
from mwperf.execute.agent import AgentProcess, describe_exit
from mwperf.execute.netns import NetnsPair
from mwperf.execute.phases import PhaseClock
from mwperf.execute.placement import Local, Placement
from mwperf.execute.services import Service
from mwperf.execute.ssh import SshHosts
from mwperf.interrupts import signals_deferred
from mwperf.plan.options import RunOptions, TestPoint
from mwperf.description import AgentInfo
from mwperf.execute.delivery import check_delivery
from mwperf.results.record import PointOutcome
from mwperf.results.rundir import samples_path

__all__ = ["Timeouts", "DEFAULT_TIMEOUTS", "agent_argv", "check_delivery", "check_exit", "check_placement", "relay_converged", "stop_at", "expect_event", "placement_for",
           "ready_ports", "run_point", "tell"]


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

    def resolved(self, agent: AgentInfo) -> "Timeouts":
        """Every figure, the agent's where none was given."""
        return replace(
            self,
            after_result=self.after_result if self.after_result is not None else
            agent.timing_s("linger_ns") + agent.timing_s("settle_ns") + EXIT_MARGIN_S,
            drain=self.drain if self.drain is not None else agent.timing_s("drain_reliable_ns"),
            ping=self.ping if self.ping is not None else 2 * agent.table["ping-timeout"].default / 1e9)


#: A side's exit after its result, beyond what the agent says it waits.
EXIT_MARGIN_S = 2.0
#: The subscriber starts waiting for its match before the publisher even
#: starts, so it waits this much longer than the publisher.
SUB_MATCH_MARGIN_NS = 5_000_000_000
#: How often the controller relays the subscriber's `converged` (rate mode, --precision).
TICK_S = 0.1
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
    phases.mark("end")
    outcome.phases = phases.as_dict()
    return outcome


def _failure(agent: AgentProcess, text: str) -> str:
    """Append the agent's last stderr line when it adds something."""
    agent.wait_exit(time.monotonic() + 0.5)
    last = agent.last_stderr()
    if last and last not in text:
        return f"{text} (stderr: {last})"
    return text


def expect_event(agent: AgentProcess, kinds: set[str], seconds: float, what: str,
            skip: Callable[[dict], None] | None = None, tick: Callable[[], None] | None = None) -> dict:
    """The next event of ``kinds``; PointFailed on error, exit or deadline.
    ``skip`` receives the other events (e.g. the publisher's ready); ``tick``,
    when given, is called every TICK_S while waiting."""
    deadline = time.monotonic() + seconds
    while True:
        until = deadline if tick is None else min(deadline, time.monotonic() + TICK_S)
        try:
            event = agent.wait_for(kinds | {"ready"}, until)
        except TimeoutError:
            if until < deadline:
                tick()
                continue
            raise PointFailed(_failure(agent, f"{agent.role}: no {what} within {seconds:.1f} s (agent hung?)")) from None
        if event is None:
            code = agent.wait_exit(time.monotonic() + 2.0)
            how = "closed its output" if code is None else describe_exit(code)
            raise PointFailed(_failure(agent, f"{agent.role}: {how} before its {what}"))
        kind = event.get("event")
        if kind == "error":
            raise PointFailed(_failure(agent, f"{agent.role}: {event.get('error') or 'error'}"))
        if kind in kinds:
            return event
        if skip is not None:
            skip(event)


def tell(agent: AgentProcess, line: str, close: bool = True) -> None:
    """Writes a control line; PointFailed when the agent is gone."""
    if not agent.send_line(line, close=close):
        code = agent.wait_exit(time.monotonic() + 1.0)
        how = "closed its input" if code is None else describe_exit(code)
        raise PointFailed(_failure(agent, f"{agent.role}: {how} before '{line.split()[0]}' could be sent"))


def check_exit(agent: AgentProcess, seconds: float) -> None:
    code = agent.wait_exit(time.monotonic() + seconds)
    if code is None:
        raise PointFailed(_failure(agent, f"{agent.role}: did not exit within {seconds:.1f} s of its result"))
    if code != 0:
        raise PointFailed(_failure(agent, f"{agent.role}: {describe_exit(code)} after its result"))


def _salvage_subs(subs: list[AgentProcess], outcome: PointOutcome, seconds: float, readers: int = 1) -> None:
    """After a publisher failure, ask the subscribers for what they have
    (``readers``: results one subscriber process gives, one per reader)."""
    total = len(subs) * readers
    results = outcome.subs if outcome.subs is not None else [None] * total
    for sub in subs:
        if sub.proc.poll() is None:
            sub.send_line("stop -1")
    deadline = time.monotonic() + seconds
    for i, sub in enumerate(subs):
        base = i * readers
        # what a subscriber wrote before it ended is still read (an agent gone
        # without a result ends its output: no wait)
        for _ in range(sum(r is None for r in results[base:base + readers])):
            try:
                event = sub.wait_for({"result"}, deadline)
            except TimeoutError:
                break
            if event is None or event.get("event") != "result":
                break
            slot = _reader_slot(event, base, readers, next(k for k in range(readers) if results[base + k] is None))
            results[slot] = event
    outcome.sub = results[0]
    if total > 1:
        outcome.subs = results


def _reader_slot(event: dict, base: int, readers: int, fallback: int) -> int:
    """Where a reader's result goes among one process's: by its ``reader`` index."""
    reader = event.get("reader")
    if readers > 1 and isinstance(reader, int) and not isinstance(reader, bool) and 0 <= reader < readers:
        return base + reader
    return base + fallback


def ready_ports(agent: AgentProcess, ready: dict, readers: int) -> list[int]:
    """The ports a subscriber's ready event gives: its one port, or with
    ``readers`` > 1 each reader's (``ports``). Port-less middlewares (DDS
    discovery) report 0 or none: 0 is passed on."""
    def check(port) -> int:
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise PointFailed(f"{agent.role}: ready event with a bad port: {port!r}")
        return port

    if readers == 1:
        return [check(ready.get("port", 0))]
    ports = ready.get("ports")
    if not isinstance(ports, list) or len(ports) != readers:
        raise PointFailed(f"{agent.role}: ready event without one port per reader ({readers}): {ports!r}")
    return [check(p) for p in ports]


def relay_converged(sub: AgentProcess, pub: AgentProcess) -> Callable[[], None]:
    """The adaptive stop of rate and throughput mode: the subscriber owns what
    it watches (the one-way latency; the received rate and loss) and says
    `converged`; the publisher is told to stop."""
    relayed = False

    def tick() -> None:
        nonlocal relayed
        if not relayed and sub.take_event("converged") is not None:
            relayed = True
            pub.send_line("stop", close=False)  # its `close` comes once the subscribers have their results

    return tick


def stop_at(pub: AgentProcess, deadline: float) -> Callable[[], None]:
    """Burst mode: a burst runs until its last sample, however long that
    takes (--demand 10000000 in a 1 s run); past the measured phase's end the
    publisher is told to stop, so that it reports instead of counting as hung."""
    told = False

    def tick() -> None:
        nonlocal told
        if not told and time.monotonic() >= deadline:
            told = True
            pub.send_line("stop", close=False)

    return tick


def _run_agents(opts: RunOptions, point: TestPoint, agent: str, timeouts: Timeouts, placement: Placement,
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
    slack = opts.point_timeout_ns / 1e9
    subs: list[AgentProcess] = []
    pub: AgentProcess | None = None
    pub_started = False
    # 1:N as processes: N subscriber agents of one reader each; as threads:
    # one subscriber agent of N readers (--subscribers-as threads).
    readers = point.subscribers if point.threaded else 1
    try:
        # Every subscriber starts, then each says it is ready (its port, or each reader's).
        for index in range(point.subscribers // readers):
            subs.append(start("sub", "0", index))
        sub = subs[0]
        ports: list[int] = []
        for index, each in enumerate(subs):
            ready = expect_event(each, {"ready"}, timeouts.ready + slack, "ready event")
            if index == 0:
                outcome.sub_ready = ready
            ports += ready_ports(each, ready, readers)
        phases.mark("ready")

        pub = start("pub", ",".join(str(p) for p in ports) if any(ports) else "0")
        pub_started = True
        run_s = point.planned_s
        match_s = point.get("match-timeout") / 1e9
        outcome.pub_ready = expect_event(pub, {"ready"}, match_s + timeouts.ready + slack, "ready event")
        # The start barrier: the publisher sends once every subscriber is matched and receiving.
        for each in subs:
            expect_event(each, {"matched"}, match_s + timeouts.ready + slack, "matched event")
        phases.mark("matched")
        tell(pub, "go", close=False)
        ticks = [relay_converged(sub, pub)] if point.get("precision") and point.mode in ("rate", "throughput") else []
        if point.mode == "burst":  # a burst still being written at the deadline is cut there
            ticks.append(stop_at(pub, time.monotonic() + run_s + timeouts.start + slack))
        outcome.pub = expect_event(pub, {"result"}, run_s + timeouts.start + timeouts.ping + timeouts.blocked + slack, "result",
                              tick=(lambda: [tick() for tick in ticks]) if ticks else None)
        phases.mark("result")

        # The publisher keeps its endpoints (the agent's settle: no disposal overtakes
        # its last sample) until every subscriber has its result, or the settle is over.
        sent = outcome.pub.get("sent")
        for each in subs:  # all told at once: they drain side by side
            tell(each, f"stop {sent if isinstance(sent, int) else -1}")
        results: list[dict | None] = []
        for each in subs:
            got: list[dict | None] = [None] * readers
            for j in range(readers):  # one result per reader, in reader order
                event = expect_event(each, {"result"}, timeouts.drain + timeouts.stop + slack, "result after stop")
                slot = _reader_slot(event, 0, readers, j)
                if got[slot] is not None:
                    raise PointFailed(f"{each.role}: two results for reader {slot}")
                got[slot] = event
            results += got
        phases.mark("drained")  # the last subscriber's last result: the drain is over
        pub.send_line("close")  # nothing in flight: its endpoints may go (a reliable writer's linger first)
        for each in (*subs, pub):
            check_exit(each, timeouts.after_result + slack)
        phases.mark("closed")
        check_delivery(results, sent)
        outcome.sub = results[0]
        if len(results) > 1:
            outcome.subs = results
    except PointFailed as exc:
        outcome.error = str(exc)
        if pub_started and subs and not str(exc).startswith("sub"):
            _salvage_subs(subs, outcome, timeouts.drain + 1.0, readers)
    except AgentError as exc:
        outcome.error = str(exc)
    finally:
        with signals_deferred():
            for side in (pub, *subs):
                if side is not None:
                    side.kill()
    return outcome
