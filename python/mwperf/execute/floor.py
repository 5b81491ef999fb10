"""The floor of a run: the agent's ``floor`` command (memcpy bandwidth, Unix
socket, UDP and shared-memory ping-pongs; docs/agent-protocol.md) at every
CPU placement and wait strategy of the run's points, at their sizes, before
the first point; stored as DIR/floor.json (:mod:`mwperf.results.floor`).

Cost: each measurement (one kind at one size) runs for a budget, 100 ms by
default (a tenth of it warm-up); a run of three sizes at one placement
measures 12 in about 1.3 s. Past MAX_TOTAL_S the budget shrinks (to 20 ms at
least), so a sweep of many sizes and placements spends a few seconds.
Points on two hosts (``--hosts``) get no floor: it is this machine's.

What else runs points (a scenario of several flows) hands :func:`measure`
its own ``{(CpuPlacement, wait): sizes}`` (every flow's size); the tables
find a floor for anything that states ``cpu``, ``wait`` and ``size``
(:class:`mwperf.results.floor.FloorIndex`), a flow's section as well as a point.
"""

from __future__ import annotations

import time
from typing import Any, Iterable, Sequence, TextIO

from mwperf.errors import AgentError
from mwperf.execute.agent import query
from mwperf.plan.options import CpuPlacement, PlannedPoint
from mwperf.results.floor import FLOOR_JSON, FLOOR_VERSION, KINDS, write_floor
from mwperf.model.measures import stats_us
from mwperf.model.merge import utc_now_iso
from mwperf.results.rundir import RunDir
from mwperf.table import snapshot

__all__ = ["BUDGET_S", "MAX_TOTAL_S", "MIN_BUDGET_S", "TIMEOUT_S", "groups_of", "budget_for", "floor_argv",
           "measure_one", "measure", "measure_run_floor", "skipped"]

#: The agent's defaults (its ``floor`` rows): each measurement's budget, and how late
#: a ping-pong's answer may be before the peer counts as gone (the floor fails with that reason).
BUDGET_S = snapshot().command("floor")["budget"].default / 1e9
TIMEOUT_S = snapshot().command("floor")["timeout"].default / 1e9
MAX_TOTAL_S = 6.0
MIN_BUDGET_S = 0.02
_KEEP = ("count", "mean", "min", "max", "p50", "p90", "p99")

Group = tuple[CpuPlacement, str]


def groups_of(jobs: Iterable[PlannedPoint]) -> dict[Group, list[int]]:
    """(CPU placement, wait) -> the sizes its points measure, for the points on this machine."""
    groups: dict[Group, set[int]] = {}
    for job in jobs:
        if job.opts.hosts is None:
            groups.setdefault((job.opts.cpu, job.point.get("wait")), set()).add(job.point.size)
    return {group: sorted(sizes) for group, sizes in groups.items()}


def budget_for(measurements: int, budget_s: float = BUDGET_S) -> float:
    """The budget of each measurement: ``budget_s`` unless they would take more than MAX_TOTAL_S together."""
    if measurements * budget_s <= MAX_TOTAL_S:
        return budget_s
    return max(MIN_BUDGET_S, MAX_TOTAL_S / measurements)


def floor_argv(values: dict[str, Any]) -> list[str]:
    """The agent's ``floor`` command with these options (machine values, by the names of its rows)."""
    return snapshot().argv("floor", values)


def _entry(event: dict) -> dict:
    entry = {"kind": event.get("kind"), "method": event.get("method"), "size": event.get("size")}
    if "skipped" in event:
        entry["skipped"] = event["skipped"]
    elif event.get("kind") == "memcpy":
        entry["gbps"] = (event.get("bytes_per_s") or 0) * 8 / 1e9
        entry["batch"] = event.get("batch")
        batch = stats_us(event.get("batch_ns")) or {}
        entry["batch_us"] = {k: batch.get(k) for k in _KEEP}
    else:
        for key in ("latency", "rtt"):
            stats = stats_us(event.get(f"{key}_ns")) or {}
            entry[f"{key}_us"] = {k: stats.get(k) for k in _KEEP}
    return entry


def measure_one(agent: str, cpu: CpuPlacement, wait: str, sizes: list[int], budget_s: float,
                timeout_s: float = TIMEOUT_S, kinds: tuple[str, ...] = KINDS) -> dict:
    """One floor (a placement and wait strategy at ``sizes``, of ``kinds``); its ``error`` says why it failed."""
    started = time.monotonic()
    floor: dict[str, Any] = {"cpu": {"pub": cpu.pub, "sub": cpu.sub, "placement": cpu.placement}, "wait": wait,
             "elapsed_s": None, "error": None, "entries": []}
    unpinned = -1  # the agent's cpus row: -1 is a side left unpinned
    args = floor_argv({"sizes": sizes, "cpus": (unpinned if cpu.pub is None else cpu.pub,
                                                unpinned if cpu.sub is None else cpu.sub),
                       "wait": wait, "budget": int(budget_s * 1e9), "timeout": int(timeout_s * 1e9), "kinds": kinds})
    deadline = len(sizes) * len(kinds) * (budget_s + 2 * timeout_s) + 10
    try:
        events = query(agent, args, timeout=deadline)
        floor["entries"] = [_entry(e) for e in events if e.get("event") == "floor"]
    except AgentError as exc:
        floor["error"] = str(exc)
    floor["elapsed_s"] = round(time.monotonic() - started, 3)
    return floor


def measure(agent: str, groups: dict[Group, list[int]], budget_s: float | None = None,
            timeout_s: float = TIMEOUT_S) -> dict:
    """floor.json's document: one floor per group; each measurement ``budget_s``
    (None: BUDGET_S, shrunk to keep the whole within MAX_TOTAL_S)."""
    started = time.monotonic()
    budget = budget_s or budget_for(sum(len(sizes) for sizes in groups.values()) * len(KINDS))
    floors = [measure_one(agent, cpu, wait, sizes, budget, timeout_s) for (cpu, wait), sizes in groups.items()]
    return {"floor_version": FLOOR_VERSION, "time": utc_now_iso(), "elapsed_s": round(time.monotonic() - started, 3),
            "budget_s": budget, "floors": floors}


def skipped(reason: str) -> dict:
    """run.json's ``floor`` of a run that measured none."""
    return {"status": "skipped", "reason": reason}


def measure_run_floor(jobs: Sequence[PlannedPoint], rundir: RunDir, agent: str, progress: TextIO) -> dict:
    """Measure the run's floor into DIR/floor.json; run.json's ``floor``: what was done and how long it took."""
    groups = groups_of(jobs)
    if not groups:
        return skipped("no point runs on this machine (--hosts): the floor is this machine's")
    measurements = sum(len(s) for s in groups.values()) * len(KINDS)
    progress.write(f"mwperf: measuring the floor ({measurements} measurements, "
                   f"~{measurements * budget_for(measurements):.1f} s; --no-floor skips it)\n")
    progress.flush()
    doc = measure(agent, groups)
    write_floor(rundir, doc)
    failed = [f"{f['cpu']['placement']} {f['wait']}: {f['error']}" for f in doc["floors"] if f["error"]]
    for failure in failed:
        progress.write(f"mwperf: warning: the floor failed ({failure}); the run goes on without it\n")
    status = "measured" if not failed else "failed" if len(failed) == len(doc["floors"]) else "partial"
    return {"status": status, "file": FLOOR_JSON, "elapsed_s": doc["elapsed_s"],
            "budget_s": doc["budget_s"], "errors": failed}
