"""What a run shows of its records besides results.jsonl (mwperf.export.run): the end of a run on one screen,
the adaptive stop's saving."""

import io
import json
import re

from rich.cells import cell_len

from conftest import typed
from mwperf.export.run import adaptive_saving


def test_the_adaptive_summary_says_what_the_others_would_need():
    def point(converged, needed=None, note=None):
        return typed({"duration_s": 10.0, "elapsed_s": 2.0 if converged else 10.0,
                      "adaptive": {"converged_after_s": 2.0 if converged else None, "needed_s": needed,
                                   "needed_note": note}})
    line = adaptive_saving([point(True), point(False, 40.0), point(False, 100.0), point(False, 700.0),
                            point(False, note="p99_ci: correlation too long for the run")])
    assert line.startswith("adaptive duration: 1/5 points reached their precision; measured 42.0 s instead of 50.0 s")
    assert "the other 4 would need ~100 s (median of 3), up to 12 min" in line
    assert line.endswith("; 1 without an interval to extrapolate from (see adaptive.needed_note)")
    assert adaptive_saving([typed({"duration_s": 1.0, "elapsed_s": 1.0, "adaptive": None})]) is None


MIDDLEWARES = ("udp", "tcp", "cyclonedds", "cyclonedds11", "fastdds", "fastdds-jazzy", "fastdds3", "connext",
               "iceoryx", "iceoryx2", "zenoh", "ros1", "ros2", "ros2-kilted")


def quick_plan_run(directory):
    """A run directory of the quick plan's shape (plans/quick.yaml: every middleware, latency, throughput
    and two publish rates at three sizes, 168 points), its floor, its points' thread groups."""
    from floor_docs import doc, floor, stats
    from mwperf.model.upgrade import blank
    from mwperf.results.floor import write_floor
    from mwperf.results.rundir import RunDir

    rundir = RunDir(directory).create()
    sizes = (32, 1024, 63000)
    entries = [e for size in sizes for e in (
        {"kind": "memcpy", "method": "memcpy", "size": size, "gbps": 90.0, "batch": 1024},
        {"kind": "unix", "method": "stream", "size": size, "latency_us": stats(6.0), "rtt_us": stats(12.0)})]
    write_floor(rundir, doc(floor(entries=entries)))
    records = []
    threads = [{"name": "mwperf-main", "threads": 1, "cpu_s": 0.1, "cpu_pct": 5.0, "own": True},
               {"name": "rx-0", "threads": 1, "cpu_s": 0.2, "cpu_pct": 10.0, "own": False}]
    for i, mw in enumerate(MIDDLEWARES):
        for mode, rate in (("latency", None), ("throughput", None), ("rate", 100.0), ("rate", 1000.0)):
            for size in sizes:
                records.append(typed({
                    **blank(), "mw": mw, "mode": mode, "size": size, "rate_hz": rate, "status": "ok", "point": len(records),
                    "subscribers": 1, "subscribers_as": "processes", "wait": "block",
                    "cpu": {"pub": 0, "sub": 1, "placement": "cross-core"}, "sent": 1000, "received": 1000,
                    "scheduled": 1000 if rate else None, "lost": 0, "loss_rate": 0.0, "mbps": 100.0 * (i + 1),
                    "samples_per_s": rate or 10_000.0, "loop_rate": 1.0 if rate else None,
                    "latency_us": {"count": 1000, "p50": 20.0 + i, "p99": 90.0 + i, "p50_ci": [19.5 + i, 21.0 + i]},
                    "threads": {"pub": threads, "sub": threads}}))
    return rundir, records


def quick_run(directory):
    """The quick plan's run as it was measured here (plans/quick.yaml, 14 middlewares, 168 points, one
    launch each): fixtures/quick-run holds its records' headline fields and its floor.json; its
    discovery.jsonl, the plan's discovery points (Cyclone DDS and Fast DDS, 5 participants, unicast on
    loopback) as measured here with mwperf run --mode discovery."""
    import shutil

    from conftest import FIXTURES
    from mwperf.model.upgrade import blank
    from mwperf.results.rundir import RunDir

    rundir = RunDir(directory).create()
    shutil.copy(FIXTURES / "quick-run" / "floor.json", rundir.path / "floor.json")
    shutil.copy(FIXTURES / "quick-run" / "discovery.jsonl", rundir.path / "discovery.jsonl")
    rundir.write_run_json({"sysctl": {"net.core.busy_read": 0}})  # this machine's: a warning the run gave
    lines = (FIXTURES / "quick-run" / "results.jsonl").read_text().splitlines()
    return rundir, [typed({**blank(), "subscribers": 1, "subscribers_as": "processes", **json.loads(line)})
                    for line in lines]


