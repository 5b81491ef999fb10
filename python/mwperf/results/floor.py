"""``DIR/floor.json``: what no middleware can beat on this machine, measured
by the agent's ``floor`` command at the start of a run (docs/agent-protocol.md),
and how a record finds its floor.

One floor per CPU placement and wait strategy of the run, each at the run's
sizes::

    {"floor_version": 1, "time": "...", "elapsed_s": 2.4, "budget_s": 0.1,
     "floors": [{"cpu": {"pub": 0, "sub": 1, "placement": "cross-core"}, "wait": "block",
                 "elapsed_s": 1.2, "error": null,
                 "entries": [{"kind": "memcpy", "method": "memcpy", "size": 1024, "gbps": 480.2, ...},
                             {"kind": "shm", "method": "futex", "size": 1024,
                              "latency_us": {"count": ..., "p50": ..., ...}, "rtt_us": {...}},
                             {"kind": "udp", "method": "datagram", "size": 70000, "skipped": "..."}]}]}

``latency_us`` is one-way (RTT/2, as a latency-mode record's); the latency
floor of a size is the lowest p50 of its ping-pongs (shm, unix, udp).
The file is read as untrusted (bounded, through :func:`mwperf.results.rundir.read_doc`):
a floor or an entry of the wrong shape is left out.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mwperf.interrupts import signals_deferred
from mwperf.results.rundir import RunDir, read_doc, write_atomic

__all__ = ["FLOOR_JSON", "FLOOR_VERSION", "KINDS", "PINGPONGS", "FloorIndex", "read_floor", "write_floor",
           "shape_floor"]

FLOOR_JSON = "floor.json"
FLOOR_VERSION = 1
PINGPONGS = ("shm", "unix", "udp")
KINDS = ("memcpy", *PINGPONGS)
_STATS = ("count", "mean", "min", "max", "p50", "p90", "p99")


def write_floor(rundir: RunDir, doc: dict) -> Path:
    path = rundir.path / FLOOR_JSON
    with signals_deferred():
        write_atomic(path, json.dumps(doc, indent=2) + "\n")
    return path


def read_floor(directory: Path | str) -> dict | None:
    """floor.json as shaped by :func:`shape_floor`; None when there is none."""
    return shape_floor(read_doc(directory, FLOOR_JSON))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _stats(value: Any) -> dict | None:
    if not isinstance(value, dict):
        return None
    return {k: value.get(k) if _number(value.get(k)) else None for k in _STATS}


def _entry(value: Any) -> dict | None:
    if not (isinstance(value, dict) and value.get("kind") in KINDS and type(value.get("size")) is int
            and value["size"] > 0):
        return None
    out = {"kind": value["kind"], "size": value["size"],
           "method": value["method"] if isinstance(value.get("method"), str) else value["kind"]}
    if isinstance(value.get("skipped"), str):
        out["skipped"] = value["skipped"]
    elif value["kind"] == "memcpy":
        if not _number(value.get("gbps")):
            return None
        out["gbps"] = value["gbps"]
        out["batch"] = value.get("batch") if type(value.get("batch")) is int else None
    else:
        latency, rtt = _stats(value.get("latency_us")), _stats(value.get("rtt_us"))
        if latency is None:
            return None
        out["latency_us"], out["rtt_us"] = latency, rtt
    return out


def _one_floor(value: Any) -> dict | None:
    if not (isinstance(value, dict) and isinstance(value.get("cpu"), dict) and isinstance(value.get("wait"), str)
            and isinstance(value.get("entries"), list)):
        return None
    cpu = value["cpu"]
    pub, sub = cpu.get("pub"), cpu.get("sub")
    if not all(core is None or type(core) is int for core in (pub, sub)):
        return None
    placement = cpu.get("placement") if isinstance(cpu.get("placement"), str) else "unknown"
    return {"cpu": {"pub": pub, "sub": sub, "placement": placement}, "wait": value["wait"],
            "elapsed_s": value.get("elapsed_s") if _number(value.get("elapsed_s")) else None,
            "error": value.get("error") if isinstance(value.get("error"), str) else None,
            "entries": [e for e in map(_entry, value["entries"]) if e is not None]}


def shape_floor(doc: Any) -> dict | None:
    """The usable part of a floor document, None when it is not one."""
    if not (isinstance(doc, dict) and doc.get("floor_version") == FLOOR_VERSION
            and isinstance(doc.get("floors"), list)):
        return None
    return {"floor_version": FLOOR_VERSION,
            "time": doc.get("time") if isinstance(doc.get("time"), str) else None,
            "elapsed_s": doc.get("elapsed_s") if _number(doc.get("elapsed_s")) else None,
            "budget_s": doc.get("budget_s") if _number(doc.get("budget_s")) else None,
            "floors": [f for f in map(_one_floor, doc["floors"]) if f is not None]}


def _where(cpu: Any, wait: Any) -> tuple:
    cpu = cpu if isinstance(cpu, dict) else {}
    return cpu.get("pub"), cpu.get("sub"), wait


class FloorIndex:
    """A record's floor: the same size, CPU placement (cores) and wait strategy."""

    def __init__(self, doc: dict | None):
        self._latency: dict[tuple, tuple[float, str]] = {}
        self._memcpy: dict[tuple, float] = {}
        for floor in (doc or {}).get("floors", []):
            where = _where(floor["cpu"], floor["wait"])
            for e in floor["entries"]:
                key = (*where, e["size"])
                if e["kind"] == "memcpy" and "gbps" in e:
                    self._memcpy[key] = e["gbps"]
                elif "latency_us" in e and _number(e["latency_us"].get("p50")) and e["latency_us"]["p50"] > 0:
                    p50 = e["latency_us"]["p50"]
                    if key not in self._latency or p50 < self._latency[key][0]:
                        self._latency[key] = (p50, f"{e['kind']} {e['method']}")

    def __bool__(self) -> bool:
        return bool(self._latency or self._memcpy)

    def latency(self, pub: int | None, sub: int | None, wait: str | None, size: int) -> tuple[float, str] | None:
        """(the one-way p50 floor in µs, the ping-pong that set it) at a point's cores, wait strategy and size."""
        return self._latency.get((pub, sub, wait, size))

    def memcpy_gbps(self, pub: int | None, sub: int | None, wait: str | None, size: int) -> float | None:
        """memcpy's Gbit/s at a point's cores, wait strategy and size."""
        return self._memcpy.get((pub, sub, wait, size))
