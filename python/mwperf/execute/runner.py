"""Run the points of a run or a sweep into a run directory.

Each point (:mod:`mwperf.execute.point`) is merged into a record
(:mod:`mwperf.model.merge`) and appended to results.jsonl as soon as it is
measured (a scenario's step, :mod:`mwperf.execute.scenario`, gives one per
flow); a progress line per point goes to stderr. What else a run makes of
its records (results.csv after every point; the tables and report.html at
the end) is its :class:`Outputs`, which the command gives (:mod:`mwperf.cli`
makes them of :mod:`mwperf.export`'s formats): the runner measures, it picks
no output format.
Exit code: 0 all points ok, 1 some point failed, 130 interrupted (Ctrl-C or
SIGTERM or SIGHUP: the results so far are kept and run.json says so). The keys
made for secured points are removed after the last. What crashed
runs left (namespaces, shared-memory segments, services, keys) is removed before
the first point and, in a ``finally``, after the last
(:mod:`mwperf.execute.cleanup`).
"""

from __future__ import annotations

import secrets
import subprocess
import sys
from dataclasses import dataclass, replace
from typing import Callable, Iterable, Iterator, Sequence, TextIO

from mwperf.execute import keystore, provenance
from mwperf.execute.cleanup import clean_leftovers, notices
from mwperf.execute.floor import measure_run_floor, skipped
from mwperf.execute.pair import Pairs
from mwperf.execute.keeper import ServiceKeeper
from mwperf.execute.point import DEFAULT_TIMEOUTS, Timeouts, check_placement, run_point
from mwperf.execute.progress import Progress
from mwperf.execute.scenario import ScenarioStep
from mwperf.errors import StorageError
from mwperf.execute.ssh import close_shared_connections
from mwperf.interrupts import signals_deferred, sigterm_as_interrupt
from mwperf.model.labels import point_id
from mwperf.model.launches import spread
from mwperf.model.merge import PointOutcome, merge_record, utc_now_iso
from mwperf.model.record import Record
from mwperf.model.schema import record_errors, record_ok
from mwperf.execute.launches import more_launches
from mwperf.plan.launches import default_launches, interleaved
from mwperf.plan.sweep_plan import point_hash
from mwperf.plan.options import PlannedPoint, RunOptions
from mwperf.results.floor import FLOOR_JSON
from mwperf.results.rundir import RunDir

__all__ = ["run", "execute", "Outputs", "clean_far"]


@dataclass(frozen=True)
class Outputs:
    """What a run makes of its records besides results.jsonl, as the command chose:

    * ``after_point(records, rundir)``: after every point, from every record so far (results.csv);
    * ``line(records)``: the tail of a point's progress line (a scenario step's: of its flows' records);
    * ``at_end(everything, these, rundir)``: once the run is over (interrupted too), from every record of
      the directory and those of this invocation (the tables, report.html, what the adaptive stop saved)."""

    after_point: Callable[[list[Record], RunDir], object]
    line: Callable[[list[Record]], str]
    at_end: Callable[[list[Record], list[Record], RunDir], None]
    verbose: bool = False  # --verbose: routine clean-up said too (execute.cleanup.notices)


def run(opts: RunOptions, agent: str, argv: list[str], *, outputs: Outputs, progress: TextIO | None = None,
        timeouts: Timeouts = DEFAULT_TIMEOUTS, machine_lock: str | None = None, floor: bool = False,
        far=None) -> int:
    """Run every point of ``opts``; returns the exit code (0 ok, 1 a point failed, 130 interrupted).
    ``machine_lock``: how the machine was held (execute.lock.Held), kept in run.json; ``floor``:
    measure the floor first (:mod:`mwperf.execute.floor`); ``far``: the far hosts of --hosts
    (:class:`mwperf.hosts.prepare.FarSide`), cleaned before the first point and after the last."""
    doc = provenance.collect(run_id=opts.run_id, argv=argv, options=opts.as_dict(), agent=agent,
                             started=utc_now_iso())
    if machine_lock is not None:
        doc["machine_lock"] = machine_lock
    points = [(opts, point) for point in opts.points()]
    if opts.both_directions and opts.hosts is not None:  # A->B then B->A, as in the wired/wireless study
        back = replace(opts, hosts=opts.hosts.reversed())
        points = [(o, point) for _, point in points for o in (opts, back)]
    jobs = interleaved(points, opts.launches or default_launches(), opts.max_launches)
    if far is None or opts.hosts is None or opts.hosts.facts is None:
        return execute(jobs, RunDir(opts.out), agent, doc, outputs=outputs, progress=progress, timeouts=timeouts,
                       leftovers=opts.agent.leftovers, floor=floor)
    doc["hosts"] = {"pub": opts.hosts.facts[0], "sub": opts.hosts.facts[1]}
    clean_far(far, opts, progress or sys.stderr)
    try:
        return execute(jobs, RunDir(opts.out), agent, doc, outputs=outputs, progress=progress, timeouts=timeouts,
                       leftovers=opts.agent.leftovers, floor=floor)
    finally:
        with signals_deferred():
            clean_far(far, opts, progress or sys.stderr)
            close_shared_connections()


