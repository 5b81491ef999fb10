"""What a run shows of its records besides results.jsonl (mwperf.export.run): the adaptive stop's saving."""

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
SCREEN = (60, 120)  # one screen: lines, and the columns of a table's line (a warning's text may wrap)


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


def test_the_end_of_a_run_is_one_screen_the_headline_then_where_the_report_is(tmp_path):
    """The quick plan's run ends with its headline, the warnings and where the report is, on one screen;
    the floor, each middleware's table and the CPU per thread group only with --verbose."""
    import io

    from mwperf.export.run import at_end

    rundir, records = quick_plan_run(tmp_path / "run")
    assert len(records) == 168
    out = io.StringIO()
    at_end(records, records, rundir, fmt="text", out=out, progress=io.StringIO())
    text = out.getvalue()
    lines = text.splitlines()
    assert len(lines) <= SCREEN[0] and max(len(line) for line in lines if not line.startswith("warning: ")) <= SCREEN[1]
    assert [line for line in text.splitlines() if line.startswith("== ")] == [
        line for line in text.splitlines() if line.startswith("== headline: ")] and text.count("== headline: ") == 3
    assert all(mw in text for mw in MIDDLEWARES)
    assert text.endswith(f"results: {rundir.path}\nreport: {rundir.path / 'report.html'}\n")
    verbose = io.StringIO()
    at_end(records, records, rundir, fmt="text", out=verbose, progress=io.StringIO(), verbose=True)
    every = verbose.getvalue()
    assert every.startswith("\n== floor: cross-core 0,1") and "== threads: udp " in every
    assert "== udp latency (" in every and every.count("== headline: ") == 3
    assert every.endswith(text[text.index("== headline: "):])  # the same end
