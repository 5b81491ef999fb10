"""Golden text and Markdown of the tables max-rate searches and repeated
launches add (export/max_rate.py, export/launches.py), and the plotted data
of the max-rate figure, from fixture records given search sections and
repetitions."""

import copy
import json

from conftest import FIXTURES, check_golden, typed_all
from mwperf.export.figure_parts import series_name
from mwperf.export.launches import launch_sections
from mwperf.export.max_rate import max_rate_figures, max_rate_sections
from mwperf.export.tables import render_markdown, render_text


def _template(mode: str) -> dict:
    for line in (FIXTURES / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["mw"] == "udp" and r["mode"] == mode and r["status"] == "ok":
            return r
    raise AssertionError("fixture missing")


def probes() -> list[dict]:
    """Two searches (1 KiB, 64 KiB) as the search writes them: probes, the last one done."""
    out = []
    runs = {1024: [(1000, True), (4000, False), (2000, False), (1414, False), (1189, False), (1091, True),
                   (1139, True)],
            65536: [(1000, False), (250, True), (500, True), (707, False), (595, True), (648, False), (621, True)]}
    for cell, (size, steps) in enumerate(runs.items()):
        lo = hi = None
        for i, (rate, met) in enumerate(steps):
            r = copy.deepcopy(_template("rate"))
            r.update(point=len(out), size=size, rate_hz=float(rate))
            lo = max(lo or 0, rate) if met else lo
            hi = min(hi or 1e9, rate) if not met else hi
            done = i == len(steps) - 1
            r["search"] = {"criterion": {"loss": 0.01, "p99_us": None}, "step": 0.05, "growth": 4.0,
                           "bounds_hz": [1.0, 1e6], "cell": cell, "probe": i + 1,
                           "phase": "bisect" if lo and hi and i else "grow", "met": met,
                           "why": f"{0.2 if met else 3.0}% of the due samples missing", "missing": 0.002 if met else 0.03,
                           "bracket": [lo, hi], "done": done, "max_rate_hz": lo if done else None, "note": None}
            out.append(r)
    return out


def launches() -> list[dict]:
    out = []
    for i, p50 in enumerate([30.0, 34.0, 26.0]):
        r = copy.deepcopy(_template("latency"))
        r.update(point=i, repetition=i)
        r["latency_us"].update(p50=p50, p50_ci=[p50 - 0.3, p50 + 0.3])
        out.append(r)
    return out


def test_golden():
    records = typed_all(probes() + launches())
    sections = max_rate_sections(records) + launch_sections(records)
    assert [s.mode for s in sections] == ["max-rate", "launches"]
    check_golden("search-tables.txt", render_text(sections))
    check_golden("search-tables.md", render_markdown(sections))
    (figure,) = max_rate_figures(records)
    data = [{"name": t.name, "x": list(t.x), "y": list(t.y)} for t in figure.fig.data]
    assert data == [{"name": series_name(records[0]), "x": [1024, 65536], "y": [1139, 621]}]
