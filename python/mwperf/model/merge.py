"""Merge the publisher's and subscriber's ``result`` events into one record
(schema version 2, ``results/schema``).

Every option of the agent's table that has a record field is in the record
under that name, in that field's unit (``duration_s``, ``qos.batch``):
null where it does not apply to the point's mode or its middleware lacks the
capability. A QoS option (and the transport and reliability) is what the
agents report as in force (their result's field of that name, else the
adapter's effective configuration's, ``adapter_config``), else what was
asked, else the adapter's default.

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
``mw_rss_kb`` is the memory the middleware itself added: peak RSS - RSS right
before it was opened (mwperf's own buffers are allocated before that, and
stated as ``own_kb``).

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
from typing import Any, Sequence

from mwperf.description import AdapterInfo
from mwperf.plan.options import PlannedPoint, RunOptions, TestPoint
from mwperf.model import measures as m
from mwperf.model.fairness import zero_copy
from mwperf.model.fanout import fanout, per_subscriber
from mwperf.table import OptionTable, Row

__all__ = ["SCHEMA_VERSION", "PointOutcome", "merge_record", "utc_now_iso", "total_loss", "option_fields"]

SCHEMA_VERSION = 2


@dataclass
class PointOutcome:
    """What one point's run produced: each side's ``result`` and ``ready``
    events (None where the side never said it), the reason it failed, and
    where it ran (``link``, ``clock``: None on one host)."""

    pub: dict[str, Any] | None = None
    sub: dict[str, Any] | None = None
    pub_ready: dict[str, Any] | None = None
    sub_ready: dict[str, Any] | None = None
    error: str | None = None
    link: dict[str, Any] | None = None
    clock: dict[str, Any] | None = None  # two hosts: the estimated clock offset (mwperf.execute.clocks)
    subs: Sequence[dict[str, Any] | None] | None = None  # 1:N: every subscriber's result (sub is subs[0], the echoer)
    phases: dict[str, Any] | None = None  # where the point's time went (mwperf.execute.phases), seconds per phase
    reuse: dict[str, Any] | None = None  # an agent pair's point (mwperf.execute.pair): pair, point, opened_for_bytes
    service: dict[str, Any] | None = None  # the kept service instance that served it (ServiceKeeper.describe)
    security: dict[str, Any] | None = None  # a secured point's keys and documents (mwperf.execute.keystore.section)


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _in_force(row: Row, point: TestPoint, adapter: AdapterInfo | None, sides: tuple[dict[str, Any] | None, ...]) -> Any:
    """A QoS option's value as the agents report it in force, else as asked, else the adapter's default."""
    if row.capability is not None and adapter is not None and not adapter.honours(row.capability):
        return None
    for side in sides:
        for where in (side, m.get(side, "adapter_config")):
            value = where.get(row.key) if isinstance(where, dict) else None
            if value not in (None, ""):
                return int(value) if row.kind in ("count", "bytes") else \
                    bool(value) if row.kind == "flag" else str(value)
    asked = point.get(row.name)
    if asked is None and adapter is not None and row.capability is not None:
        asked = adapter.defaults.get(row.capability)
    return asked


def option_fields(table: OptionTable, point: TestPoint, adapter: AdapterInfo | None,
                  sides: tuple[dict[str, Any] | None, ...] = ()) -> dict[str, Any]:
    """Every option's record field: top-level ones, and ``qos`` as an object."""
    out: dict[str, Any] = {}
    for row in table.record_rows:
        value = _in_force(row, point, adapter, sides) if row.group == "qos" else \
            (point.mw if row.name == "mw" else point.mode if row.name == "mode" else point.get(row.name))
        parent, _, name = row.field.rpartition(".")
        target = out.setdefault(parent, {}) if parent else out
        target[name] = row.record_value(value)
    return out


def total_loss(mode: str, sent: int | None, received: int | None) -> str | None:
    """The reason a point that delivered nothing is failed; None otherwise."""
    if sent is None or received is None or received > 0:
        return None
    if sent == 0:
        return "no sample sent"
    if mode == "latency":
        return f"no pong received (lost 100% of {sent} pings)"
    return "no sample received (lost 100%)"