def clean_far(far, opts: RunOptions, progress: TextIO) -> None:
    """What runs leave on the far hosts (:mod:`mwperf.hosts.cleanup`); never fails the run."""
    from mwperf.execute.cleanup import SHM_DIR, shm_patterns

    for left in far.clean(shm_patterns(opts.agent.leftovers, SHM_DIR)):
        line = f"mwperf: warning: clean-up of {left.target} failed: {left.error}" if left.error else left.summary()
        if line:
            progress.write((line if left.error else f"mwperf: {line}") + "\n")
    progress.flush()


def execute(jobs: Sequence[PlannedPoint], rundir: RunDir, agent: str, doc: dict, *, outputs: Outputs,
            earlier: list[Record] | None = None, progress: TextIO | None = None,
            timeouts: Timeouts = DEFAULT_TIMEOUTS, leftovers: tuple[str, ...] = (), floor: bool = False,
            feed: Iterable[PlannedPoint] | None = None,
            on_record: Callable[[PlannedPoint, dict], dict] | None = None) -> int:
    """Run ``jobs`` into ``rundir`` (created if new), appending each record as
    soon as it is measured; ``doc`` is run.json (provenance), kept up to date.
    ``feed``: the points measured when they are decided as the run goes (a
    search, :mod:`mwperf.execute.search`); ``jobs`` are then the points planned
    at most (the floor, the placement checks and the progress plan with them);
    ``on_record`` completes each record before it is checked and written.
    ``earlier`` are the records already there (a resumed sweep): they count in
    the totals and the tables. ``leftovers``: what the adapters may leave
    behind (the agent's description), removed before and after. ``floor``:
    measure the floor before the first point, unless the directory has one
    (run.json says which). ``outputs``: what the run makes of its records
    besides results.jsonl. Returns the exit code."""
    progress = progress or sys.stderr
    earlier = list(earlier or [])
    check_placement(*(job.opts for job in jobs))  # a placement that cannot be made here: before anything runs
    clean_and_say(progress, "before the run", leftovers, agent, outputs.verbose)
    rundir.create(samples=True)  # a full or read-only disk: StorageError, one line
    # records planned: a scenario step gives one per flow
    doc.setdefault("points", {})["total"] = len(earlier) + sum(len(job.jobs) if isinstance(job, ScenarioStep) else 1
                                                               for job in jobs)
    rundir.write_run_json(doc)

    records: list[Record] = []
    status = "running"
    unwritten: OSError | None = None  # run.json's last word could not be written (a disk full at the end)
    # services kept across points, agent pairs across alike points (--reuse-agents; no search feeds them)
    pairs = Pairs(jobs, ServiceKeeper(), reuse=feed is None and any(job.opts.reuse_agents for job in jobs))
    with sigterm_as_interrupt():
        try:
            if floor and jobs and not (rundir.path / FLOOR_JSON).exists():
                doc["floor"] = measure_run_floor(jobs, rundir, agent, progress)
                rundir.write_run_json(doc)
            elif not floor:
                doc.setdefault("floor", skipped("--no-floor"))
            bar = Progress(progress, [job.point.planned_s for job in jobs])
            complete = on_record or _launches_of(earlier, records)
            _measure(jobs if feed is None else feed, rundir, agent, timeouts, bar, records, earlier, outputs,
                     complete, pairs)
            planned = list(jobs)
            while feed is None and (extra := more_launches(planned, earlier + records, _hash)):
                bar.extend([job.point.planned_s for job in extra])  # the adaptive stop's next round
                _measure(extra, rundir, agent, timeouts, bar, records, earlier, outputs, complete, pairs)
                planned += extra
            bar.close()
            status = "complete"
        except KeyboardInterrupt:
            status = "interrupted"
            progress.write("\nmwperf: interrupted; results so far are kept\n")
            progress.flush()
        finally:
            # an unexpected exception on its way up leaves the run "failed", and run.json says why
            pending = sys.exc_info()[1]
            try:
                _finish(doc, rundir, "failed" if status == "running" else status, earlier + records,
                        None if pending is None or isinstance(pending, KeyboardInterrupt) else str(pending))
            except OSError as exc:  # disk full / read-only: the error on its way up says so; clean up anyway
                if pending is None:  # nothing else is on its way up: this run must not end as if it were fine
                    unwritten = exc
                elif str(exc) != str(pending):  # the same fault twice (run.json on a full disk) is said once
                    progress.write(f"mwperf: warning: {exc}\n")
            with signals_deferred():
                pairs.close()
                pairs.keeper.stop()
                keystore.remove_made()  # the keys mwperf made for the run's secured points
                close_shared_connections()
                clean_and_say(progress, "after the run", leftovers, agent, outputs.verbose)

    everything = earlier + records
    if unwritten is not None:
        ok = sum(1 for r in everything if r.ok)
        raise StorageError(rundir.run_json, unwritten,
                           f"run.json still says 'running'; the {len(everything)} record(s) ({ok} ok) are in "
                           f"results.jsonl") from None
    outputs.at_end(everything, records, rundir)
    if status == "interrupted":
        return 130
    return 0 if all(r.ok for r in everything) else 1


