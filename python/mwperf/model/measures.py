"""What a side's ``result`` event measured, in the record's units: statistics
in µs, CPU and memory, the clock estimate's use, the samples file, the
adaptive stop's looks. Agent events carry integer nanoseconds; record fields
are named with their unit (``latency_us``, ``elapsed_s``)."""

from __future__ import annotations

from typing import Any

from mwperf.model.provenance import samples_path

__all__ = ["get", "to_int", "stats_us", "cpu_side", "cpu_pct", "cpu_per_msg", "window_s", "threads", "mw_rss",
           "affinity", "clock_record", "samples_file", "samples_error", "elapsed_s", "adaptive", "Event"]

#: An agent's event (its ``result``, its ``ready``) as it said it: JSON.
Event = dict[str, Any]

_NS_FIELDS = ("mean", "std", "min", "max", "p50", "p90", "p99", "p999", "p9999", "p999999")
_INTERVALS = ("p50_ci", "p99_ci", "p999_ci")


def get(side: dict[str, Any] | None, key: str) -> Any:
    return None if side is None else side.get(key)


def to_int(value: Any) -> int | None:
    return None if value is None else int(value)


def stats_us(stats: dict[str, Any] | None, shift_ns: int = 0) -> dict[str, Any] | None:
    """Agent statistics (ns) -> record statistics (µs floats); None stays
    None. ``shift_ns`` is added to every value (not to std): a constant offset
    moves every order statistic by exactly that much."""
    if not isinstance(stats, dict):
        return None
    out: dict[str, Any] = {"count": to_int(stats.get("count"))}
    for key in _NS_FIELDS:
        value = stats.get(key)
        out[key] = None if value is None else (float(value) + (0 if key == "std" else shift_ns)) / 1000.0
    for key in _INTERVALS:
        ci = stats.get(key)
        out[key] = ([(float(ci[0]) + shift_ns) / 1000.0, (float(ci[1]) + shift_ns) / 1000.0]
                    if isinstance(ci, list) and len(ci) == 2 else None)
    out["relative_error"] = stats.get("relative_error")
    out["ci_confidence"] = stats.get("ci_confidence")
    out["ci_batches"] = to_int(stats.get("ci_batches"))
    out["ci_method"], out["ci_null"] = stats.get("ci_method"), stats.get("ci_null") or {}
    return out


def cpu_side(side: dict[str, Any] | None) -> dict[str, Any] | None:
    if side is None or side.get("cpu_user_ns") is None or side.get("cpu_sys_ns") is None:
        return None
    return {"user": side["cpu_user_ns"] / 1e9, "sys": side["cpu_sys_ns"] / 1e9}


def window_s(side: dict[str, Any] | None) -> float | None:
    window = get(side, "cpu_window_ns")
    return None if not isinstance(window, (int, float)) or window <= 0 else window / 1e9


def cpu_pct(side: dict[str, Any] | None) -> float | None:
    """CPU (user + sys) over the side's measured window, % of one core."""
    cpu, window = cpu_side(side), window_s(side)
    return None if cpu is None or window is None else 100.0 * (cpu["user"] + cpu["sys"]) / window


def cpu_per_msg(side: dict[str, Any] | None, delivered: int | None) -> float | None:
    """µs of CPU (user + sys, the side's measured window) per sample delivered:
    the publisher's per sample its subscriber received (its pong, in latency
    mode), a subscriber's per sample it received (all its readers', when its
    process runs several: the CPU is the process's)."""
    cpu = cpu_side(side)
    if cpu is None or not delivered or delivered <= 0:
        return None
    return float((cpu["user"] + cpu["sys"]) * 1e6 / delivered)


