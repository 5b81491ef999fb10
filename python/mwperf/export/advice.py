"""What makes a run's numbers less comparable, each said with what to do
about it: the report's warnings and the terminal's, after the headline."""

from __future__ import annotations

from mwperf.model.record import Record

__all__ = ["warnings_for"]


def warnings_for(records: list[Record], run: dict | None) -> list[str]:
    """What makes these numbers less comparable, each with what to do about it."""
    run = run or {}
    out: list[str] = []
    placements = {r.cpu.placement for r in records}
    if "unpinned" in placements:
        out.append("Some points ran unpinned: on VMs whose idle vCPUs halt, results are bimodal. "
                   "Pin both sides (--cpu 0,1 or 0,0).")
    if len(placements - {None, "unknown"}) > 1:
        out.append(f"Points ran under different CPU placements ({', '.join(sorted(p for p in placements if p))}): "
                   "compare like with like (the tables are split by placement).")
    for r in records:
        if r.wait == "spin" and r.cpu.placement == "same-core":
            out.append("A spinning receiver shared its core with the sender: the two fight for the CPU. "
                       "Spin only cross-core (--cpu 0,1).")
            break
    if (run.get("agent") or {}).get("build_type") not in (None, "Release"):
        out.append(f"The agent is a {run['agent']['build_type']} build: rebuild it Release "
                   "(cmake -DCMAKE_BUILD_TYPE=Release) before trusting the numbers.")
    governor = run.get("governor")
    if governor and governor != "performance":
        out.append(f"CPU frequency governor is '{governor}': frequency changes add noise. "
                   "cpupower frequency-set -g performance (or record it and compare only like with like).")
    busy_read = (run.get("sysctl") or {}).get("net.core.busy_read")
    if busy_read == 0:
        out.append("net.core.busy_read is 0: latency at low publish rates includes the interrupt wake-up "
                   "(the reference sweep saw large gains with busy_read=50, at the cost of a busy core).")
    if (run.get("git") or {}).get("dirty"):
        out.append("The mwperf tree had uncommitted changes: the git sha does not identify the code that measured.")
    noisy = [r for r in records if r.ok and (p50 := r.stat("p50")) and (r.stat("p99") or 0) > 5 * p50]
    if noisy:
        out.append(f"{len(noisy)} point(s) have p99 above 5 x p50 (high variance): run longer (--duration, "
                   "or --precision for the adaptive stop), pin the CPUs and keep the machine otherwise idle.")
    flagged = [r for r in records if r.clock is not None and r.clock.flagged]
    if flagged:
        out.append(f"{len(flagged)} one-way result(s) measured across two clocks whose offset is known only to more "
                   "than 10 % of the latency: synchronise the hosts (ptp4l/phc2sys, chrony) or use ping-pong "
                   "(latency mode, RTT/2), which needs no common clock.")
    failed = [r for r in records if not r.ok]
    if failed:
        out.append(f"{len(failed)} point(s) failed (see the tables for the reasons); they are not plotted.")
    tools = sorted({r.source.tool for r in records if r.source is not None})
    if tools:
        out.append(f"Some points were imported from {', '.join(tools)}: measured elsewhere, with that tool's "
                   "method; their provenance is not this run's.")
    return out
