"""Agent pairs across points (``--reuse-agents``, Perftest's ``-scan``).

Without it every point starts its own agents (:func:`mwperf.execute.point.run_point`).
With it, consecutive points that differ only in what the agent's option
table marks *pair* (size, rate, duration, ...) share one agent pair: started
with ``--reuse BYTES`` (the largest size of those points: the middleware is
opened once, its buffers sized for it), matched once, and handed each next
point with ``next ARGS`` (docs/agent-protocol.md, "Agent pairs"). Point i of
a pair numbers its samples from ``i << 40``: what arrives late from an
earlier point is foreign. Each record says so (``reuse``: the pair, the
point's place in it, the size the pair was opened for); a pair ends at a
point that differs in anything else, at a failed point (its agents are
killed; the next point starts a fresh pair), after 256 points, and at the end
of the run (:meth:`Pairs.close`, in the runner's ``finally``).

Only on one host: a namespace pair or two hosts are a placement per point.
"""

from __future__ import annotations

import random
import secrets
import time
from dataclasses import dataclass
from typing import Sequence

from mwperf.errors import AgentError, PointFailed, ServiceError
from mwperf.execute import keystore, services
from mwperf.execute.keeper import ServiceKeeper
from mwperf.execute.process import AgentProcess
from mwperf.execute.phases import PhaseClock
from mwperf.execute.placement import Local
from mwperf.execute.delivery import check_delivery
from mwperf.execute.point import (DEFAULT_TIMEOUTS, RUN_ID_ENV, Resolved, Timeouts, agent_argv, point_ticks, run_point,
                                  salvage)
from mwperf.execute.session import Session, tell
from mwperf.interrupts import signals_deferred
from mwperf.plan.options import PlannedPoint, RunOptions, TestPoint
from mwperf.model.merge import PointOutcome

__all__ = ["Pairs", "signature", "opened_for", "next_args", "MAX_PAIR_POINTS"]

#: The agent's kMaxPairPoints (core/options.h): point << 40 stays below 2^48.
MAX_PAIR_POINTS = 256


def signature(job: PlannedPoint) -> tuple:
    """What points of one pair share: everything but the values of pair rows
    (and, of those without a default, whether they are given: `next` can
    change a value, not take one back), where and how the agents run, and
    the repetition (repetitions are launches of their own)."""
    table = job.opts.table
    values = dict(job.point.values)
    fixed = tuple((row.name, values.get(row.name) if not row.pair else
                   (row.default is None and values.get(row.name) is None))
                  for row in table.user_rows if row.name not in ("mw", "mode"))
    o = job.opts
    return (job.point.mw, job.point.mode, fixed, o.cpu, o.link, o.hosts, o.point_timeout_ns, str(o.out),
            job.repetition)


def opened_for(jobs: Sequence[PlannedPoint]) -> list[int]:
    """Each job's pair size: the largest --size of the run of consecutive jobs it belongs to."""
    out: list[int] = []
    start = 0
    for i in range(1, len(jobs) + 1):
        if i == len(jobs) or signature(jobs[i]) != signature(jobs[start]) or i - start >= MAX_PAIR_POINTS:
            biggest = max(int(job.point.get("size")) for job in jobs[start:i])
            out += [biggest] * (i - start)
            start = i
    return out


def _escape(word: str) -> str:
    return word.replace("%", "%25").replace(" ", "%20").replace("\t", "%09").replace("\n", "%0A")


def next_args(argv: list[str], opts: RunOptions, role: str, point: TestPoint) -> str:
    """The ``next`` line's arguments for ``role``: every pair row of the
    side's command line, and the default of each pair row it leaves out (in
    `next`, what is left out keeps the pair's first value)."""
    table = opts.table
    given: dict[str, str] = {}
    for flag, value in zip(argv, argv[1:]):
        row = table.get(flag[2:]) if flag.startswith("--") else None
        if row is not None and row.pair and row.command == "run":
            given[row.name] = value
    for row in table.rows:
        if row.pair and row.command == "run" and row.name not in given and row.user and row.for_role(role) \
                and row.applies(point.mode) and row.default is not None:
            given[row.name] = row.argv(row.default)
    return " ".join(f"--{name} {_escape(value)}" for name, value in given.items())


@dataclass
class _Pair:
    """One agent pair: its session (kept open across its points), key and run id, and where it stands."""

    number: int
    signature: tuple
    size: int
    run_id: int
    key: str
    service: services.Service
    session: Session
    points: int = 0  # served so far

    def kill(self) -> None:
        with signals_deferred():
            self.session.kill()

    def close(self, timeouts: Timeouts) -> None:
        """`close` to every side (the subscribers' input too), each exit awaited (kill what does not go)."""
        try:
            self.session.close(timeouts.after_result or 0.0, subscribers=True)
        except (PointFailed, AgentError):
            pass
        finally:
            self.kill()


