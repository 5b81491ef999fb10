"""A fan-out point's subscribers in the record: one row each
(``per_subscriber``), and their worst, median and spread (``fanout``)."""

from __future__ import annotations

from typing import Any

from mwperf.model.measures import cpu_pct, cpu_side, get, stats_us, to_int

__all__ = ["per_subscriber", "fanout"]


def _spread(values: list[Any]) -> dict[str, Any] | None:
    """worst (highest), median and spread (worst - best) of per-subscriber figures."""
    present = sorted(v for v in values if v is not None)
    if not present:
        return None
    n = len(present)
    median = present[n // 2] if n % 2 else (present[n // 2 - 1] + present[n // 2]) / 2
    return {"worst": present[-1], "median": median, "spread": present[-1] - present[0]}


def per_subscriber(mode: str, subs: list[dict[str, Any] | None], slow: bool, sent: int | None,
                   threads: bool = False) -> list[dict[str, Any]]:
    """One row per subscriber. As threads, the readers share one process: its
    CPU and RSS are in reader 0's row (``cpu_scope`` "process"), the other
    rows have none of their own ("shared"), so that a sum over the rows
    counts the process once."""
    rows = []
    for index, side in enumerate(subs):
        own = not threads or index == 0
        received, lost = to_int(get(side, "received")), to_int(get(side, "lost"))
        loss_rate = None
        if mode == "latency" and sent is not None and received is not None:
            lost = max(0, sent - received)  # a listener of pings: every ping was meant for it
        if received is not None and lost is not None and received + lost:
            loss_rate = lost / (received + lost)
        rows.append({
            "index": index,
            "echoer": index == 0 and mode in ("latency", "throughput"),
            "slow": slow and index == len(subs) - 1,
            "received": received,
            "lost": lost,
            "loss_rate": loss_rate,
            "duplicates": to_int(get(side, "duplicates")),
            "samples_per_s": get(side, "samples_per_s"),
            "latency_us": stats_us(get(side, "latency_ns")),
            "cpu_s": cpu_side(side) if own else None,
            "cpu_pct": cpu_pct(side) if own else None,
            "rss_kb": to_int(get(side, "maxrss_kb")) if own else None,
            "reader": to_int(get(side, "reader")) if threads else None,
            "cpu_scope": ("process" if index == 0 else "shared") if threads else "subscriber",
        })
    return rows


def _subscribers_cpu(subs: list[dict[str, Any] | None]) -> tuple[dict[str, Any] | None, float | None]:
    """CPU (user, sys seconds) and CPU % of one core of every subscriber
    process, each counted once: N processes add up; the results of N reader
    threads of one process (one pid, ``cpu_scope`` "process") are that one
    process. None when a subscriber's figures are missing."""
    present = [side for side in subs if side is not None]
    if not subs or len(present) != len(subs):
        return None, None
    processes: dict[Any, dict[str, Any]] = {}
    for side in present:
        shared = side.get("cpu_scope") == "process" and side.get("pid") is not None
        processes.setdefault(side["pid"] if shared else id(side), side)
    cpus = [cpu for cpu in map(cpu_side, processes.values()) if cpu is not None]
    pcts = [pct for pct in map(cpu_pct, processes.values()) if pct is not None]
    if len(cpus) != len(processes):
        return None, None
    total = {"user": sum(c["user"] for c in cpus), "sys": sum(c["sys"] for c in cpus)}
    return total, None if len(pcts) != len(processes) else sum(pcts)


def fanout(rows: list[dict[str, Any]], subs: list[dict[str, Any] | None]) -> dict[str, Any]:
    cpu_s, cpu_percent = _subscribers_cpu(subs)
    return {
        "loss_rate": _spread([r["loss_rate"] for r in rows]),
        "latency_p50_us": _spread([(r["latency_us"] or {}).get("p50") for r in rows]),
        "latency_p99_us": _spread([(r["latency_us"] or {}).get("p99") for r in rows]),
        # every subscriber process's CPU, each once (as threads: the one process)
        "cpu_s": cpu_s,
        "cpu_pct": cpu_percent,
    }