SCREEN = (45, 100)  # one screen after the progress lines: lines, columns


def test_the_end_of_a_run_is_one_screen_the_headline_then_where_the_report_is(tmp_path):
    """The quick plan's run ends with its headline, the warnings and where the report is, in at most
    45 lines (the store's line, said after it, included) of at most 100 columns; the floor, each
    middleware's table and the CPU per thread group only with --verbose."""
    from mwperf.export.run import at_end

    rundir, records = quick_run(tmp_path / "run")
    assert len(records) == 168
    out = io.StringIO()
    at_end(records, records, rundir, fmt="text", out=out, progress=io.StringIO())
    text = out.getvalue()
    lines = text.splitlines()
    assert len(lines) + 1 <= SCREEN[0], text  # + "store: ..." (make run's runs go into results/mwperf.duckdb)
    assert max(cell_len(line) for line in lines) <= SCREEN[1], text
    assert lines[0].startswith("headline: ") and "== " not in text and "threads" not in text
    for mw in MIDDLEWARES:  # every middleware in both tables, a cell with its place in every column
        rows = [line for line in lines if line.startswith(mw + " ")]
        assert [len(re.findall(r"(?:\S+/\S+|\S+ \S+%) \d+[≈?]?(?= |$)", row)) for row in rows] == [6, 6], rows
    # as the run's wide table had them: p50/p99 #1?; 130 Mbit/s, none lost, #1≈; 83.0 µs, 99.9 % delivered, #12?
    assert re.search(r"^iceoryx +19.4/56.7 1\? ", text, re.M) and re.search(r"^iceoryx .* 130 0% 1≈ ", text, re.M)
    assert re.search(r"^iceoryx2 .* 83.0 0.1% 12\? ", text, re.M)
    assert "warning: net.core.busy_read is 0" in text
    # the discovery points: one line for the two middlewares at the same N, T and discovery
    assert "\ndiscovery N=5 T=1 unicast loopback, ms to match / 1st sample: cyclonedds 113/123, fastdds 18/97\n" \
        in text
    assert text.endswith(f"others need ~50 s (median)\nreport: {rundir.path / 'report.html'}\n")
    assert text.count("report: ") == 1 and "results: " not in text
    verbose = io.StringIO()
    at_end(records, records, rundir, fmt="text", out=verbose, progress=io.StringIO(), verbose=True)
    every = verbose.getvalue()
    assert every.startswith("\n== floor: cross-core 0,1") and every.count("== headline: ") == 3
    assert "== udp latency (" in every and "(see adaptive.needed_note)" in every
    assert "== discovery: cyclonedds 0.10.2, unicast discovery (loopback) ==" in every
    assert every.endswith(f"results: {rundir.path}\nreport: {rundir.path / 'report.html'}\n")


def test_the_cpu_per_thread_group_is_for_verbose_alone(tmp_path):
    from mwperf.export.run import at_end

    rundir, records = quick_plan_run(tmp_path / "run")
    out, verbose = io.StringIO(), io.StringIO()
    at_end(records, records, rundir, fmt="text", out=out, progress=io.StringIO())
    at_end(records, records, rundir, fmt="text", out=verbose, progress=io.StringIO(), verbose=True)
    assert "== threads: udp " in verbose.getvalue() and "threads" not in out.getvalue()
    assert max(cell_len(line) for line in out.getvalue().splitlines()) <= SCREEN[1]


def test_the_summaries_fit_a_line_unless_verbose():
    def point(converged, needed=None):
        return typed({"duration_s": 60.0, "elapsed_s": 2.0 if converged else 60.0,
                      "adaptive": {"converged_after_s": 2.0 if converged else None, "needed_s": needed}})
    many = [point(True)] * 5000 + [point(False, 36000.0)] * 4999
    line = adaptive_saving(many, verbose=False)
    assert len(line) <= SCREEN[1] and line.startswith("adaptive stop: 5000/9999 points within precision, 80h33m saved (48 %)")
    assert len(adaptive_saving(many)) > SCREEN[1]  # --verbose: in full
