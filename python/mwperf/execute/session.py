"""The agents' session protocol (docs/agent-protocol.md), written once:
``ready`` -> ``matched`` -> ``go`` -> ``result`` -> ``stop`` -> ``close``.

A :class:`Session` is one topic's agents: its subscriber agents (each of one
reader, or of N reader threads) and its publishers. Its steps, in order:

1. :meth:`Session.ready`: each subscriber's ``ready`` (its port, or each
   reader's), read before any publisher starts;
2. :meth:`Session.matched`: each publisher's ``ready``, then each
   subscriber's ``matched``: the start barrier;
3. :meth:`Session.go`: ``go`` to every publisher (nothing is sent before);
4. :meth:`Session.results`: every publisher's ``result``;
5. :meth:`Session.stop`: ``stop SENT`` (``S0,S1,...``: each publisher's) to
   every subscriber, all at once (they drain side by side);
6. :meth:`Session.drained`: one ``result`` per reader, each in its reader's
   slot (its ``reader`` index), a second result for a slot refused;
7. :meth:`Session.close`: ``close`` to every publisher (its endpoints go
   only now: nothing is in flight), then every agent's exit.

One point (:mod:`mwperf.execute.point`) is one session; an agent pair kept
across points (:mod:`mwperf.execute.pair`, ``--reuse-agents``) keeps its
session open between points (``next`` instead of a start, no ``close``
until the pair ends); a scenario (:mod:`mwperf.execute.scenario`) runs one
session per flow, in step. Any error event, early exit or missed deadline is
:class:`~mwperf.errors.PointFailed` with a reason naming the agent; a
subscriber whose publisher failed is asked for what it has
(:meth:`Session.salvage`).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from mwperf.errors import PointFailed
from mwperf.execute.process import AgentProcess, describe_exit

__all__ = ["SAID", "Session", "expect_event", "tell", "check_exit", "ready_ports", "reader_slot", "relay_converged",
           "stop_at", "participants_go", "participants_stop", "TICK_S"]

#: A middleware's own words in an agent's error: "; Cyclone said: ..." (core/security.h, LastSaid).
SAID = re.compile(r"; [A-Z][A-Za-z ]{1,20} said: .*$")

#: How often a wait gives its ``tick`` a turn (relaying ``converged``, cutting a burst).
TICK_S = 0.1

Tick = Callable[[], None]


def _failure(agent: AgentProcess, text: str) -> str:
    """Append the agent's last stderr line when it adds something."""
    agent.wait_exit(time.monotonic() + 0.5)
    last = agent.last_stderr()
    if last and last not in text:
        return f"{text} (stderr: {last})"
    return text


def expect_event(agent: AgentProcess, kinds: set[str], seconds: float, what: str,
                 skip: Callable[[dict], None] | None = None, tick: Tick | None = None) -> dict:
    """The next event of ``kinds``; PointFailed on error, exit or deadline.
    ``skip`` receives the other events (e.g. the publisher's ready); ``tick``,
    when given, is called every TICK_S while waiting."""
    deadline = time.monotonic() + seconds
    while True:
        until = deadline if tick is None else min(deadline, time.monotonic() + TICK_S)
        try:
            event = agent.wait_for(kinds | {"ready"}, until)
        except TimeoutError:
            if tick is not None and until < deadline:
                tick()
                continue
            said = f"{agent.role}: no {what} within {seconds:.1f} s (agent hung?)"
            raise PointFailed(_failure(agent, said)) from None
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


def participants_go(agents: Sequence[AgentProcess]) -> None:
    """A discovery point's start (docs/agent-protocol.md, `discover`): `go` to every participant."""
    for agent in agents:
        tell(agent, "go", close=False)


