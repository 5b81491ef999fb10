"""Run test points: two agents per point, driven by deadlines.

Per point (docs/agent-protocol.md): start the subscriber, wait for its
``ready`` (its port), start the publisher, wait for the publisher's
``result``, write ``stop SENT`` to the subscriber, wait for its ``result``.
Any error event, non-zero exit or missed deadline fails that point with a
reason and the run goes on. Both agents' process groups are killed in a
``finally``, so an interrupted or failed point leaves no process behind.

:func:`run` runs every point of the options, writes each record as soon as
it is measured, prints a progress line per point and the tables at the end.
Exit code: 0 all points ok, 1 some point failed, 130 interrupted. Stale
middleware shared-memory segments are removed before the first point and,
in a ``finally``, after the last (:mod:`mwperf.cleanup`).
"""

from __future__ import annotations

import random
import sys
import time
from dataclasses import dataclass
from typing import Callable, TextIO

from mwperf import provenance
from mwperf.agent import AgentError, AgentProcess, describe_exit
from mwperf.cleanup import clean_shm
from mwperf.export.tables import point_summary, render
from mwperf.interrupts import signals_deferred, sigterm_as_interrupt
from mwperf.options import RunOptions, TestPoint
from mwperf.qos import qos_agent_args
from mwperf.record import merge_record, utc_now_iso
from mwperf.rundir import RunDir

__all__ = ["PointOutcome", "PointFailed", "agent_argv", "run_point", "run", "Timeouts"]


@dataclass(frozen=True)
class Timeouts:
    """Seconds; ``slack`` (--point-timeout) is added to each deadline, and the
    publisher's result deadline also holds --match-timeout (discovery)."""

    ready: float = 5.0        # sub start-up until its ready event
    after_result: float = 2.0  # a side's exit after its result
    stop: float = 5.0         # sub result after 'stop SENT' (plus drain)
    drain: float = 0.5        # agent default --drain-ns
    ping: float = 2.0         # a last unanswered ping of warm-up and of the run (agent --ping-timeout-ns 1 s each)


#: The subscriber starts waiting for its match before the publisher even
#: starts, so it waits this much longer than the publisher.
SUB_MATCH_MARGIN_NS = 5_000_000_000


DEFAULT_TIMEOUTS = Timeouts()


class PointFailed(Exception):
    """The point cannot go on; the message is the record's error."""


@dataclass
class PointOutcome:
    pub: dict | None = None
    sub: dict | None = None
    pub_ready: dict | None = None
    sub_ready: dict | None = None
    error: str | None = None


def agent_argv(agent: str, role: str, point: TestPoint, opts: RunOptions, run_id: int,
               port: int) -> list[str]:
    core = opts.cpu.pub if role == "pub" else opts.cpu.sub
    match_ns = opts.qos.match_timeout_ns + (SUB_MATCH_MARGIN_NS if role == "sub" else 0)
    argv = [
        agent, "run",
        "--role", role,
        "--mw", point.mw,
        "--mode", point.mode,
        "--size", str(point.size),
        "--duration-ns", str(opts.duration_ns),
        "--warmup-ns", str(opts.warmup_ns),
        "--cpu", str(-1 if core is None else core),
        "--wait", opts.wait,
        "--run-id", str(run_id),
        "--port", str(port),
    ]
    if point.mode == "rate" and point.rate_hz is not None:
        argv += ["--rate-hz", repr(float(point.rate_hz))]
    if point.mode == "throughput":
        argv += ["--latency-count", str(opts.latency_count)]
    argv += ["--match-timeout-ns", str(match_ns)]
    argv += qos_agent_args(opts.qos, opts.adapters.get(point.mw), transport=point.transport,
                           reliability=point.reliability, history=point.history, durability=point.durability)
    return argv


def _failure(agent: AgentProcess, text: str) -> str:
    """Append the agent's last stderr line when it adds something."""
    agent.wait_exit(time.monotonic() + 0.5)
    last = agent.last_stderr()
    if last and last not in text:
        return f"{text} (stderr: {last})"
    return text