def threads(side: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    """The side's CPU by thread name (mwperf's own threads are ``own``)."""
    groups, window = get(side, "threads"), window_s(side)
    if not isinstance(groups, list):
        return None
    out = []
    for g in groups:
        if not isinstance(g, dict) or not isinstance(g.get("cpu_ns"), (int, float)):
            continue
        cpu_s = g["cpu_ns"] / 1e9
        out.append({"name": str(g.get("name", "")), "threads": to_int(g.get("threads")), "cpu_s": cpu_s,
                    "cpu_pct": None if window is None else 100.0 * cpu_s / window, "own": bool(g.get("own"))})
    return out


def mw_rss(side: dict[str, Any] | None) -> int | None:
    """Peak RSS minus RSS right before the middleware was opened (mwperf's own
    buffers are allocated and touched before that)."""
    peak, before = get(side, "maxrss_kb"), get(side, "rss_before_open_kb")
    if peak is None or before is None:
        return None
    return max(0, int(peak) - int(before))


def affinity(result: dict[str, Any] | None, ready: dict[str, Any] | None) -> list[int] | None:
    for source in (result, ready):
        value = get(source, "cpu_affinity")
        if isinstance(value, list):
            return [int(v) for v in value]
    return None


def clock_record(clock: Event | None, mode: str, latency: Event | None, applied_ns: int) -> Event | None:
    """The clock estimate and what was done with it: the offset subtracted
    from the one-way figures (``applied_us``); flagged when two clocks make a
    one-way figure uncertain by more than 10 % of its p50."""
    if clock is None:
        return None
    p50 = (latency or {}).get("p50")
    one_way = mode == "rate" and not clock.get("same_clock")
    flagged = one_way and p50 is not None and clock["uncertainty_us"] > 0.10 * abs(p50)
    return {**clock, "applied_us": applied_ns / 1000.0, "flagged": flagged}


def samples_file(pub: Event | None, sub: Event | None, mode: str, index: int) -> Event | None:
    """The headline latency's samples the agent wrote (--samples-out), if any."""
    side = pub if mode != "rate" else sub
    count = get(side, "samples_written")
    if not isinstance(count, int) or count <= 0:
        return None
    return {"path": samples_path(index), "count": count, "time_ordered": bool(get(side, "samples_time_ordered"))}


def samples_error(pub: Event | None, sub: Event | None) -> str | None:
    """Why an agent could not write the samples file (its ``samples_error``), if one says so."""
    for side in (pub, sub):
        error = get(side, "samples_error")
        if isinstance(error, str) and error:
            return error
    return None


def elapsed_s(pub: dict[str, Any] | None) -> float | None:
    """The publisher's measured phase, which ends early with --samples or --precision."""
    elapsed = get(pub, "elapsed_ns")
    return None if not isinstance(elapsed, (int, float)) or elapsed < 0 else elapsed / 1e9


def _look(pub: dict[str, Any] | None, sub: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    """A look of the adaptive stop (from whichever side decides it): intervals
    in µs (a throughput point's: its rate and loss), the time it would need."""
    look = next((c for c in (get(pub, key), get(sub, key)) if isinstance(c, dict)), None)
    if look is None:
        return None
    needed = look.get("needed_ns")
    return {
        "after_s": look["after_ns"] / 1e9 if isinstance(look.get("after_ns"), int) else None,
        "count": to_int(look.get("count")),
        "batches": to_int(look.get("batches")),
        "look": to_int(look.get("look")),
        **{q: [float(v) / 1000.0 for v in look[q]] if isinstance(look.get(q), list) else None
           for q in ("p50_ci", "p99_ci")},
        "needed_s": needed / 1e9 if isinstance(needed, int) and needed >= 0 else None,
        "why": look.get("why") or {},
        # a throughput point watches its received rate and loss (their intervals)
        **{q: look[q] if isinstance(look.get(q), dict) else None for q in ("rate", "loss")},
    }


def adaptive(precision: float | None, pub: Event | None, sub: Event | None, mode: str) -> Event | None:
    """Adaptive duration: when (if) what the point watches reached the precision asked for."""
    if not precision:
        return None
    after = [v for v in (get(pub, "converged_after_ns"), get(sub, "converged_after_ns"))
             if isinstance(v, (int, float)) and v >= 0]
    reached, last = _look(pub, sub, "convergence"), _look(pub, sub, "last_look")
    return {
        "converged_after_s": min(after) / 1e9 if after else None,
        # the samples and intervals that met the precision when the stop was decided
        # (the statistics of the record cover every sample, including those after)
        "at_convergence": reached,
        # the last look the stop rule made (the converging one, if it converged): a point
        # that ran its full duration shows here how far its intervals were from the precision
        "last_look": last,
        # not reached: how long it would need, extrapolated from its last look; or why that is not known
        "needed_s": None if reached or last is None else last["needed_s"],
        "needed_note": None if reached else "burst mode runs its duration (no stop cuts a burst pattern)"
        if mode == "burst" else "no look: too few samples" if last is None else
        "; ".join(f"{k}: {v}" for k, v in last["why"].items()) or None,
        # the publisher ended before the maximum duration: told to stop (rate
        # mode, on the subscriber's word) or converged itself (latency, throughput)
        "stopped_early": bool(get(pub, "stopped_early")) or (get(pub, "converged_after_ns") or -1) >= 0,
    }