def _measure(jobs: Iterable[PlannedPoint], rundir: RunDir, agent: str, timeouts: Timeouts, bar: Progress,
             records: list[Record], earlier: list[Record], outputs: Outputs,
             on_record: Callable[[PlannedPoint, dict], dict] | None = None, pairs: Pairs | None = None) -> None:
    """Each point in turn, its record appended (to ``records`` too) the moment it is merged;
    results.csv from the records in hand (``earlier`` ones and these: what results.jsonl
    holds, without reading it again after every point)."""
    for job in jobs:
        bar.start(job.title if isinstance(job, ScenarioStep) else job.point.label())
        done = []
        for planned, outcome, started, own in _outcomes(job, agent, timeouts, pairs):
            own = {**own, "launch_id": secrets.token_hex(8)}  # this launch's own id (a scenario flow's: its agents')
            record = {**merge_record(planned, outcome, run_id=rundir.path.name, time=started), **own}
            if not record_ok(record):
                # A bug of mwperf's own (a result the schema does not allow): this
                # point fails saying so, and the run goes on.
                problems = "; ".join(record_errors(record))
                failed = PointOutcome(error=f"internal: the result does not fit the results schema "
                                            f"({problems[:400]}); a bug in mwperf, please report it",
                                      link=outcome.link, clock=outcome.clock)
                record = merge_record(planned, failed, run_id=rundir.path.name, time=started)
                record = {**record, **own} if record_ok({**record, **own}) else record  # its flow, if it fits
            if on_record is not None:  # its own part, checked as the record is written
                record = on_record(planned, record)
            with signals_deferred():
                rundir.append(record)
                written = Record.from_json(record)
                outputs.after_point([*earlier, *records, written], rundir)
            records.append(written)
            done.append(written)
        bar.finish(outputs.line(done))


def _outcomes(job: PlannedPoint, agent: str, timeouts: Timeouts,
              pairs: Pairs | None) -> Iterator[tuple[PlannedPoint, PointOutcome, str, dict]]:
    """What a job measures, as (planned point, outcome, start time, fields of its own): a point's one, or a
    scenario step's, one per flow (:mod:`mwperf.execute.scenario`)."""
    if isinstance(job, ScenarioStep):
        yield from job.measure(agent, timeouts)
        return
    started = utc_now_iso()
    outcome = run_point(job.opts, job.point, agent, timeouts) if pairs is None else pairs.run(job, agent, timeouts)
    yield job, outcome, started, {}


def _hash(job: PlannedPoint, repetition: int) -> str | None:
    """A launch the adaptive stop adds to a sweep's point: its hash as the sweep's (``sweep --resume``)."""
    return point_hash(job.opts, job.point, repetition) if job.point_hash is not None else None


def _launches_of(earlier: list[Record], records: list[Record]) -> Callable[[PlannedPoint, dict], dict]:
    """Each launch of a point from its second (each repetition one) carries the spread over its
    launches so far and the headline from them, those of an earlier invocation of a resumed
    sweep included: the point's newest record holds its headline."""

    def complete(job: PlannedPoint, record: dict) -> dict:
        """The record being made (the merged JSON object, before it is written), with its launches."""
        this = Record.from_json(record)
        if job.repetitions < 2 or not job.repetition or not this.ok:
            return record
        key = point_id(this)
        same = [r for r in earlier + records if r.ok and r.repetition is not None and not r.imported
                and point_id(r) == key]
        launches = spread(same + [this], this.precision)
        return {**record, "launches": None if launches is None else launches.to_json()}
    return complete


def _finish(doc: dict, rundir: RunDir, status: str, everything: list[Record], why: str | None = None) -> None:
    """run.json's final word: the status, when, how many points went how, and why a run failed
    (``status_note``: the error that ended it, a full disk's among them)."""
    ok = sum(1 for r in everything if r.ok)
    doc.update({"status": status, "finished": utc_now_iso()})
    if why is not None:
        doc["status_note"] = " ".join(why.split())[:500]
    doc["points"].update({"ok": ok, "failed": len(everything) - ok, "done": len(everything)})
    rundir.write_run_json(doc)


def clean_and_say(progress: TextIO, when: str, leftovers: tuple[str, ...], agent: str,
                     verbose: bool = False) -> None:
    """Remove what crashed runs left; never fails the run."""
    try:
        left = clean_leftovers(leftovers, agent)
    except (OSError, subprocess.SubprocessError) as exc:  # pragma: no cover - /dev/shm unreadable, no ip tool
        progress.write(f"mwperf: warning: clean-up {when} failed: {exc}\n")
        return
    said = notices(left, when, verbose)
    if said:
        progress.write("".join(f"{line}\n" for line in said))
        progress.flush()
