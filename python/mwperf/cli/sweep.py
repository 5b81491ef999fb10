"""``mwperf sweep PLAN.yaml``: run every point of a plan into one run directory.

The plan is saved as ``DIR/plan.yaml``; each record carries its point key, so
``mwperf sweep --resume DIR`` expands the saved plan again and runs only the
points whose key is not in results.jsonl yet (a point that failed was
measured and recorded: it is not run again).
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, TextIO

from mwperf import provenance
from mwperf.agent import AgentInfo
from mwperf.options import UsageError, default_out
from mwperf.plan import Plan, PlanError, PlannedPoint, expand, load_plan, parse_plan
from mwperf.progress import POINT_OVERHEAD_S, format_eta
from mwperf.record import utc_now_iso
from mwperf.rundir import RESULTS_JSONL, RunDir, read_records

__all__ = ["PLAN_FILE", "check", "describe", "dry_run", "plan_points", "sweep", "resume"]

PLAN_FILE = "plan.yaml"


def _label(p: PlannedPoint) -> str:
    from mwperf.runner import point_label

    opts = p.opts
    extras = [f"cpu {opts.cpu}", f"wait {opts.wait}"]
    if opts.qos.instances:
        extras.append(f"keyed {opts.qos.instances}")
    if opts.qos.async_:
        extras.append("async")
    if opts.qos.receive:
        extras.append(opts.qos.receive)
    if opts.samples:
        extras.append(f"{opts.samples} samples")
    extras.append(("max " if opts.precision or opts.samples else "") + f"{opts.duration_ns / 1e9:g} s")
    if opts.precision:
        extras.append(f"precision {opts.precision:.0%}")
    if p.repetitions > 1:
        extras.append(f"rep {p.repetition + 1}")
    return f"{point_label(p.point)}; {', '.join(extras)}"


def describe(points: list[PlannedPoint]) -> str:
    """The expanded points, one a line, then the time they take at most and
    (last line) ``N points``."""
    width = len(str(len(points)))
    lines = [f"{p.point.index + 1:>{width}}  {_label(p)}" for p in points]
    total = sum(p.opts.planned_s + POINT_OVERHEAD_S for p in points)
    lines.append(f"at most about {format_eta(total)} (warm-up + duration + ~{POINT_OVERHEAD_S:g} s start-up a point)")
    lines.append(f"{len(points)} points")
    return "\n".join(lines) + "\n"


def plan_points(plan: Plan, out: Path, agent: str | None, agent_info: AgentInfo,
                cpu_count: int | None = None) -> list[PlannedPoint]:
    try:
        return expand(plan, out=out, agent=agent, agent_info=agent_info, cpu_count=cpu_count)
    except PlanError as exc:
        raise UsageError(str(exc)) from None


def _load(path: str) -> Plan:
    try:
        return load_plan(path)
    except PlanError as exc:
        raise UsageError(str(exc)) from None


def check(plan_path: str | None, resume_dir: str | None) -> None:
    """UsageError for a plan that does not parse, or a directory that holds no sweep."""
    if plan_path is not None:
        _load(plan_path)
    if resume_dir is not None and not (Path(resume_dir) / PLAN_FILE).is_file():
        raise UsageError(f"--resume {resume_dir}: no {PLAN_FILE} there (not a sweep's run directory)")


def dry_run(plan_path: str, agent: str | None, agent_info: AgentInfo, out: TextIO) -> int:
    plan = _load(plan_path)
    points = plan_points(plan, default_out(), agent, agent_info)
    out.write(describe(points))
    return 0


def _jobs(points: list[PlannedPoint]):
    from mwperf.runner import Job

    return [Job(p.opts, p.point, p.repetition, p.key) for p in points]


def sweep(plan_path: str, out_dir: str | None, agent: str, agent_info: AgentInfo,
          argv: list[str], fmt: str = "text") -> int:
    from mwperf.runner import execute

    plan = _load(plan_path)
    out = Path(out_dir) if out_dir else default_out()
    if (out / RESULTS_JSONL).exists():
        raise UsageError(f"--out {out}: already holds {RESULTS_JSONL} (mwperf sweep --resume {out} finishes it)")
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    points = plan_points(plan, out, agent, agent_info)
    try:
        out.mkdir(parents=True, exist_ok=True)
        (out / PLAN_FILE).write_text(plan.text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--out {out}: cannot write there: {exc.strerror or exc}") from None
    doc = provenance.collect(run_id=out.name, argv=argv, options=_plan_doc(plan, len(points)), agent=agent,
                             started=utc_now_iso())
    return execute(_jobs(points), RunDir(out), agent, doc, fmt=fmt)


def resume(run_dir: str, agent: str, agent_info: AgentInfo, argv: list[str],
           fmt: str = "text") -> int:
    from mwperf.runner import execute

    path = Path(run_dir)
    plan_file = path / PLAN_FILE
    if not plan_file.is_file():
        raise UsageError(f"--resume {run_dir}: no {PLAN_FILE} there (not a sweep's run directory)")
    try:
        plan = parse_plan(plan_file.read_text(encoding="utf-8"), str(plan_file))
    except (PlanError, OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"--resume {run_dir}: {exc}") from None
    points = plan_points(plan, path, agent, agent_info)
    earlier = read_records(path) if (path / RESULTS_JSONL).exists() else []
    done = {r.get("point_key") for r in earlier}
    todo = [p for p in points if p.key not in done]
    rundir = RunDir(path)
    doc = rundir.read_run_json() or provenance.collect(
        run_id=path.name, argv=argv, options=_plan_doc(plan, len(points)), agent=agent, started=utc_now_iso())
    doc.setdefault("resumed", []).append({"time": utc_now_iso(), "argv": argv, "points": len(todo)})
    if not todo:
        print(f"mwperf: {run_dir}: all {len(points)} points are there; nothing to resume")
    return execute(_jobs(todo), rundir, agent, doc, earlier=earlier, fmt=fmt)


def _plan_doc(plan: Plan, count: int) -> dict:
    return {"plan": plan.source, "description": plan.description, "points": count,
            "repetitions": plan.repetitions,
            "options": {k: list(v) for k, v in plan.options.items()},
            "exclude": [{k: sorted(v, key=str) if isinstance(v, set) else v for k, v in r.items()} for r in plan.exclude]}
