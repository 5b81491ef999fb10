"""A run directory made to attack whatever reads it (issue 37's probe): every
string of every record, of run.json, baseline.json and floor.json that may be
one is markup that, if a page ever ran it, sets ``data-ran`` on the page's
root element (adding the field's number, so a failure names the fields); the
numbers a reader does not check (baseline.json's ``duration_s``, run.json's
``vcpus``) are that markup too. Rebuild it with :func:`hostile_rundir`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, Callable

from conftest import FIXTURES
from mwperf.model.schema import record_ok

#: The markup: an attribute break, an element with an event handler, a script,
#: and a script that first closes the one around it (plotly's inline data).
MARK = "data-ran"


def markup(n: int) -> str:
    root = "document.documentElement"
    run = f"{root}.setAttribute('{MARK}',({root}.getAttribute('{MARK}')||'')+' {n}')"
    return (f"\"'><img src=x onerror=\"{run}\"><script>{run}</script></script><script>{run}</script>"
            f"<svg onload=\"{run}\"></svg>\u202e\x1b]0;title\x07")


class _Counter:
    def __init__(self):
        self.n = 0
        self.fields: dict[int, str] = {}

    def next(self, where: str) -> str:
        self.n += 1
        self.fields[self.n] = where
        return markup(self.n)


def _strings(value: Any, where: str, counter: _Counter, keep=lambda: True) -> Any:
    """``value`` with each string leaf replaced by markup where ``keep()`` still holds."""
    slots = list(value) if isinstance(value, dict) else range(len(value)) if isinstance(value, list) else ()
    for slot in slots:
        before, here = value[slot], f"{where}.{slot}" if isinstance(value, dict) else f"{where}[{slot}]"
        if isinstance(before, str):
            value[slot] = counter.next(here)
            if not keep():
                value[slot] = before
        else:
            _strings(before, here, counter, keep)
    return value


def hostile_rundir(path: Path) -> dict[int, str]:
    """The run directory at ``path`` (the scenario fixture's run and the
    fixture records, every string made markup); returns which field each
    number is."""
    counter = _Counter()
    shutil.copytree(FIXTURES / "scenario-run", path)
    lines = [(FIXTURES / name).read_text().splitlines() for name in ("results.jsonl", "results-extended.jsonl")]
    records = [json.loads(l) for l in (path / "results.jsonl").read_text().splitlines() + sum(lines, []) if l.strip()]
    for i, record in enumerate(records):
        assert record_ok(record)
        _strings(record, f"record {i}", counter, keep=lambda r=record: record_ok(r))
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    run = json.loads((path / "run.json").read_text())
    _strings(run, "run.json", counter)
    run["sysctl"] = {counter.next("run.json sysctl key"): 1, "net.core.busy_read": counter.next("run.json sysctl")}
    run["vcpus"] = counter.next("run.json vcpus")
    run["guest_halt_poll_ns"] = counter.next("run.json guest_halt_poll_ns")
    run["adapters"] = [{"name": counter.next("adapter name"), "version": counter.next("adapter version"),
                        "license": counter.next("adapter license")}]
    run["imported"] = {"tool": counter.next("imported tool"), "file": counter.next("imported file")}
    (path / "run.json").write_text(json.dumps(run))
    baseline = {"tool": "", "time": "", "duration_s": "", "link": {"profile": ""},
                "tcp": {"gbps": ""}, "udp": {"gbps": "", "lost_percent": ""}}
    (path / "baseline.json").write_text(json.dumps(_strings(baseline, "baseline.json", counter)))
    floor = json.loads((path / "floor.json").read_text())
    (path / "floor.json").write_text(json.dumps(_strings(floor, "floor.json", counter)))
    return counter.fields


# -- forged numbers and repeated launches (issue 45.2, 45.4) --------------------------------------

def _launches(n: int = 6) -> list[dict]:
    """``n`` launches of the fixture's udp latency 64 B point, as a sweep of ``repetitions: n`` writes them:
    each its index, repetition, hash and launch id, its p50 and every figure scaled around it (in order)."""
    base = json.loads((FIXTURES / "results.jsonl").read_text().splitlines()[0])
    out = []
    for i in range(n):
        r = json.loads(json.dumps(base))
        factor = 1 + 0.01 * i
        for name in ("latency_us", "rtt_us"):
            stats = r[name]
            for key in ("mean", "std", "min", "max", "p50", "p90", "p99", "p9999", "p999999"):
                if isinstance(stats.get(key), (int, float)):
                    stats[key] *= factor
        r.update(run_id="forged", point=i, repetition=i, point_key=f"{0xabc:013x}{i:03x}", launch_id=f"{i + 1:016x}")
        out.append(r)
    return out


def _set(path: str, value: Any) -> Callable[[dict], None]:
    def change(record: dict) -> None:
        *parents, last = path.split(".")
        where = record
        for part in parents:
            where = where[part]
        where[last] = value
    return change


#: Each forgery: how results.jsonl is made of the six good launches, and what the refusal must name.
FORGERIES: dict[str, tuple[Callable[[list[dict]], list[dict]], str]] = {
    "one launch copied six times": (lambda good: [good[0]] * 6, "point 0 (udp latency 64 B (best-effort, udp)), "
                                                                "launch 1: repeated: the same record"),
    "a run appended four times to itself": (lambda good: good * 4, "repeated: the same record"),
    "a copy renumbered, the launch id kept": (lambda good: good + [{**good[0], "point": 6, "repetition": 6,
                                                                    "point_key": "f" * 16}],
                                              "launch_id 0000000000000001 is point 0's"),
    "a copy renumbered, hash and repetition kept": (lambda good: good + [{**good[0], "point": 6, "launch_id": None}],
                                                    "point_key 0000000000abc000 and repetition 0 are point 0's"),
    "received above sent": (lambda good: [*good[:2], _with(good[2], _set("received", good[2]["sent"] + 5))],
                            "point 2 (udp latency 64 B (best-effort, udp)), launch 3: received 13941 above sent 13936"),
    "negative loss": (lambda good: [_with(good[0], _set("lost", -3))], "lost -3: negative"),
    "a loss rate above 1": (lambda good: [_with(good[0], _set("loss_rate", 1.5))], "loss_rate 1.5: a loss rate"),
    "a negative loss rate": (lambda good: [_with(good[0], _set("loss_rate", -0.25))], "loss_rate -0.25"),
    "a negative p50": (lambda good: [_with(good[0], _set("latency_us.p50", -5.0))],
                       "latency_us.p50 -5: negative, and no latency on one clock is"),
    "a p99 below the p50": (lambda good: [_with(good[0], _set("rtt_us.p99", 1.0))],
                            "rtt_us.p99 1 below rtt_us.p90 85.067: percentiles never decrease"),
    "a mean outside min and max": (lambda good: [_with(good[0], _set("latency_us.mean", 99999.0))],
                                   "latency_us.mean 99999 outside [7.716, 1710.59]"),
    "a negative standard deviation": (lambda good: [_with(good[0], _set("latency_us.std", -1.0))],
                                      "latency_us.std -1: a standard deviation is never negative"),
    "an interval upside down": (lambda good: [_with(good[0], _set("latency_us.p50_ci", [40.0, 30.0]))],
                                "latency_us.p50_ci [40, 30]: its low end above its high end"),
    "launches of other builds": (lambda good: [*good[:3], _with(good[3], _set("adapter.version", "linux 9.9"))],
                                 "point 3 (udp latency 64 B (best-effort, udp)), launch 4: adapter.version linux 9.9, "
                                 "but linux 6.18.44-fc-v669 in point 0, a launch of the same point"),
    "a launch of another adapter": (lambda good: [*good[:4], _with(good[4], _set("adapter.name", "tcp"))],
                                    "launch 5: adapter.name tcp, but udp in point 0"),
}


def _with(record: dict, *changes: Callable[[dict], None]) -> dict:
    record = json.loads(json.dumps(record))
    for change in changes:
        change(record)
    return record


def forged_rundir(path: Path, forgery: str) -> str:
    """A run directory at ``path`` whose results.jsonl is the six good launches forged as ``forgery``
    (a key of :data:`FORGERIES`; ``"none"``: the six good launches); what its refusal must say."""
    make, said = FORGERIES[forgery] if forgery != "none" else ((lambda good: good), "")
    (path / "samples").mkdir(parents=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in make(_launches())))
    (path / "run.json").write_text(json.dumps({"run_id": "forged", "status": "complete", "hostname": "h",
                                               "started": "2026-11-22T02:39:30.000Z"}))
    return said