def _delivery(mode: str, pub: dict[str, Any] | None, sub: dict[str, Any] | None) -> tuple[Any, ...]:
    """(sent, received, lost, samples/s, latency, rtt): in latency mode the
    publisher counts the pongs; otherwise the subscriber counts what arrived,
    and the headline latency is the pings' (throughput) or one-way (rate)."""
    sent = m.to_int(m.get(pub, "sent"))
    if mode == "latency":
        received = m.to_int(m.get(pub, "pongs"))
        lost = None if sent is None or received is None else sent - received
        pongs, elapsed = m.get(pub, "pongs"), m.get(pub, "elapsed_ns")
        samples_per_s = float(pongs) / (elapsed / 1e9) if pongs is not None and elapsed else None
        return sent, received, lost, samples_per_s, m.stats_us(m.get(pub, "latency_ns")), \
            m.stats_us(m.get(pub, "rtt_ns"))
    sps = m.get(sub, "samples_per_s")
    counts = (sent, m.to_int(m.get(sub, "received")), m.to_int(m.get(sub, "lost")), None if sps is None else float(sps))
    if mode == "throughput":
        return *counts, m.stats_us(m.get(pub, "latency_ns")), m.stats_us(m.get(pub, "rtt_ns"))
    return *counts, m.stats_us(m.get(sub, "latency_ns")), None


def _failure(outcome: PointOutcome, mode: str, sent: int | None, received: int | None) -> str | None:
    """Why the point failed: its error, a missing result, or nothing delivered; None when ok."""
    if outcome.error is not None:
        return outcome.error
    if outcome.pub is None:
        return "publisher result missing"
    if outcome.sub is None:
        return "subscriber result missing"
    return total_loss(mode, sent, received)


def _sum(*values: int | None) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _sub_delivered(sub: dict[str, Any] | None, subs: list[Any], point: TestPoint) -> int | None:
    """What the subscriber's CPU delivered: its samples (echoed pings too), or,
    its readers being threads of one process, every reader's."""
    if point.threaded and subs:
        counts = [m.to_int(m.get(s, "received")) for s in subs]
        return None if any(c is None for c in counts) else sum(c or 0 for c in counts)
    return m.to_int(m.get(sub, "received"))


def _config(side: dict[str, Any] | None) -> dict[str, Any] | None:
    config = m.get(side, "adapter_config")
    return config if isinstance(config, dict) else None


#: What each side's adapter says it applied (its configuration's ``security_plugins``).
_ALGORITHMS = ("authentication", "access_control", "cryptography", "transformation", "key_agreement")


def _security(section: dict[str, Any] | None, pub_config: dict[str, Any] | None,
              sub_config: dict[str, Any] | None) -> dict[str, Any] | None:
    """A secured point's section (its keys and documents, :mod:`mwperf.execute.keystore`) with the
    algorithms each side's adapter applied (None: the side never said)."""
    if section is None:
        return None

    def algorithms(config: dict[str, Any] | None) -> dict[str, str] | None:
        plugins = config.get("security_plugins") if config is not None else None
        return {k: str(plugins[k]) for k in _ALGORITHMS if k in plugins} if isinstance(plugins, dict) else None

    return {**section, "algorithms": {"pub": algorithms(pub_config), "sub": algorithms(sub_config)}}


def _versions(pub: dict[str, Any] | None, sub: dict[str, Any] | None) -> dict[str, Any] | None:
    """Every middleware library a side ran on, with its version (the agent's ``versions``)."""
    for side in (pub, sub):
        versions = m.get(side, "versions")
        if isinstance(versions, dict):
            return {str(k): str(v) for k, v in versions.items()}
    return None


def _peer_side(point: TestPoint, sub: dict[str, Any] | None) -> dict[str, Any]:
    """Cross-vendor (peer_mw): the subscriber's middleware, as its agent names it (the publisher's is ``version``)."""
    if not point.get("peer-mw"):
        return {}
    versions = m.get(sub, "versions")
    return {"sub_version": m.get(sub, "adapter_version"),
            "sub_versions": {str(k): str(v) for k, v in versions.items()} if isinstance(versions, dict) else None}


