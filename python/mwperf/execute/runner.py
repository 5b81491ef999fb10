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
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from typing import Callable, TextIO

from mwperf import provenance
from mwperf.agent import AgentError, AgentProcess, describe_exit
from mwperf.cleanup import clean_leftovers
from mwperf.export.tables import point_summary, render
from mwperf.interrupts import signals_deferred, sigterm_as_interrupt
from mwperf.options import RunOptions, TestPoint
from mwperf.progress import Progress
from mwperf.qos import qos_agent_args
from mwperf.record import merge_record, utc_now_iso
from mwperf.rundir import SAMPLES_DIR, RunDir, samples_path

__all__ = ["PointOutcome", "PointFailed", "Job", "agent_argv", "run_point", "run", "execute", "adaptive_saving", "Timeouts"]


@dataclass(frozen=True)
class Timeouts:
    """Seconds; ``slack`` (--point-timeout) is added to each deadline, and the
    publisher's result deadline also holds --match-timeout (discovery)."""

    ready: float = 5.0        # sub start-up until its ready event
    after_result: float = 2.0  # a side's exit after its result
    stop: float = 5.0         # sub result after 'stop SENT' (plus drain)
    drain: float = 0.5        # agent default --drain-ns
    ping: float = 2.0         # a last unanswered ping of warm-up and of the run (agent --ping-timeout-ns 1 s each)
    blocked: float = 2.0      # a send still blocked in the middleware when the measured phase ends


#: The subscriber starts waiting for its match before the publisher even
#: starts, so it waits this much longer than the publisher.
SUB_MATCH_MARGIN_NS = 5_000_000_000
#: How often the controller relays the subscriber's `converged` (rate mode, --precision).
TICK_S = 0.1


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
    clock: dict | None = None  # two hosts: the estimated clock offset (mwperf.clocks)


def agent_argv(agent: str, role: str, point: TestPoint, opts: RunOptions, run_id: int,
               port: int, clock_offset_ns: int = 0) -> list[str]:
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
    if opts.samples and role == "pub":
        argv += ["--count", str(opts.samples)]
    argv += ["--samples-out", str(opts.out / samples_path(point.index))]
    if opts.precision:
        argv += ["--precision", repr(opts.precision)]
    argv += ["--confidence", opts.confidence]
    if opts.clock != "monotonic":
        argv += ["--clock", opts.clock]
    if role == "sub" and clock_offset_ns:
        argv += ["--clock-offset-ns", str(clock_offset_ns)]
    argv += ["--match-timeout-ns", str(match_ns)]
    info = opts.adapters.get(point.mw)
    transport = point.transport
    if transport is None and (opts.link or opts.hosts) and info is not None and "shm" in info.transport:
        # Between hosts shared memory is no transport: a default that uses it
        # (Fast DDS shm+udp) becomes UDP, so that the data crosses the link.
        transport = "udp"
    argv += qos_agent_args(opts.qos, info, transport=transport, reliability=point.reliability,
                           history=point.history, durability=point.durability, wait=opts.wait)
    return argv


def _failure(agent: AgentProcess, text: str) -> str:
    """Append the agent's last stderr line when it adds something."""
    agent.wait_exit(time.monotonic() + 0.5)
    last = agent.last_stderr()
    if last and last not in text:
        return f"{text} (stderr: {last})"
    return text


