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
from typing import Any

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