def participants_stop(agents: Sequence[AgentProcess], seconds: float) -> list[int | None]:
    """A discovery point's end: `stop` to each participant in turn, each given ``seconds`` to exit before the
    next is told (one gone has nothing to stop); their exit codes (None: still there, the caller kills it).

    One at a time, because a participant must not be torn down while its peers are: rmw_fastrtps (ROS 2
    Jazzy's Fast DDS 2.14) ends a participant with ``set_listener(nullptr)``, whose endless timeout
    overflows into a busy wait holding the participant's listener mutex; a discovery callback already
    running then (the peers' endpoints going, all at once when every participant is stopped together)
    waits for that mutex, and on a loaded machine the busy wait takes it back every time: the participant
    never exits (test_discovery_ros2.py, beside a CPU hog: 1 run in 20). Told one after another, a
    participant's peers are idle while it goes, and each hears of the others' endpoints leaving while it
    is not tearing itself down."""
    codes: list[int | None] = []
    for agent in agents:
        agent.send_line("stop")
        codes.append(agent.wait_exit(time.monotonic() + seconds))
    return codes


def check_exit(agent: AgentProcess, seconds: float) -> None:
    """PointFailed unless the agent exits, with 0, within ``seconds``."""
    code = agent.wait_exit(time.monotonic() + seconds)
    if code is None:
        raise PointFailed(_failure(agent, f"{agent.role}: did not exit within {seconds:.1f} s of its result"))
    if code != 0:
        raise PointFailed(_failure(agent, f"{agent.role}: {describe_exit(code)} after its result"))


def ready_ports(agent: AgentProcess, ready: dict, readers: int) -> list[int]:
    """The ports a subscriber's ready event gives: its one port, or with
    ``readers`` > 1 each reader's (``ports``). Port-less middlewares (DDS
    discovery) report 0 or none: 0 is passed on."""
    def check(port: object) -> int:
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise PointFailed(f"{agent.role}: ready event with a bad port: {port!r}")
        return port

    if readers == 1:
        return [check(ready.get("port", 0))]
    ports = ready.get("ports")
    if not isinstance(ports, list) or len(ports) != readers:
        raise PointFailed(f"{agent.role}: ready event without one port per reader ({readers}): {ports!r}")
    return [check(p) for p in ports]


def reader_slot(event: dict, readers: int, fallback: int) -> int:
    """Where a reader's result goes among one process's: by its ``reader`` index (else ``fallback``)."""
    reader = event.get("reader")
    if readers > 1 and isinstance(reader, int) and not isinstance(reader, bool) and 0 <= reader < readers:
        return reader
    return fallback


def relay_converged(sub: AgentProcess, pub: AgentProcess) -> Tick:
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


def stop_at(pub: AgentProcess, deadline: float) -> Tick:
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