def _expect(agent: AgentProcess, kinds: set[str], seconds: float, what: str,
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


def _in_link(pair, role: str, argv: list[str]) -> list[str]:
    """The agent's argv, run where the role runs (namespace, ssh host) with its addresses."""
    return argv if pair is None else pair.wrap(role, argv)


def _relay_converged(sub: AgentProcess, pub: AgentProcess) -> Callable[[], None]:
    """Rate mode's adaptive stop: the subscriber owns the one-way latency and
    says `converged`; the publisher is told to stop."""
    relayed = False

    def tick() -> None:
        nonlocal relayed
        if not relayed and sub.take_event("converged") is not None:
            relayed = True
            pub.send_line("stop")

    return tick


def run_point(opts: RunOptions, point: TestPoint, agent: str,
              timeouts: Timeouts = DEFAULT_TIMEOUTS) -> PointOutcome:
    """Run one point; never raises for agent trouble (see outcome.error).
    With --link netns, in a namespace pair made for the point and removed after it."""
    if opts.link is None and opts.hosts is None:
        return _run_point(opts, point, agent, timeouts, None)
    from mwperf.clocks import estimate
    from mwperf.netns import NetnsPair

    where = opts.hosts if opts.hosts is not None else NetnsPair(opts.link, point.index)
    try:
        with where as pair:
            clock = estimate(pair.command("pub", [agent, "clock"]), pair.command("sub", [agent, "clock"]),
                             same_clock=pair.same_clock, kind=opts.clock)
            # Two monotonic clocks: the subscriber subtracts the estimated offset
            # from every one-way sample. A realtime clock is trusted to be
            # synchronised (PTP, chrony): its estimate is recorded as a check.
            offset_ns = 0 if pair.same_clock or opts.clock == "realtime" else int(round(clock["offset_us"] * 1000))
            outcome = _run_point(opts, point, agent, timeouts, pair, offset_ns)
            outcome.clock = clock
            return outcome
    except OSError as exc:
        name = opts.link.name if opts.link else "ssh"
        return PointOutcome(error=f"link {name}: {exc}")


def _run_point(opts: RunOptions, point: TestPoint, agent: str, timeouts: Timeouts, pair,
               clock_offset_ns: int = 0) -> PointOutcome:
    outcome = PointOutcome()
    slack = opts.point_timeout_ns / 1e9
    run_id = random.getrandbits(32)
    sub: AgentProcess | None = None
    pub: AgentProcess | None = None
    pub_started = False
    try:
        sub = AgentProcess(_in_link(pair, "sub", agent_argv(agent, "sub", point, opts, run_id, 0, clock_offset_ns)),
                           "sub")
        outcome.sub_ready = _expect(sub, {"ready"}, timeouts.ready + slack, "ready event")
        # Port-less middlewares (DDS discovery) report port 0 or none: pass 0 on.
        port = outcome.sub_ready.get("port", 0)
        if not isinstance(port, int) or isinstance(port, bool) or not 0 <= port <= 65535:
            raise PointFailed(f"sub: ready event with a bad port: {port!r}")

        pub = AgentProcess(_in_link(pair, "pub", agent_argv(agent, "pub", point, opts, run_id, port)), "pub")
        pub_started = True
        run_s = (opts.warmup_ns + opts.duration_ns) / 1e9
        match_s = opts.qos.match_timeout_ns / 1e9
        outcome.pub = _expect(pub, {"result"}, run_s + match_s + timeouts.ping + timeouts.blocked + slack, "result",
                              skip=lambda ev: setattr(outcome, "pub_ready", ev),
                              tick=_relay_converged(sub, pub) if opts.precision and point.mode == "rate" else None)
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


def point_label(point: TestPoint) -> str:
    label = f"{point.mw} {point.mode} {point.size} B"
    if point.rate_hz is not None:
        label += f" {point.rate_hz:g} Hz"
    qos = point.qos_label()
    return f"{label} ({qos})" if qos else label


def _clean_leftovers(progress: TextIO, when: str) -> None:
    """Remove the namespaces of crashed runs and stale middleware shared-memory
    segments; never fails the run."""
    try:
        gone, removed = clean_leftovers()
    except (OSError, subprocess.SubprocessError) as exc:  # pragma: no cover - /dev/shm unreadable, no ip tool
        progress.write(f"mwperf: warning: clean-up {when} failed: {exc}\n")
        return
    if gone:
        progress.write(f"mwperf: removed {len(gone)} namespace(s) left by a crashed run: {', '.join(gone)}\n")
    if removed:
        progress.write(f"mwperf: removed {len(removed)} stale shared-memory segment(s) {when}: "
                       f"{', '.join(sorted(removed)[:5])}{' ...' if len(removed) > 5 else ''}\n")
        progress.flush()


@dataclass(frozen=True)
class Job:
    """One point to measure with the options it runs under (a sweep gives
    every point its own), its repetition and its key (what resume matches)."""

    opts: RunOptions
    point: TestPoint
    repetition: int | None = None
    key: str | None = None


def run(opts: RunOptions, agent: str, argv: list[str], *, out: TextIO | None = None,
        progress: TextIO | None = None, fmt: str = "text",
        timeouts: Timeouts = DEFAULT_TIMEOUTS) -> int:
    """Run every point of ``opts``; returns the exit code (0 ok, 1 a point failed, 130 interrupted)."""
    doc = provenance.collect(run_id=opts.run_id, argv=argv, options=opts.as_dict(), agent=agent,
                             started=utc_now_iso())
    jobs = [Job(opts, point) for point in opts.points()]
    if opts.both_directions:  # A->B then B->A for every point, as in the wired/wireless study
        back = replace(opts, hosts=opts.hosts.reversed())
        jobs = [Job(o, replace(job.point, index=2 * job.point.index + k))
                for job in jobs for k, o in enumerate((opts, back))]
    return execute(jobs, RunDir(opts.out), agent, doc, out=out, progress=progress, fmt=fmt, timeouts=timeouts)


def execute(jobs: list[Job], rundir: RunDir, agent: str, doc: dict, *, earlier: list[dict] | None = None,
            out: TextIO | None = None, progress: TextIO | None = None, fmt: str = "text",
            timeouts: Timeouts = DEFAULT_TIMEOUTS) -> int:
    """Run ``jobs`` into ``rundir`` (created if new), appending each record as
    soon as it is measured; ``doc`` is run.json (provenance), kept up to date.
    ``earlier`` are the records already there (a resumed sweep): they count in
    the totals and the tables. Returns the exit code."""
    out = out or sys.stdout
    progress = progress or sys.stderr
    earlier = list(earlier or [])
    _clean_leftovers(progress, "before the run")
    rundir.create()
    (rundir.path / SAMPLES_DIR).mkdir(exist_ok=True)
    doc.setdefault("points", {})["total"] = len(earlier) + len(jobs)
    rundir.write_run_json(doc)

    bar = Progress(progress, [job.opts.planned_s for job in jobs])
    records: list[dict] = []
    status = "running"
    with sigterm_as_interrupt():
        try:
            for job in jobs:
                opts, point = job.opts, job.point
                bar.start(point_label(point))
                started = utc_now_iso()
                outcome = run_point(opts, point, agent, timeouts)
                record = merge_record(
                    run_id=rundir.path.name, point=point, time=started,
                    duration_ns=opts.duration_ns, warmup_ns=opts.warmup_ns,
                    cpu=opts.cpu, wait=opts.wait, qos=opts.qos,
                    pub=outcome.pub, sub=outcome.sub,
                    pub_ready=outcome.pub_ready, sub_ready=outcome.sub_ready,
                    adapter=opts.adapters.get(point.mw), error=outcome.error,
                    repetition=job.repetition, point_key=job.key, samples=opts.samples,
                    precision=opts.precision, confidence=opts.confidence,
                    link=(opts.link.as_dict() if opts.link else opts.hosts.as_dict() if opts.hosts else None),
                    clock=outcome.clock,
                )
                rundir.append(record)
                records.append(record)
                bar.finish(point_summary(record))
            status = "complete"
        except KeyboardInterrupt:
            status = "interrupted"
            progress.write("\nmwperf: interrupted; results so far are kept\n")
            progress.flush()
        finally:
            everything = earlier + records
            ok = sum(1 for r in everything if r["status"] == "ok")
            if status == "running":  # an unexpected exception is on its way up
                status = "failed"
            doc.update({"status": status, "finished": utc_now_iso()})
            doc["points"].update({"ok": ok, "failed": len(everything) - ok, "done": len(everything)})
            rundir.write_run_json(doc)
            with signals_deferred():
                _clean_leftovers(progress, "after the run")

    everything = earlier + records
    if everything:
        from mwperf.report import write_html

        out.write("\n" + render(everything, fmt))
        try:
            out.write(f"\nreport: {write_html(rundir.path, everything, doc)}\n")
        except OSError as exc:
            progress.write(f"mwperf: warning: cannot write report.html: {exc.strerror or exc}\n")
    saved = adaptive_saving(records)
    if saved:
        out.write(f"\n{saved}\n")
    out.write(f"\nresults: {rundir.path}\n")
    out.flush()
    if status == "interrupted":
        return 130
    return 0 if all(r["status"] == "ok" for r in everything) else 1


def adaptive_saving(records: list[dict]) -> str | None:
    """The time the adaptive stop saved against the same points at their full
    (maximum) duration, as one line; None when no point was adaptive."""
    adaptive = [r for r in records if r.get("adaptive") and r.get("elapsed_s") is not None]
    if not adaptive:
        return None
    full = sum(r["duration_s"] for r in adaptive)
    used = sum(min(r["elapsed_s"], r["duration_s"]) for r in adaptive)
    converged = sum(1 for r in adaptive if r["adaptive"]["converged_after_s"] is not None)
    pct = 100.0 * (full - used) / full if full else 0.0
    return (f"adaptive duration: {converged}/{len(adaptive)} points reached their precision; measured "
            f"{used:.1f} s instead of {full:.1f} s at fixed duration (saved {full - used:.1f} s, {pct:.0f} %)")