def _data_path(pub: dict[str, Any] | None, sub: dict[str, Any] | None) -> dict[str, Any] | None:
    """The data path each side's middleware reports it used (shared memory, loan, copy),
    read after the measured phase; null where the middleware cannot tell."""
    paths = {role: m.get(side, "data_path") for role, side in (("pub", pub), ("sub", sub))}
    paths = {role: path if isinstance(path, dict) else None for role, path in paths.items()}
    return paths if any(paths.values()) else None


def _hosts(opts: RunOptions) -> dict[str, Any] | None:
    """Each side's host as it said before the first point (--hosts: mwperf.hosts), without how its bundle came."""
    facts = opts.hosts.facts if opts.hosts is not None else None
    if facts is None:
        return None
    return {role: dict(side) for role, side in zip(("pub", "sub"), facts)}


def _with_bundle(phases: dict[str, Any] | None, opts: RunOptions) -> dict[str, Any] | None:
    """The phases, and with --hosts how each side's bundle was put in place (``cached``, ``copied N in S s``)."""
    facts = opts.hosts.facts if opts.hosts is not None else None
    if phases is None or facts is None:
        return phases
    return {**phases, "bundle": {role: side["bundle"]["phase"] for role, side in zip(("pub", "sub"), facts)}}


def merge_record(planned: PlannedPoint, outcome: PointOutcome, *, run_id: str, time: str) -> dict[str, Any]:
    """One schema-v2 record; status is "failed" when the outcome has an
    error, a side's result is missing, or every sample was lost."""
    opts, point = planned.opts, planned.point
    pub, sub, pub_ready, clock = outcome.pub, outcome.sub, outcome.pub_ready, outcome.clock
    adapter = opts.adapters.get(point.mw)
    mode = point.mode

    sent, received, lost, samples_per_s, latency, rtt = _delivery(mode, pub, sub)
    pings = mode in ("latency", "throughput")
    ping_timeout_ns = m.get(pub, "ping_timeout_ns") if pings else None
    # One-way figures across two clocks: the subscriber subtracted the
    # estimated offset; the raw ones are the same shifted back.
    applied_ns = int(m.get(sub, "clock_offset_ns") or 0) if mode == "rate" else 0
    latency_raw = m.stats_us(m.get(sub, "latency_ns"), applied_ns) if applied_ns else None
    if latency is not None and clock is not None and not clock.get("same_clock") and mode == "rate":
        latency["uncertainty_us"] = clock.get("uncertainty_us")
    loss_rate = None if lost is None or sent is None else (lost / sent if sent else 0.0)
    scheduled = m.to_int(m.get(pub, "scheduled")) if mode == "rate" else None
    discovery_ns = m.get(pub, "discovery_ns")
    if discovery_ns is None:
        discovery_ns = m.get(pub_ready, "discovery_ns")
    version = m.get(pub, "adapter_version") or m.get(sub, "adapter_version") or (adapter.version if adapter else None)

    error = _failure(outcome, mode, sent, received)
    per_sub, subs = None, []
    if point.subscribers > 1:
        subs = list(outcome.subs) if outcome.subs is not None else [sub] + [None] * (point.subscribers - 1)
        per_sub = per_subscriber(mode, subs, bool(point.get("slow-subscriber")), sent, point.threaded)
        if error is None and any(s is None for s in subs):
            error = f"subscriber result missing ({sum(s is None for s in subs)} of {len(subs)})"

    pub_config, sub_config = _config(pub), _config(sub)
    record = {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "point": point.index,
        "time": time,
        **option_fields(opts.table, point, adapter, (pub, sub)),
        "cpu": {
            "pub": opts.cpu.pub,
            "sub": opts.cpu.sub,
            "placement": opts.cpu.placement,
            "pub_affinity": m.affinity(pub, pub_ready),
            "sub_affinity": m.affinity(sub, outcome.sub_ready),
        },
        "sent": sent,
        "received": received,
        "lost": lost,
        "loss_rate": loss_rate,
        "duplicates": m.to_int(m.get(sub, "duplicates")),
        "out_of_order": m.to_int(m.get(sub, "out_of_order")),
        "foreign": _sum(m.get(pub, "foreign"), m.get(sub, "foreign")),
        "samples_per_s": samples_per_s,
        "mbps": None if samples_per_s is None else samples_per_s * point.size * 8 / 1e6,
        "loop_rate": sent / scheduled if scheduled and sent is not None else None,
        "latency_us": latency,
        "rtt_us": rtt,
        "send_lag_us": m.stats_us(m.get(pub, "send_lag_ns")) if mode == "rate" else None,
        "scheduled": scheduled,
        "unsent": m.to_int(m.get(pub, "unsent")) if mode == "rate" else None,
        "send_timeouts": m.to_int(m.get(pub, "send_timeouts")),
        # pings without a pong within the timeout: lost, their round trip censored (not measured)
        **{k: m.to_int(m.get(pub, k)) if pings else None for k in ("ping_lost", "late_pongs")},
        "ping_timeout_s": ping_timeout_ns / 1e9 if ping_timeout_ns else None,
        "rejected": m.to_int(m.get(sub, "rejected")),
        "bursts": m.to_int(m.get(pub, "bursts")) if mode == "burst" else None,
        "burst_first_us": m.stats_us(m.get(sub, "burst_first_ns")) if mode == "burst" else None,
        "burst_last_us": m.stats_us(m.get(sub, "burst_last_ns")) if mode == "burst" else None,
        "per_subscriber": per_sub,
        "fanout": None if per_sub is None else fanout(per_sub, subs),
        "latency_raw_us": latency_raw,
        "cpu_s": {"pub": m.cpu_side(pub), "sub": m.cpu_side(sub)},
        "cpu_window_s": {"pub": m.window_s(pub), "sub": m.window_s(sub)},
        "cpu_pct": {"pub": m.cpu_pct(pub), "sub": m.cpu_pct(sub)},
        "cpu_window": {"pub": m.get(pub, "cpu_window"), "sub": m.get(sub, "cpu_window")},
        "cpu_us_per_msg": {"pub": m.cpu_per_msg(pub, received),
                           "sub": m.cpu_per_msg(sub, _sub_delivered(sub, subs, point))},
        "threads": {"pub": m.threads(pub), "sub": m.threads(sub)},
        "rss_kb": {"pub": m.to_int(m.get(pub, "maxrss_kb")), "sub": m.to_int(m.get(sub, "maxrss_kb"))},
        "mw_rss_kb": {"pub": m.mw_rss(pub), "sub": m.mw_rss(sub)},
        "own_kb": {"pub": m.to_int(m.get(pub, "own_kb")), "sub": m.to_int(m.get(sub, "own_kb"))},
        "discovery_ms": None if discovery_ns is None else discovery_ns / 1e6,
        "adapter": {"name": point.mw, "version": version, "config": pub_config, "sub_config": sub_config,
                    "versions": _versions(pub, sub), "data_path": _data_path(pub, sub), **_peer_side(point, sub)},
        "source": None,
        "link": outcome.link,
        "clock": m.clock_record(clock, mode, latency, applied_ns),
        "samples_file": m.samples_file(pub, sub, mode, point.index),
        "samples_error": m.samples_error(pub, sub),
        "repetition": planned.repetition,
        "point_key": planned.point_hash,
        "elapsed_s": m.elapsed_s(pub),
        "phases": _with_bundle(outcome.phases, opts),
        "hosts": _hosts(opts),
        "host_pair": opts.hosts.name if opts.hosts is not None else None,
        "reuse": outcome.reuse,
        "service": outcome.service,
        "security": _security(outcome.security, pub_config, sub_config),
        "adaptive": m.adaptive(point.get("precision") or point.get("stop-loss"), pub, sub, mode),
        "search": None,  # a max-rate search's probe: its search completes it (mwperf.execute.search)
        "launches": None,  # the last repetition of a point: the runner adds the spread over its launches
        "scenario": None,  # a scenario's flow: its step adds its section (mwperf.execute.scenario)
        "status": "ok" if error is None else "failed",
        "error": error,
    }
    # which path the samples took (the transport in force: the record's)
    link = outcome.link
    one_host = not isinstance(link, dict) or link.get("kind") in (None, "none")
    record["adapter"]["zero_copy"] = zero_copy(point.mw, record.get("transport"), one_host, _data_path(pub, sub))
    return record
