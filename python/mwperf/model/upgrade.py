"""Records of an older schema version, upgraded on reading: the one step
from version 1 to version 2, so that every reader (report, compare, export,
ls, ``mwperf.load``) sees version 2 only.

Version 2 against version 1:

* every field is present: what a version-1 record lacked (fields added within
  version 1, and what an imported record did not know) is null, or its
  empty object (``{"pub": null, "sub": null}``), as the version-2 schema allows;
* the options' fields are the agent's option table's (``qos.batch``,
  ``qos.nic``, ``latency_count``, ``precision``, ``confidence``,
  ``stamp_clock``); version 1's adapter configuration said some of them in
  the adapter's own words (Cyclone's ``write_batch``, zenoh's ``express`` and
  ``congestion_control``, Fast DDS's ``publish_mode``), read here once;
* one unit per kind: ``slow_subscriber_ms`` is ``slow_subscriber_s``;
* the fields added to version 1 last (``ping_lost``, ``late_pongs``,
  ``ping_timeout_s``, the statistics' ``p999``, ``p999_ci``, ``ci_method``
  and ``ci_null``, the looks' ``needed_s``, ``why``, ``rate`` and ``loss``,
  ``adaptive.needed_s`` and ``needed_note``, ``adapter.data_path``) are
  kept where a record has them and null where it does not;
  ``adapter.versions`` of a record without them is its adapter's version;
* what readers used to work out from older records themselves is worked out
  here, once: ``cpu_pct`` from ``cpu_s`` and the measured window, a fan-out's
  ``fanout.cpu_s`` and ``cpu_pct`` from its subscribers' (processes, each its own);
* no filler: the statistics' ``exact`` and ``kept`` are gone, a look's
  ``kept`` is its ``count``, ``adaptive.precision`` and ``confidence`` are
  the options' fields, ``clock.stamp_clock`` is ``stamp_clock``;
* a version-1 point key is kept as ``v1:KEY``: keys of the two versions hash
  different things and never match (``sweep --resume`` says so).

Within version 2, an option added to the agent's table later is a field of
the records written since; an older record's is null (the option was not
asked for): :func:`add_missing_options`. So is a field added to version 2
later (``ADDED_WITHIN_V2``: ``search``, a max-rate probe's section,
``launches``, a last repetition's spread, ``cpu_window`` and
``cpu_us_per_msg``, not measured then, ``scenario``, a scenario's flow, whose
records went to scenario.json then, ``security``, a secured point's keys): an older record's is blank.
Two fields added within version 2 are optional instead, and an older record simply lacks them:
``samples_error`` and ``launch_id`` (each launch's own random id, by which the loader refuses a launch
recorded twice: :mod:`mwperf.results.checks`; a record without one is keyed by its run, point,
``point_key`` and ``repetition``).
"""

from __future__ import annotations

import copy
import re
from typing import Any

from mwperf.model.schema import SCHEMA_VERSIONS, load_schema
from mwperf.table import snapshot

__all__ = ["upgrade", "current", "blank", "add_missing_options", "OLD_KEY_PREFIX"]

OLD_KEY_PREFIX = "v1:"
#: Fields added to version 2 after its first records: blank in a record written before.
ADDED_WITHIN_V2 = ("search", "launches", "cpu_window", "cpu_us_per_msg", "scenario", "security")
_STATS = ("latency_us", "rtt_us", "send_lag_us", "latency_raw_us", "burst_first_us", "burst_last_us")


