"""Merge the publisher's and subscriber's ``result`` events into one record.

Where each figure comes from, per mode:

* latency: sent = pub.sent (pings), received = pub.pongs,
  lost = sent - received, samples/s = pub.pongs / pub.elapsed,
  latency = pub.latency_ns (RTT/2), rtt = pub.rtt_ns;
* throughput: sent = pub.sent, received = sub.received, lost = sub.lost,
  samples/s = sub.samples_per_s, latency = pub.latency_ns (RTT/2 of the
  interleaved pings), rtt = pub.rtt_ns;
* rate: as throughput, but latency = sub.latency_ns (one-way, from the
  intended send time), rtt = null, loop_rate = pub.sent / pub.scheduled
  (the samples due by the end of the measured phase; a publisher that fell
  behind stops at the deadline and what it did not send lowers it).

Duplicates and out-of-order counts always come from the subscriber. A side
that is missing (failed point) leaves its figures null. A point whose samples
were all lost (nothing received; no pong in latency mode) is failed.

Transport and reliability are what the agents report as in force, else what
was requested, else the adapter's default. ``qos`` holds the effective
history, durability, instances, async and receive from the publisher's
``adapter_config`` where it has them, else what was requested; all null for a
middleware without QoS (raw sockets). ``mw_rss_kb`` is the memory the
middleware itself added: peak RSS - RSS right before it was opened (mwperf's
own buffers are allocated before that, and stated as ``own_kb``).

Percentiles come from the agent's log-linear histogram over every sample
(``relative_error`` 0.1 %); one that its sample count cannot support (p99
under 100 samples, p99.9999 under 10^6) is null, never the maximum in
disguise. ``p50_ci``/``p99_ci``/``p999_ci`` (``ci_method``, README's
Statistics) keep ``ci_confidence`` for correlated samples, as the agent's
seeded simulation shows, lie in [min, max], and are null where the data
cannot support one (why: ``ci_null``); one launch's, they say nothing of the
spread between launches. Pings without a pong within ``ping_timeout_s`` are
lost (``ping_lost``, ``late_pongs``): round trips are censored there.

Between two clocks (``clock``), the one-way figures have the estimated offset
subtracted (by the subscriber, per sample) and carry the estimate's
uncertainty (``latency_us.uncertainty_us``); ``latency_raw_us`` keeps them as
measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from mwperf.description import AdapterInfo
from mwperf.plan.options import PlannedPoint, TestPoint
from mwperf.plan.qos import QosOptions, receive_for
from mwperf.results.rundir import samples_path

__all__ = ["SCHEMA_VERSION", "STAT_FIELDS", "QOS_FIELDS", "PointOutcome", "stats_us", "merge_record", "utc_now_iso",
           "total_loss"]

SCHEMA_VERSION = 1
STAT_FIELDS = ("count", "mean", "std", "min", "max", "p50", "p90", "p99", "p9999", "p999999", "exact")
_INTERVALS = ("p50_ci", "p99_ci", "p999_ci")
QOS_FIELDS = ("history", "durability", "instances", "async", "receive", "congestion")
_NS_FIELDS = ("mean", "std", "min", "max", "p50", "p90", "p99", "p999", "p9999", "p999999")


@dataclass
class PointOutcome:
    """What one point's run produced: each side's ``result`` and ``ready``
    events (None where the side never said it), the reason it failed, and
    where it ran (``link``, ``clock``: None on one host)."""

    pub: dict | None = None
    sub: dict | None = None
    pub_ready: dict | None = None
    sub_ready: dict | None = None
    error: str | None = None
    link: dict | None = None
    clock: dict | None = None  # two hosts: the estimated clock offset (mwperf.execute.clocks)
    subs: list[dict | None] | None = None  # 1:N: every subscriber's result (sub is subs[0], the echoer)


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def stats_us(stats: dict | None, shift_ns: int = 0) -> dict | None:
    """Agent statistics (ns) -> record statistics (µs floats); None stays
    None. ``shift_ns`` is added to every value (not to std): a constant offset
    moves every order statistic by exactly that much."""
    if not isinstance(stats, dict):
        return None
    out: dict[str, Any] = {"count": _int(stats.get("count"))}
    for key in _NS_FIELDS:
        value = stats.get(key)
        out[key] = None if value is None else (float(value) + (0 if key == "std" else shift_ns)) / 1000.0
    # Percentiles from a histogram over every sample: within relative_error of
    # exact, never exact themselves.
    out["exact"] = False if "relative_error" in stats else (None if stats.get("exact") is None else bool(stats["exact"]))
    out["kept"] = out["count"]
    for key in _INTERVALS:
        ci = stats.get(key)
        out[key] = ([(float(ci[0]) + shift_ns) / 1000.0, (float(ci[1]) + shift_ns) / 1000.0]
                    if isinstance(ci, list) and len(ci) == 2 else None)
    if "relative_error" in stats:
        out["relative_error"] = stats.get("relative_error")
        out["ci_confidence"] = stats.get("ci_confidence")
        out["ci_batches"] = _int(stats.get("ci_batches"))
    if "ci_method" in stats:
        out["ci_method"], out["ci_null"] = stats.get("ci_method"), stats.get("ci_null") or {}
    return out


def _int(value) -> int | None:
    return None if value is None else int(value)


def _get(side: dict | None, key: str):
    return None if side is None else side.get(key)


def _sum(*values):
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _cpu_side(side: dict | None) -> dict | None:
    if side is None or side.get("cpu_user_ns") is None or side.get("cpu_sys_ns") is None:
        return None
    return {"user": side["cpu_user_ns"] / 1e9, "sys": side["cpu_sys_ns"] / 1e9}


def _affinity(result: dict | None, ready: dict | None) -> list[int] | None:
    for source in (result, ready):
        value = _get(source, "cpu_affinity")
        if isinstance(value, list):
            return [int(v) for v in value]
    return None


def _config(side: dict | None) -> dict | None:
    config = _get(side, "adapter_config")
    return config if isinstance(config, dict) else None


def _versions(pub: dict | None, sub: dict | None) -> dict | None:
    """Every middleware library a side ran on, with its version (the agent's ``versions``)."""
    for side in (pub, sub):
        versions = _get(side, "versions")
        if isinstance(versions, dict):
            return {str(k): str(v) for k, v in versions.items()}
    return None


def _data_path(pub: dict | None, sub: dict | None) -> dict | None:
    """The data path each side's middleware reports it used (shared memory, loan, copy),
    read after the measured phase; null where the middleware cannot tell."""
    paths = {role: _get(side, "data_path") for role, side in (("pub", pub), ("sub", sub))}
    paths = {role: path if isinstance(path, dict) else None for role, path in paths.items()}
    return paths if any(paths.values()) else None


def _mw_rss(side: dict | None) -> int | None:
    """Peak RSS minus RSS right before the middleware was opened (mwperf's own
    buffers are allocated and touched before that)."""
    peak, before = _get(side, "maxrss_kb"), _get(side, "rss_before_open_kb")
    if peak is None or before is None:
        return None
    return max(0, int(peak) - int(before))


def _window_s(side: dict | None) -> float | None:
    window = _get(side, "cpu_window_ns")
    return None if not isinstance(window, (int, float)) or window <= 0 else window / 1e9


def _effective_qos(point: TestPoint, qos: QosOptions, adapter: AdapterInfo | None,
                   config: dict | None, wait: str = "block") -> dict:
    has_qos = adapter.has_qos if adapter else bool(config)
    requested = {
        "history": point.history,
        "durability": point.durability,
        "instances": qos.instances if has_qos else None,
        "async": qos.async_ if has_qos else None,
        # what the agents would have used: the request, else the adapter's default
        "receive": receive_for(qos, adapter, wait) or (adapter.receive if adapter is not None and adapter.receives
                                                       else None),
        "congestion": qos.congestion,
    }
    out = {}
    config = config or {}
    for key in QOS_FIELDS:
        value = config.get(key)
        if key == "congestion" and value is None:
            value = config.get("congestion_control")
        if key == "async" and value is None and isinstance(config.get("publish_mode"), str):
            value = config["publish_mode"] == "asynchronous"
        if value is None or value == "":
            value = requested[key]
        if key == "instances" and value is not None:
            value = int(value)
        elif key == "async" and value is not None:
            value = bool(value)
        elif value is not None:
            value = str(value)
        out[key] = value
    return out


def _cpu_pct(side: dict | None) -> float | None:
    """CPU (user + sys) over the side's measured window, % of one core."""
    cpu, window = _cpu_side(side), _window_s(side)
    return None if cpu is None or window is None else 100.0 * (cpu["user"] + cpu["sys"]) / window


def _threads(side: dict | None) -> list[dict] | None:
    """The side's CPU by thread name (mwperf's own threads are ``own``)."""
    groups, window = _get(side, "threads"), _window_s(side)
    if not isinstance(groups, list):
        return None
    out = []
    for g in groups:
        if not isinstance(g, dict) or not isinstance(g.get("cpu_ns"), (int, float)):
            continue
        cpu_s = g["cpu_ns"] / 1e9
        out.append({"name": str(g.get("name", "")), "threads": _int(g.get("threads")), "cpu_s": cpu_s,
                    "cpu_pct": None if window is None else 100.0 * cpu_s / window, "own": bool(g.get("own"))})
    return out


def _spread(values: list[float]) -> dict | None:
    """worst (highest), median and spread (worst - best) of per-subscriber figures."""
    present = sorted(v for v in values if v is not None)
    if not present:
        return None
    n = len(present)
    median = present[n // 2] if n % 2 else (present[n // 2 - 1] + present[n // 2]) / 2
    return {"worst": present[-1], "median": median, "spread": present[-1] - present[0]}


def _per_subscriber(mode: str, subs: list[dict | None], slow: bool, sent: int | None,
                    threads: bool = False) -> list[dict]:
    """One row per subscriber. As threads, the readers share one process: its
    CPU and RSS are in reader 0's row (``cpu_scope`` "process"), the other
    rows have none of their own ("shared"), so that a sum over the rows
    counts the process once."""
    rows = []
    for index, side in enumerate(subs):
        own = not threads or index == 0
        received, lost = _int(_get(side, "received")), _int(_get(side, "lost"))
        if mode == "latency" and sent is not None and received is not None:
            lost = max(0, sent - received)  # a listener of pings: every ping was meant for it
        total = None if received is None or lost is None else received + lost
        rows.append({
            "index": index,
            "echoer": index == 0 and mode in ("latency", "throughput"),
            "slow": slow and index == len(subs) - 1,
            "received": received,
            "lost": lost,
            "loss_rate": None if not total else lost / total,
            "duplicates": _int(_get(side, "duplicates")),
            "samples_per_s": _get(side, "samples_per_s"),
            "latency_us": stats_us(_get(side, "latency_ns")),
            "cpu_s": _cpu_side(side) if own else None,
            "cpu_pct": _cpu_pct(side) if own else None,
            "rss_kb": _int(_get(side, "maxrss_kb")) if own else None,
            "reader": _int(_get(side, "reader")) if threads else None,
            "cpu_scope": ("process" if index == 0 else "shared") if threads else "subscriber",
        })
    return rows


def _subscribers_cpu(subs: list[dict | None]) -> tuple[dict | None, float | None]:
    """CPU (user, sys seconds) and CPU % of one core of every subscriber
    process, each counted once: N processes add up; the results of N reader
    threads of one process (one pid, ``cpu_scope`` "process") are that one
    process. None when a subscriber's figures are missing."""
    if not subs or any(side is None for side in subs):
        return None, None
    processes: dict = {}
    for side in subs:
        shared = side.get("cpu_scope") == "process" and side.get("pid") is not None
        processes.setdefault(side["pid"] if shared else id(side), side)
    cpus = [_cpu_side(side) for side in processes.values()]
    pcts = [_cpu_pct(side) for side in processes.values()]
    if any(cpu is None for cpu in cpus):
        return None, None
    total = {"user": sum(c["user"] for c in cpus), "sys": sum(c["sys"] for c in cpus)}
    return total, None if any(p is None for p in pcts) else sum(pcts)


def _fanout(rows: list[dict], subs: list[dict | None]) -> dict:
    cpu_s, cpu_pct = _subscribers_cpu(subs)
    return {
        "loss_rate": _spread([r["loss_rate"] for r in rows]),
        "latency_p50_us": _spread([(r["latency_us"] or {}).get("p50") for r in rows]),
        "latency_p99_us": _spread([(r["latency_us"] or {}).get("p99") for r in rows]),
        # every subscriber process's CPU, each once (as threads: the one process)
        "cpu_s": cpu_s,
        "cpu_pct": cpu_pct,
    }


def total_loss(mode: str, sent: int | None, received: int | None) -> str | None:
    """The reason a point that delivered nothing is failed; None otherwise."""
    if sent is None or received is None or received > 0:
        return None
    if sent == 0:
        return "no sample sent"
    if mode == "latency":
        return f"no pong received (lost 100% of {sent} pings)"
    return "no sample received (lost 100%)"


def _delivery(mode: str, pub: dict | None, sub: dict | None) -> tuple:
    """(sent, received, lost, samples/s, latency, rtt): in latency mode the
    publisher counts the pongs; otherwise the subscriber counts what arrived,
    and the headline latency is the pings' (throughput) or one-way (rate)."""
    sent = _int(_get(pub, "sent"))
    if mode == "latency":
        received = _int(_get(pub, "pongs"))
        lost = None if sent is None or received is None else sent - received
        pongs, elapsed = _get(pub, "pongs"), _get(pub, "elapsed_ns")
        samples_per_s = float(pongs) / (elapsed / 1e9) if pongs is not None and elapsed else None
        return sent, received, lost, samples_per_s, stats_us(_get(pub, "latency_ns")), stats_us(_get(pub, "rtt_ns"))
    sps = _get(sub, "samples_per_s")
    counts = (sent, _int(_get(sub, "received")), _int(_get(sub, "lost")), None if sps is None else float(sps))
    if mode == "throughput":
        return *counts, stats_us(_get(pub, "latency_ns")), stats_us(_get(pub, "rtt_ns"))
    return *counts, stats_us(_get(sub, "latency_ns")), None


def _failure(outcome: PointOutcome, mode: str, sent: int | None, received: int | None) -> str | None:
    """Why the point failed: its error, a missing result, or nothing delivered; None when ok."""
    if outcome.error is not None:
        return outcome.error
    if outcome.pub is None:
        return "publisher result missing"
    if outcome.sub is None:
        return "subscriber result missing"
    return total_loss(mode, sent, received)


def merge_record(planned: PlannedPoint, outcome: PointOutcome, *, run_id: str, time: str) -> dict:
    """One schema-v1 record; status is "failed" when the outcome has an
    error, a side's result is missing, or every sample was lost."""
    opts, point = planned.opts, planned.point
    pub, sub, pub_ready, clock = outcome.pub, outcome.sub, outcome.pub_ready, outcome.clock
    adapter = opts.adapters.get(point.mw)
    mode = point.mode

    sent, received, lost, samples_per_s, latency, rtt = _delivery(mode, pub, sub)
    pings = mode in ("latency", "throughput")
    # One-way figures across two clocks: the subscriber subtracted the
    # estimated offset; the raw ones are the same shifted back.
    applied_ns = int(_get(sub, "clock_offset_ns") or 0) if mode == "rate" else 0
    latency_raw = stats_us(_get(sub, "latency_ns"), applied_ns) if applied_ns else None
    if latency is not None and clock is not None and not clock.get("same_clock") and mode == "rate":
        latency["uncertainty_us"] = clock.get("uncertainty_us")

    if lost is None or sent is None:
        loss_rate = None
    else:
        loss_rate = lost / sent if sent else 0.0
    mbps = None if samples_per_s is None else samples_per_s * point.size * 8 / 1e6

    loop_rate = None
    scheduled = _int(_get(pub, "scheduled")) if mode == "rate" else None
    if mode == "rate" and scheduled and sent is not None:
        loop_rate = sent / scheduled

    discovery_ns = _get(pub, "discovery_ns")
    if discovery_ns is None:
        discovery_ns = _get(pub_ready, "discovery_ns")

    version = _get(pub, "adapter_version") or _get(sub, "adapter_version") or (adapter.version if adapter else None)

    error = _failure(outcome, mode, sent, received)
    per_sub, subs = None, []
    threads = point.subscribers > 1 and point.subscribers_as == "threads"
    if point.subscribers > 1:
        subs = outcome.subs if outcome.subs is not None else [sub] + [None] * (point.subscribers - 1)
        per_sub = _per_subscriber(mode, subs, bool(opts.slow_ns), sent, threads)
        if error is None and any(s is None for s in subs):
            error = f"subscriber result missing ({sum(s is None for s in subs)} of {len(subs)})"

    pub_config, sub_config = _config(pub), _config(sub)
    transport = (_get(pub, "transport") or _get(sub, "transport") or point.transport
                 or (adapter.transport if adapter else None))
    reliability = (_get(pub, "reliability") or _get(sub, "reliability") or point.reliability
                   or (adapter.reliability if adapter else None))

    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "point": point.index,
        "time": time,
        "mw": point.mw,
        "mode": mode,
        "transport": transport,
        "reliability": reliability,
        "qos": _effective_qos(point, opts.qos, adapter, pub_config or sub_config, opts.wait),
        "size": point.size,
        "rate_hz": float(point.rate_hz) if mode == "rate" and point.rate_hz is not None else None,
        "duration_s": opts.duration_ns / 1e9,
        "warmup_s": opts.warmup_ns / 1e9,
        "cpu": {
            "pub": opts.cpu.pub,
            "sub": opts.cpu.sub,
            "placement": opts.cpu.placement,
            "pub_affinity": _affinity(pub, pub_ready),
            "sub_affinity": _affinity(sub, outcome.sub_ready),
        },
        "wait": opts.wait,
        "sent": sent,
        "received": received,
        "lost": lost,
        "loss_rate": loss_rate,
        "duplicates": _int(_get(sub, "duplicates")),
        "out_of_order": _int(_get(sub, "out_of_order")),
        "foreign": _sum(_get(pub, "foreign"), _get(sub, "foreign")),
        "samples_per_s": samples_per_s,
        "mbps": mbps,
        "loop_rate": loop_rate,
        "latency_us": latency,
        "rtt_us": rtt,
        "send_lag_us": stats_us(_get(pub, "send_lag_ns")) if mode == "rate" else None,
        "scheduled": scheduled,
        "unsent": _int(_get(pub, "unsent")) if mode == "rate" else None,
        "send_timeouts": _int(_get(pub, "send_timeouts")),
        # pings without a pong within the timeout: lost, their round trip censored (not measured)
        **{k: _int(_get(pub, k)) if pings else None for k in ("ping_lost", "late_pongs")},
        "ping_timeout_s": _get(pub, "ping_timeout_ns") / 1e9 if pings and _get(pub, "ping_timeout_ns") else None,
        "rejected": _int(_get(sub, "rejected")),
        "demand": point.demand if mode == "burst" else None,
        "burst_gap_s": opts.burst_gap_ns / 1e9 if mode == "burst" else None,
        "bursts": _int(_get(pub, "bursts")) if mode == "burst" else None,
        "burst_first_us": stats_us(_get(sub, "burst_first_ns")) if mode == "burst" else None,
        "burst_last_us": stats_us(_get(sub, "burst_last_ns")) if mode == "burst" else None,
        "subscribers": point.subscribers,
        "subscribers_as": point.subscribers_as,
        "slow_subscriber_ms": opts.slow_ns / 1e6 if opts.slow_ns else None,
        "per_subscriber": per_sub,
        "fanout": None if per_sub is None else _fanout(per_sub, subs),
        "latency_raw_us": latency_raw,
        "cpu_s": {"pub": _cpu_side(pub), "sub": _cpu_side(sub)},
        "cpu_window_s": {"pub": _window_s(pub), "sub": _window_s(sub)},
        "cpu_pct": {"pub": _cpu_pct(pub), "sub": _cpu_pct(sub)},
        "threads": {"pub": _threads(pub), "sub": _threads(sub)},
        "rss_kb": {"pub": _int(_get(pub, "maxrss_kb")), "sub": _int(_get(sub, "maxrss_kb"))},
        "mw_rss_kb": {"pub": _mw_rss(pub), "sub": _mw_rss(sub)},
        "own_kb": {"pub": _int(_get(pub, "own_kb")), "sub": _int(_get(sub, "own_kb"))},
        "discovery_ms": None if discovery_ns is None else discovery_ns / 1e6,
        "adapter": {"name": point.mw, "version": version, "config": pub_config, "sub_config": sub_config,
                    "versions": _versions(pub, sub), "data_path": _data_path(pub, sub)},
        "link": outcome.link,
        "clock": _clock(clock, mode, latency, applied_ns, _get(pub, "clock") or _get(sub, "clock")),
        "samples_file": _samples_file(pub, sub, point),
        "repetition": planned.repetition,
        "point_key": planned.key,
        "samples": opts.samples or None,
        "elapsed_s": _elapsed_s(pub),
        "adaptive": _adaptive(opts.precision, opts.confidence, pub, sub, mode),
        "status": "ok" if error is None else "failed",
        "error": error,
    }


def _clock(clock: dict | None, mode: str, latency: dict | None, applied_ns: int, kind: str | None) -> dict | None:
    """The clock estimate and what was done with it: the offset subtracted
    from the one-way figures (``applied_us``), the stamp clock; flagged when
    two clocks make a one-way figure uncertain by more than 10 % of its p50."""
    if clock is None:
        return None
    p50 = (latency or {}).get("p50")
    one_way = mode == "rate" and not clock.get("same_clock")
    flagged = one_way and p50 is not None and clock["uncertainty_us"] > 0.10 * abs(p50)
    return {**clock, "applied_us": applied_ns / 1000.0, "stamp_clock": kind or "monotonic", "flagged": flagged}


def _samples_file(pub: dict | None, sub: dict | None, point: TestPoint) -> dict | None:
    """The headline latency's samples the agent wrote (--samples-out), if any."""
    side = pub if point.mode != "rate" else sub
    count = _get(side, "samples_written")
    if not isinstance(count, int) or count <= 0:
        return None
    return {"path": samples_path(point.index), "count": count,
            "time_ordered": bool(_get(side, "samples_time_ordered"))}


def _elapsed_s(pub: dict | None) -> float | None:
    """The publisher's measured phase, which ends early with --samples or --precision."""
    elapsed = _get(pub, "elapsed_ns")
    return None if not isinstance(elapsed, (int, float)) or elapsed < 0 else elapsed / 1e9


def _look(pub: dict | None, sub: dict | None, key: str) -> dict | None:
    """A look of the adaptive stop (from whichever side decides it): intervals
    in µs (a throughput point's: its rate and loss), the time it would need."""
    look = next((c for c in (_get(pub, key), _get(sub, key)) if isinstance(c, dict)), None)
    if look is None:
        return None
    needed = look.get("needed_ns")
    out = {
        "after_s": look["after_ns"] / 1e9 if isinstance(look.get("after_ns"), int) else None,
        "kept": _int(look.get("count")),
        "batches": _int(look.get("batches")),
        "look": _int(look.get("look")),
        **{q: [float(v) / 1000.0 for v in look[q]] if isinstance(look.get(q), list) else None
           for q in ("p50_ci", "p99_ci")},
        "needed_s": needed / 1e9 if isinstance(needed, int) and needed >= 0 else None,
        "why": look.get("why") or {},
    }
    out.update({q: look[q] for q in ("rate", "loss") if isinstance(look.get(q), dict)})
    return out


def _adaptive(precision: float, confidence: str, pub: dict | None, sub: dict | None, mode: str) -> dict | None:
    """Adaptive duration: the precision asked for, and when (if) what the point watches reached it."""
    if not precision:
        return None
    after = [v for v in (_get(pub, "converged_after_ns"), _get(sub, "converged_after_ns"))
             if isinstance(v, (int, float)) and v >= 0]
    reached, last = _look(pub, sub, "convergence"), _look(pub, sub, "last_look")
    return {
        "precision": precision,
        "confidence": float(confidence),
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
        "stopped_early": bool(_get(pub, "stopped_early")) or (_get(pub, "converged_after_ns") or -1) >= 0,
    }