class Pairs:
    """The run's points, each on agents of its own, or (``reuse``) on the agent
    pair of the consecutive points alike (see the module's text). ``jobs``:
    the run's planned points (each pair's size comes from them); ``keeper``:
    the run's services."""

    def __init__(self, jobs: Sequence[PlannedPoint], keeper: ServiceKeeper, reuse: bool = False):
        self.keeper = keeper
        self.reuse = reuse
        self._sizes = dict(zip(map(id, jobs), opened_for(jobs))) if reuse else {}
        self._pair: _Pair | None = None
        self._pairs = 0
        self._timeouts: Timeouts = DEFAULT_TIMEOUTS

    def run(self, job: PlannedPoint, agent: str, timeouts: Timeouts = DEFAULT_TIMEOUTS) -> PointOutcome:
        """One point; never raises for agent, link or service trouble (see outcome.error)."""
        if not self.reuse or id(job) not in self._sizes or job.opts.link is not None or job.opts.hosts is not None:
            self.close()
            return run_point(job.opts, job.point, agent, timeouts, keeper=self.keeper)
        timeouts = timeouts.resolved(job.opts.agent)
        self._timeouts = timeouts
        sig = signature(job)
        pair = self._pair
        if pair is not None and (pair.signature != sig or pair.points >= MAX_PAIR_POINTS
                                 or pair.size != self._sizes[id(job)]):
            self.close()
        phases = PhaseClock()
        outcome = PointOutcome()
        try:
            info = job.opts.adapters.get(job.point.mw)
            with self.keeper.running(info, Local(), job.point) as service:
                if self._pair is not None and service.name and self._pair.service is not service:
                    self.close()  # its agents talk to a service that is gone
                phases.mark("placed")
                kept = self.keeper.describe() if service.name else None
                outcome = self._point(job, agent, timeouts, service, phases)
                outcome.service = kept
        except ServiceError as exc:
            outcome.error = str(exc)
        except BaseException:  # interrupted mid-point: its agents go at once, not after their run
            if self._pair is not None:
                self._pair.kill()
                self._pair = None
            raise
        if outcome.error is not None:
            self.keeper.failed()
            if self._pair is not None:  # a failed point ends its pair: the next starts fresh
                self._pair.kill()
                self._pair = None
        outcome.link = None  # one host: no link
        outcome.security = keystore.section(job.opts, job.point)
        phases.mark("end")
        outcome.phases = phases.as_dict()
        return outcome

    def close(self) -> None:
        """The pair's agents closed (the end of a pair, of the run)."""
        pair, self._pair = self._pair, None
        if pair is not None:
            pair.close(self._timeouts)

    def _point(self, job: PlannedPoint, agent: str, timeouts: Resolved, service: services.Service,
               phases: PhaseClock) -> PointOutcome:
        """One point of the pair (its first: the agents start; a later one: ``next``), through the session
        protocol (:mod:`mwperf.execute.session`), the pair left open."""
        opts, point = job.opts, job.point
        outcome = PointOutcome()
        readers = point.subscribers if point.threaded else 1
        pair = self._pair
        fresh = pair is None
        try:
            if pair is None:
                self._pairs += 1
                pair = _Pair(self._pairs, signature(job), self._sizes[id(job)], random.getrandbits(32),
                             secrets.token_hex(16), service, Session([], readers, opts.point_timeout_ns / 1e9))
                self._pair = pair
            session = pair.session
            place = pair.points
            outcome.reuse = {"pair": pair.number, "point": place, "opened_for_bytes": pair.size}

            def argv(role: str, ports: str, index: int = 0) -> list[str]:
                return agent_argv(agent, role, point, opts, ports, sub_index=index) + ["--reuse", str(pair.size)]

            def start(role: str, ports: str, index: int = 0) -> AgentProcess:
                env = {RUN_ID_ENV: str(pair.run_id), **service.agent_env(role)}
                name = role if index == 0 else f"{role}{index}"
                process = AgentProcess(Local().wrap(role, argv(role, ports, index) + service.agent_args(role)), name,
                                       env=env)
                tell(process, f"key {pair.key}", close=False)
                return process

            if fresh:
                for index in range(point.subscribers // readers):
                    session.subs.append(start("sub", "0", index))
                outcome.sub_ready, ports = session.ready(timeouts.ready)
                phases.mark("ready")
                session.pubs.append(start("pub", ",".join(str(p) for p in ports) if any(ports) else "0"))
            else:
                for index, each in enumerate(session.subs):
                    tell(each, "next " + next_args(argv("sub", "0", index), opts, "sub", point), close=False)
                phases.mark("ready")
                for pub in session.pubs:
                    tell(pub, "next " + next_args(argv("pub", "0"), opts, "pub", point), close=False)
            outcome.pub_ready = session.matched(point.get("match-timeout") / 1e9 + timeouts.ready)
            if outcome.pub_ready.get("pair_point", place) != place:
                raise PointFailed(f"pub: ready for point {outcome.pub_ready.get('pair_point')} of the pair, "
                                  f"not {place}")
            phases.mark("matched")
            session.go()
            run_s = point.planned_s
            ticks = point_ticks(point, session, time.monotonic() + run_s + timeouts.start + session.slack)
            (outcome.pub,) = session.results(time.monotonic() + run_s + timeouts.start + timeouts.ping
                                             + timeouts.blocked + session.slack, ticks)
            phases.mark("result")
            if place:  # matched before this point: the pair's discovery is the first point's, not this one's
                outcome.pub = {**outcome.pub, "discovery_ns": None}
                outcome.pub_ready = {**outcome.pub_ready, "discovery_ns": None}
            sent = outcome.pub.get("sent")
            session.stop([sent], close=False)  # the pair stays open for the next point
            results = session.drained(timeouts.drain + timeouts.stop)
            phases.mark("drained")
            phases.mark("closed")  # the pair stays open for the next point
            check_delivery(results, sent)
            outcome.sub = results[0]
            if len(results) > 1:
                outcome.subs = results
            pair.points += 1
        except PointFailed as exc:
            outcome.error = str(exc)
            if pair is not None and pair.session.pubs and not str(exc).startswith("sub"):
                salvage(pair.session, outcome, timeouts.drain + 1.0)
        except AgentError as exc:
            outcome.error = str(exc)
        return outcome
