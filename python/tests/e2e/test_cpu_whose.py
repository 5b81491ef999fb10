"""CPU charged to whoever spent it, against what the test knows: the threads
mwperf itself starts in rate mode (the publisher's main, control and monitor
threads; the subscriber's, and its CPU watcher) are mwperf's, and every other
thread is the middleware's. Fast DDS 2.9 and roscpp name none of theirs: they
carry "mwperf-main", the name of the thread that made them, and are still
the middleware's. Both sides' CPU covers the publisher's measured phase: the
subscriber's window ends at the last sample it received, not after the stop,
the publisher's settle or the drain."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import agent_with, count_leaving_packets
from conftest import written
from mwperf.model.schema import validate_record

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_shm_leftovers")]

#: the threads mwperf starts in a rate point, per side (one each)
OURS = {"pub": {"mwperf-main", "mwperf-control", "mwperf-monitor"},
        "sub": {"mwperf-main", "mwperf-control", "mwperf-monitor", "mwperf-cpu"}}


def run_point(tmp_path, mw, *args):
    out = tmp_path / "run"
    with count_leaving_packets() as leaving:
        done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--agent", agent_with(mw), "--mw", mw, *args,
                               "--out", str(out)], capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    assert leaving["packets"] == 0
    (r,) = written(out)
    validate_record(r)
    assert r["status"] == "ok", r["error"]
    return r


# ros1 without Nagle: with it, a queue of 10 loses about half at 1000 Hz (issue 23)
@pytest.mark.parametrize("mw, extra", [("fastdds", []), ("ros1", ["--transport", "tcpros-nodelay"])])
def test_the_middlewares_threads_are_the_middlewares_and_both_windows_span_the_measured_phase(tmp_path, mw, extra):
    r = run_point(tmp_path, mw, "--mode", "rate", "--rate", "1000", "--size", "1k", "--duration", "1s",
                  "--warmup", "500ms", *extra)
    for side in ("pub", "sub"):
        groups = r["threads"][side]
        assert {g["name"]: g["threads"] for g in groups if g["own"]} == {name: 1 for name in OURS[side]}, groups
        theirs = [g for g in groups if not g["own"]]
        assert sum(g["cpu_s"] for g in theirs) > 0, groups
        # they never named theirs: the name they inherited does not make them mwperf's
        assert any(g["name"] == "mwperf-main" for g in theirs), groups
        cpu = r["cpu_s"][side]["user"] + r["cpu_s"][side]["sys"]
        assert r["cpu_us_per_msg"][side] == pytest.approx(cpu * 1e6 / r["received"])
        assert r["cpu_window"][side].startswith("first measured sample")
    # the publisher's measured second; the subscriber's the same samples as they arrived
    # (read within 10 ms of the last), not the settle (200 ms) and drain after it
    assert r["cpu_window_s"]["pub"] == pytest.approx(1.0, abs=0.02)
    assert r["received"] >= 990
    assert 0.97 <= r["cpu_window_s"]["sub"] <= 1.05, r["cpu_window_s"]