@dataclass
class Session:
    """One topic's agents through the protocol (see the module's text).
    ``readers``: the reader threads of each subscriber agent; ``slack``: seconds
    added to every wait (--point-timeout)."""

    subs: list[AgentProcess]
    readers: int = 1
    slack: float = 0.0
    pubs: list[AgentProcess] = field(default_factory=list)

    @property
    def agents(self) -> list[AgentProcess]:
        return [*self.pubs, *self.subs]

    def ready(self, seconds: float) -> tuple[dict, list[int]]:
        """Step 1: (the first subscriber's ready event, every reader's port, in order)."""
        first: dict = {}
        ports: list[int] = []
        for index, sub in enumerate(self.subs):
            ready = expect_event(sub, {"ready"}, seconds + self.slack, "ready event")
            if index == 0:
                first = ready
            ports += ready_ports(sub, ready, self.readers)
        return first, ports

    def matched(self, seconds: float) -> dict:
        """Step 2, the start barrier: every publisher ready, then every subscriber
        matched and receiving; the first publisher's ready event."""
        first: dict = {}
        for index, pub in enumerate(self.pubs):
            ready = expect_event(pub, {"ready"}, seconds + self.slack, "ready event")
            if index == 0:
                first = ready
        for sub in self.subs:
            expect_event(sub, {"matched"}, seconds + self.slack, "matched event")
        return first

    def go(self) -> None:
        """Step 3: every publisher starts sending."""
        for pub in self.pubs:
            tell(pub, "go", close=False)

    def results(self, until: float, tick: Callable[[AgentProcess], Tick | None] | None = None,
                into: list[dict] | None = None) -> list[dict]:
        """Step 4: every publisher's result, by ``until`` (time.monotonic(), the
        slack already in it); ``tick(pub)``: what runs while waiting for that one;
        ``into``: where each result goes as it comes (those before a failure kept)."""
        got = into if into is not None else []
        for pub in self.pubs:
            got.append(expect_event(pub, {"result"}, max(until - time.monotonic(), 0.1), "result",
                                    tick=None if tick is None else tick(pub)))
        return got

    def stop(self, sent: list[object], close: bool = True) -> None:
        """Step 5: every subscriber told what was sent (``stop S`` or ``stop S0,S1,...``; -1 where a count is
        missing), all at once; ``close``: their input ends with it (a pair's stays open for ``next``)."""
        counts = ",".join(str(s) if isinstance(s, int) and not isinstance(s, bool) else "-1" for s in sent)
        for sub in self.subs:
            tell(sub, f"stop {counts}", close=close)

    def drained(self, seconds: float) -> list[dict]:
        """Step 6: each reader's result (a subscriber agent's in reader order), each within ``seconds``.
        PointFailed when a reader answers twice (its slot taken: another reader's result would be lost)."""
        results: list[dict] = []
        for sub in self.subs:
            got: list[dict | None] = [None] * self.readers
            for j in range(self.readers):  # one result per reader, in reader order
                event = expect_event(sub, {"result"}, seconds + self.slack, "result after stop")
                slot = reader_slot(event, self.readers, j)
                if got[slot] is not None:
                    raise PointFailed(f"{sub.role}: two results for reader {slot}")
                got[slot] = event
            results += [r for r in got if r is not None]
        return results

    def close(self, seconds: float, subscribers: bool = False) -> None:
        """Step 7: the publishers' endpoints may go (a reliable writer's linger first), then every exit is
        checked (a publisher already gone: its exit says why). ``subscribers``: told ``close`` too (an agent
        pair's, whose input stayed open for ``next``)."""
        for sub in self.subs if subscribers else ():
            if sub.proc.poll() is None:
                sub.send_line("close")
        for pub in self.pubs:
            pub.send_line("close")
        for agent in (*self.subs, *self.pubs):
            check_exit(agent, seconds + self.slack)

    def salvage(self, seconds: float, have: Sequence[dict | None] | None = None) -> list[dict | None]:
        """After a publisher failure: every reader's result the subscribers still give when told
        ``stop -1`` (None where none came), those in ``have`` kept."""
        total = len(self.subs) * self.readers
        results: list[dict | None] = list(have) if have is not None else [None] * total
        for sub in self.subs:
            if sub.proc.poll() is None:
                sub.send_line("stop -1")
        deadline = time.monotonic() + seconds
        for i, sub in enumerate(self.subs):
            base = i * self.readers
            # what a subscriber wrote before it ended is still read (an agent gone
            # without a result ends its output: no wait)
            for _ in range(sum(r is None for r in results[base:base + self.readers])):
                try:
                    event = sub.wait_for({"result"}, deadline)
                except TimeoutError:
                    break
                if event is None or event.get("event") != "result":
                    break
                free = next(k for k in range(self.readers) if results[base + k] is None)
                results[base + reader_slot(event, self.readers, free)] = event
        return results

    def subscribers_said(self, seconds: float) -> str:
        """After a publisher failed to match: what a subscriber's middleware said of it ("; Cyclone said:
        ..."), from that subscriber's own error, which its own match timeout brings within ``seconds``
        (it started first); "" when none says anything. The reason of a secured handshake that fails is
        often only the side that receives it knows (Cyclone 0.10 refusing Fast DDS's ECDH key)."""
        deadline = time.monotonic() + seconds
        for sub in self.subs:
            while True:
                try:
                    event = sub.wait_for({"error"}, deadline)
                except TimeoutError:
                    break
                if event is None or event.get("event") != "error":
                    break
                found = SAID.search(str(event.get("error") or ""))
                if found:
                    return found.group(0)
        return ""

    def kill(self) -> None:
        """Every agent's process group, gone (in a ``finally``: nothing is left behind)."""
        for agent in self.agents:
            agent.kill()