def _resolve(node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = load_schema()["$defs"][node["$ref"].rsplit("/", 1)[1]]
    return node


def _nullable(node: dict[str, Any]) -> bool:
    node = _resolve(node)
    kinds = node.get("type")
    return (isinstance(kinds, list) and "null" in kinds) or None in node.get("enum", ())


def blank(node: dict[str, Any] | None = None) -> Any:
    """What a schema node holds when nothing is known: null where it may be,
    else an object of its required fields, each blank (``{"pub": null, "sub": null}``).
    A field that must be known (``mw``, ``status``) is None too: its caller sets it,
    and the schema refuses a record where it did not."""
    node = _resolve(node if node is not None else load_schema())
    if not _nullable(node) and (node.get("type") == "object" or "properties" in node):
        return {key: blank(node["properties"][key]) for key in node.get("required", ())}
    return None


def _fill(node: dict[str, Any], value: Any) -> None:
    """Every required field of ``value`` (and of what it holds) present, blank where missing."""
    node = _resolve(node)
    if isinstance(value, dict) and "properties" in node:
        for key in node.get("required", ()):
            if key not in value:
                value[key] = blank(node["properties"][key])
        for key, child in value.items():
            if key in node["properties"]:
                _fill(node["properties"][key], child)
    elif isinstance(value, list) and isinstance(node.get("items"), dict):
        for item in value:
            _fill(node["items"], item)


def _qos_from_config(qos: dict[str, Any], config: dict[str, Any]) -> None:
    """Options version 1 read from the adapter's own words."""
    if qos.get("batch") is None:
        if isinstance(config.get("write_batch"), bool):
            qos["batch"] = config["write_batch"]
        elif isinstance(config.get("express"), bool):
            qos["batch"] = not config["express"]
    if qos.get("async") is None and isinstance(config.get("publish_mode"), str):
        qos["async"] = config["publish_mode"] == "asynchronous"
    if qos.get("congestion") is None and isinstance(config.get("congestion_control"), str):
        qos["congestion"] = config["congestion_control"]


def _versions(adapter: dict[str, Any], mw: Any) -> dict[str, Any] | None:
    """The middleware libraries a version-1 record from before ``adapter.versions``
    ran on: its adapter's version is its middleware's, and a ROS 2 adapter's
    names the Fast DDS beneath it (``rcl 9.2.8, ..., Fast DDS 2.14.5``)."""
    text = str(adapter.get("version") or "")
    found = re.search(r"Fast DDS ([0-9][0-9.]*)", text)
    if found and mw != "fastdds":
        return {"fastdds": found.group(1)}
    return {str(mw): text} if text and mw else None


def _cpu_pct(r: dict[str, Any]) -> dict[str, Any]:
    """CPU % of one core per side, for a record from before ``cpu_pct``: user +
    sys over the side's window (else the measured phase, else the duration)."""
    out: dict[str, Any] = {}
    for side in ("pub", "sub"):
        used: Any = (r.get("cpu_s") or {}).get(side)
        span = (r.get("cpu_window_s") or {}).get(side) or r.get("elapsed_s") or r.get("duration_s")
        ok = isinstance(used, dict) and used.get("user") is not None and used.get("sys") is not None
        out[side] = 100.0 * (used["user"] + used["sys"]) / span if ok and isinstance(span, (int, float)) and span > 0 \
            else None
    return out


def _fanout_cpu(r: dict[str, Any]) -> None:
    """A fan-out record from before ``fanout.cpu_s`` and ``cpu_pct``: its subscribers were processes, each its own."""
    fan, rows = r.get("fanout"), r.get("per_subscriber")
    if not isinstance(fan, dict) or "cpu_pct" in fan or not isinstance(rows, list):
        return
    cpus: list[Any] = [row.get("cpu_s") for row in rows if isinstance(row, dict)]
    pcts = [row.get("cpu_pct") for row in rows if isinstance(row, dict)]
    whole = len(cpus) == len(rows) and all(isinstance(c, dict) for c in cpus)
    fan["cpu_s"] = {"user": sum(c["user"] for c in cpus), "sys": sum(c["sys"] for c in cpus)} if whole else None
    fan["cpu_pct"] = sum(pcts) if pcts and all(isinstance(p, (int, float)) for p in pcts) else None


def _stats(stats: Any) -> None:
    if isinstance(stats, dict):
        stats.pop("exact", None)
        stats.pop("kept", None)


def add_missing_options(record: Any) -> None:
    """A version-2 record written before an option was added to the agent's
    table has no field of it: it was not asked for (the middleware's own
    default was in force), which its record field says as null; so is a field
    added to version 2 since (``ADDED_WITHIN_V2``, blank)."""
    if not isinstance(record, dict):
        return
    for name in ADDED_WITHIN_V2:
        if name not in record:
            record[name] = blank(load_schema()["properties"][name])
    for row in snapshot().record_rows:
        parent, _, name = row.field.rpartition(".")
        target = record.get(parent) if parent else record
        if isinstance(target, dict) and name not in target:
            target[name] = None


def upgrade(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` (version 1 or 2) as version 2; a version-2 record is returned as it is."""
    if record.get("schema_version") != 1:
        return record
    r = copy.deepcopy(record)
    r["schema_version"] = 2
    own = not isinstance(r.get("source"), dict)
    adapter = r.get("adapter")
    if isinstance(adapter, dict) and adapter.get("versions") is None and own:
        adapter["versions"] = _versions(adapter, r.get("mw"))
    config = (r.get("adapter") or {}).get("config") or {}
    qos = r.setdefault("qos", {})
    if isinstance(qos, dict) and isinstance(config, dict):
        _qos_from_config(qos, config)
    for key in _STATS:
        _stats(r.get(key))
    for row in r.get("per_subscriber") or ():
        if isinstance(row, dict):
            _stats(row.get("latency_us"))
    slow_ms = r.pop("slow_subscriber_ms", None)
    r["slow_subscriber_s"] = slow_ms / 1000 if slow_ms else 0.0
    adaptive = r.get("adaptive")
    if isinstance(adaptive, dict):
        r["precision"] = adaptive.pop("precision", None)
        r["confidence"] = adaptive.pop("confidence", None)
        for look in (adaptive.get("at_convergence"), adaptive.get("last_look")):
            if isinstance(look, dict) and "kept" in look:
                look["count"] = look.pop("kept")
    clock = r.get("clock")
    stamp = clock.pop("stamp_clock", None) if isinstance(clock, dict) else None
    r["stamp_clock"] = (stamp or "monotonic") if own else None
    if "cpu_pct" not in r:
        r["cpu_pct"] = _cpu_pct(r)
    _fanout_cpu(r)
    r.setdefault("subscribers", 1)
    if r.get("subscribers_as") is None:
        r["subscribers_as"] = "processes"
    if isinstance(r.get("point_key"), str):
        r["point_key"] = OLD_KEY_PREFIX + r["point_key"]
    _fill(load_schema(), r)
    return r


def current(record: dict[str, Any]) -> dict[str, Any]:
    """A usable record as the current version: an option added to the agent's
    table since it was written is null, an older version is upgraded (the one
    step every reader of records takes, from a run directory or a store)."""
    if record.get("schema_version") == SCHEMA_VERSIONS[-1]:
        add_missing_options(record)
    return upgrade(record)