def _expect(agent: AgentProcess, kinds: set[str], seconds: float, what: str,
            skip: Callable[[dict], None] | None = None) -> dict:
    """The next event of ``kinds``; PointFailed on error, exit or deadline.
    ``skip`` receives the other events (e.g. the publisher's ready)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            event = agent.wait_for(kinds | {"ready"}, deadline)
        except TimeoutError:
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


def _check_exit(agent: AgentProcess, seconds: float) -> None:
    code = agent.wait_exit(time.monotonic() + seconds)
    if code is None:
        raise PointFailed(_failure(agent, f"{agent.role}: did not exit within {seconds:.1f} s of its result"))
    if code != 0:
        raise PointFailed(_failure(agent, f"{agent.role}: {describe_exit(code)} after its result"))


def _salvage_sub(sub: AgentProcess, outcome: PointOutcome, seconds: float) -> None:
    """After a publisher failure, ask the subscriber for what it has."""
    if outcome.sub is not None or sub.proc.poll() is not None:
        return
    sub.send_line("stop -1")
    deadline = time.monotonic() + seconds
    try:
        event = sub.wait_for({"result"}, deadline)
    except TimeoutError:
        return
    if event is not None and event.get("event") == "result":
        outcome.sub = event


def run_point(opts: RunOptions, point: TestPoint, agent: str,
              timeouts: Timeouts = DEFAULT_TIMEOUTS) -> PointOutcome:
    """Run one point; never raises for agent trouble (see outcome.error)."""
    outcome = PointOutcome()
    slack = opts.point_timeout_ns / 1e9
    run_id = random.getrandbits(32)
    sub: AgentProcess | None = None
    pub: AgentProcess | None = None
    pub_started = False
    try:
        sub = AgentProcess(agent_argv(agent, "sub", point, opts, run_id, 0), "sub")
        outcome.sub_ready = _expect(sub, {"ready"}, timeouts.ready + slack, "ready event")
        # Port-less middlewares (DDS discovery) report port 0 or none: pass 0 on.
        port = outcome.sub_ready.get("port", 0)
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise PointFailed(f"sub: ready event with a bad port: {port!r}")

        pub = AgentProcess(agent_argv(agent, "pub", point, opts, run_id, port), "pub")
        pub_started = True
        run_s = (opts.warmup_ns + opts.duration_ns) / 1e9
        match_s = opts.qos.match_timeout_ns / 1e9
        outcome.pub = _expect(pub, {"result"}, run_s + match_s + timeouts.ping + slack, "result",
                              skip=lambda ev: setattr(outcome, "pub_ready", ev))
        _check_exit(pub, timeouts.after_result + slack)

        sent = outcome.pub.get("sent")
        if not sub.send_line(f"stop {sent if isinstance(sent, int) else -1}"):
            code = sub.wait_exit(time.monotonic() + 1.0)
            how = "closed its input" if code is None else describe_exit(code)
            raise PointFailed(_failure(sub, f"sub: {how} before 'stop' could be sent"))
        outcome.sub = _expect(sub, {"result"}, timeouts.drain + timeouts.stop + slack, "result after stop")
        _check_exit(sub, timeouts.after_result + slack)
    except PointFailed as exc:
        outcome.error = str(exc)
        if pub_started and sub is not None and not str(exc).startswith("sub:"):
            _salvage_sub(sub, outcome, timeouts.drain + 1.0)
    except AgentError as exc:
        outcome.error = str(exc)
    finally:
        with signals_deferred():
            for side in (pub, sub):
                if side is not None:
                    side.kill()
    return outcome


def _point_label(point: TestPoint) -> str:
    label = f"{point.mw} {point.mode} {point.size} B"
    if point.rate_hz is not None:
        label += f" {point.rate_hz:g} Hz"
    qos = point.qos_label()
    return f"{label} ({qos})" if qos else label


def _clean_shm(progress: TextIO, when: str) -> None:
    """Remove stale middleware shared-memory segments; never fails the run."""
    try:
        removed = clean_shm()
    except OSError as exc:  # pragma: no cover - /dev/shm unreadable
        progress.write(f"mwperf: warning: shared-memory clean-up {when} failed: {exc}\n")
        return
    if removed:
        progress.write(f"mwperf: removed {len(removed)} stale shared-memory segment(s) {when}: "
                       f"{', '.join(sorted(removed)[:5])}{' ...' if len(removed) > 5 else ''}\n")
        progress.flush()


def run(opts: RunOptions, agent: str, argv: list[str], *, out: TextIO | None = None,
        progress: TextIO | None = None, fmt: str = "text",
        timeouts: Timeouts = DEFAULT_TIMEOUTS) -> int:
    """Run every point; returns the exit code (0 ok, 1 a point failed, 130 interrupted)."""
    out = out or sys.stdout
    progress = progress or sys.stderr
    _clean_shm(progress, "before the run")
    rundir = RunDir(opts.out).create()
    points = opts.points()
    doc = provenance.collect(run_id=opts.run_id, argv=argv, options=opts.as_dict(), agent=agent,
                             started=utc_now_iso())
    doc["points"]["total"] = len(points)
    rundir.write_run_json(doc)

    records: list[dict] = []
    status = "running"
    with sigterm_as_interrupt():
        try:
            for point in points:
                progress.write(f"[{point.index + 1}/{len(points)}] {_point_label(point)} ... ")
                progress.flush()
                started = utc_now_iso()
                outcome = run_point(opts, point, agent, timeouts)
                record = merge_record(
                    run_id=opts.run_id, point=point, time=started,
                    duration_ns=opts.duration_ns, warmup_ns=opts.warmup_ns,
                    cpu=opts.cpu, wait=opts.wait, qos=opts.qos,
                    pub=outcome.pub, sub=outcome.sub,
                    pub_ready=outcome.pub_ready, sub_ready=outcome.sub_ready,
                    adapter=opts.adapters.get(point.mw), error=outcome.error,
                )
                rundir.append(record)
                records.append(record)
                progress.write(point_summary(record) + "\n")
                progress.flush()
            status = "complete"
        except KeyboardInterrupt:
            status = "interrupted"
            progress.write("\nmwperf: interrupted; results so far are kept\n")
            progress.flush()
        finally:
            ok = sum(1 for r in records if r["status"] == "ok")
            if status == "running":  # an unexpected exception is on its way up
                status = "failed"
            doc.update({"status": status, "finished": utc_now_iso()})
            doc["points"].update({"ok": ok, "failed": len(records) - ok, "done": len(records)})
            rundir.write_run_json(doc)
            with signals_deferred():
                _clean_shm(progress, "after the run")

    if records:
        out.write("\n" + render(records, fmt))
    out.write(f"\nresults: {rundir.path}\n")
    out.flush()
    if status == "interrupted":
        return 130
    return 0 if all(r["status"] == "ok" for r in records) else 1
