"""``mwperf sweep`` end to end with the real agent on loopback: a small sweep,
a sweep killed mid-way and resumed (every point exactly once), the adaptive
stop, and the command line's errors."""

import json
import math
import os
import re
import signal
import subprocess
import sys
import time

import pytest
import scipy.stats

from conftest import real_agent_path
from mwperf.results.rundir import read_records
from mwperf.results.schema import validate_record

SMALL = """\
mw: [udp, tcp]
mode: [latency, rate]
size: [32, 1k]
rate: 500
duration: 400ms
warmup: 100ms
"""


def agent_or_skip() -> str:
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    return str(agent)


def mwperf(*args, timeout=300, **kw):
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


@pytest.mark.e2e
def test_small_sweep_end_to_end(tmp_path):
    agent = agent_or_skip()
    plan = tmp_path / "small.yaml"
    plan.write_text(SMALL)
    out = tmp_path / "run"
    done = mwperf("sweep", str(plan), "--out", str(out), "--agent", agent, "--format", "md")
    assert done.returncode == 0, done.stderr[-2000:]
    records = read_records(out)
    assert len(records) == 8
    for r in records:
        validate_record(r)
        assert r["status"] == "ok", r["error"]
        assert r["received"] + r["lost"] == r["sent"]
        assert r["point_key"] and r["repetition"] == 0
    assert [r["point"] for r in records] == list(range(8))
    assert (out / "plan.yaml").read_text() == SMALL
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "complete" and run["points"] == {"total": 8, "ok": 8, "failed": 0, "done": 8}
    assert run["options"]["plan"] == str(plan)
    # the reference sweep's layout, one section per middleware and mode
    assert "| Size | Hz | Speed(Mbps) | loss-pkt | send-pkt | loss-rate | loop-rate | latency(ave) | latency(max) |" \
        in done.stdout
    assert "[8/8] tcp rate 1024 B 500 Hz ... ok" in done.stderr and " ETA " in done.stderr
    # the headline samples are kept, and report.html shows the first latency point's
    first = records[0]
    # the samples file is strided: every sample while it fits, then every 2nd, 4th ... so it holds
    # between half its capacity and all of them, in time order
    kept, seen = first["samples_file"]["count"], first["latency_us"]["count"]
    assert first["samples_file"]["time_ordered"] and min(seen, 8192) <= kept <= seen
    assert (out / first["samples_file"]["path"]).stat().st_size == 8 * first["samples_file"]["count"]
    html = (out / "report.html").read_text()
    assert f"report: {out / 'report.html'}" in done.stdout
    start = re.search(r'Plotly\.newPlot\(\s*"point-histogram",\s*', html).end()
    traces, _ = json.JSONDecoder().raw_decode(html, start)
    assert len(traces[0]["x"]) == first["samples_file"]["count"]  # every kept sample in the histogram


@pytest.mark.e2e
def test_killed_sweep_resumes_every_point_exactly_once(tmp_path):
    agent = agent_or_skip()
    plan = tmp_path / "p.yaml"
    plan.write_text("mw: udp\nmode: latency\nsize: [32, 64, 128, 256, 512, 1k]\nduration: 300ms\nwarmup: 100ms\n")
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf", "sweep", str(plan), "--out", str(out), "--agent", agent],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "results.jsonl").exists() and len(read_records(out)) >= 2:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the controller, as a crash would (its agents follow: PR_SET_PDEATHSIG)
    proc.wait()
    before = read_records(out)
    assert 2 <= len(before) < 6

    done = mwperf("sweep", "--resume", str(out), "--agent", agent)
    assert done.returncode == 0, done.stderr[-2000:]
    after = read_records(out)
    keys = [r["point_key"] for r in after]
    assert len(after) == 6 and len(set(keys)) == 6
    assert sorted(r["size"] for r in after) == [32, 64, 128, 256, 512, 1024]
    assert after[:len(before)] == before  # what was measured stays as it was
    run = json.loads((out / "run.json").read_text())
    assert run["status"] == "complete" and run["points"]["done"] == 6
    assert run["resumed"][0]["points"] == 6 - len(before)
    assert run["resumed"][0]["machine_lock"] == "held" and run["machine_lock"] == "held"

    again = mwperf("sweep", "--resume", str(out), "--agent", agent)
    assert again.returncode == 0 and "nothing to resume" in again.stdout
    assert len(read_records(out)) == 6


@pytest.mark.e2e
def test_adaptive_stop_honours_its_precision(tmp_path):
    agent = agent_or_skip()
    plan = tmp_path / "a.yaml"
    plan.write_text("mw: udp\nmode: [latency, rate]\nrate: 5000\nsize: 32\ncpu: '0,0'\n"
                    "duration: 20s\nwarmup: 100ms\nprecision: 25%\n")  # p99's tail converges slowly: 25 %
    out = tmp_path / "run"
    done = mwperf("sweep", str(plan), "--out", str(out), "--agent", agent)
    assert done.returncode == 0, done.stderr[-2000:]
    records = read_records(out)
    assert len(records) == 2
    reached_precision = 0
    for r in records:
        stats = r["latency_us"]
        assert r["precision"] == 0.25 and r["confidence"] == 0.95
        for q in ("p50", "p99"):  # the record's own interval covers every sample, including those after the stop
            assert stats[f"{q}_ci"][0] <= stats[q] <= stats[f"{q}_ci"][1]
        if r["adaptive"]["converged_after_s"] is None:
            # This VM stalls for milliseconds now and then, so a rate point's p99 may not settle in
            # 20 s: then it runs its full duration, and its final interval shows why it went on.
            assert r["mode"] == "rate", r
            assert not r["adaptive"]["stopped_early"] and r["elapsed_s"] == pytest.approx(20, abs=0.2)
            # Its last look shows why: one interval, at that look's share of the error
            # (5 % x 6/(pi^2 j^2), split over p50 and p99), was wider than 25 % ...
            last = r["adaptive"]["last_look"]
            assert last is not None and last["look"] >= 1 and last["after_s"] > 19, last
            assert max((hi - lo) / (hi + lo) for lo, hi in (last["p50_ci"], last["p99_ci"])) > 0.25 - 1e-3, last
            # ... and so is the record's final 95 % interval, widened to that look's level with
            # scipy's t quantile (the last 250 ms of samples may have narrowed it a little).
            spent = 0.05 * 6 / (math.pi ** 2 * last["look"] ** 2) / 2
            df = stats["ci_batches"] - 1
            widen = scipy.stats.t.ppf(1 - spent / 2, df) / scipy.stats.t.ppf(0.975, df)
            widths = [(hi - lo) / 2 / stats[q] for q in ("p50", "p99") for lo, hi in [stats[f"{q}_ci"]]]
            assert max(widths) * widen > 0.25 * 0.8, (widths, widen)
            continue
        reached_precision += 1
        # a latency-mode point stops itself; a rate point is stopped by the controller on the sub's word
        assert r["elapsed_s"] < 19 and r["adaptive"]["stopped_early"]
        if r["mode"] == "rate":  # judged on the sends it made before it was stopped
            assert r["loop_rate"] == pytest.approx(1.0, abs=0.05)
        # when the stop was decided, both intervals were within 25 % of their estimates,
        # which lie inside them (so within 25 % of the upper end; + rounding of RTT/2)
        reached = r["adaptive"]["at_convergence"]
        assert r["adaptive"]["last_look"] == reached  # the converging look was the last
        assert 0 < reached["count"] <= stats["count"]
        for q in ("p50", "p99"):
            lo, hi = reached[f"{q}_ci"]
            assert lo <= hi and (hi - lo) / 2 <= 0.25 * hi + 0.001
    assert records[0]["mode"] == "latency" and records[0]["adaptive"]["converged_after_s"] is not None
    assert f"adaptive duration: {reached_precision}/2 points reached their precision" in done.stdout


def test_dry_run_prints_points_and_count(tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text("mw: [udp, tcp]\nmode: rate\nsize: [32, 1k]\nrate: [10, 100]\nrepetitions: 2\n")
    done = mwperf("sweep", str(plan), "--dry-run", cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "16 points"
    assert lines[0].startswith(" 1  udp rate 32 B 10 Hz; cpu ")
    assert not list(tmp_path.glob("results*"))


@pytest.mark.parametrize("args, expected", [
    ([], "mwperf: error: sweep: give a PLAN.yaml, or --resume DIR (not both)"),
    (["nope.yaml"], "mwperf: error: nope.yaml: cannot read the plan"),
    (["--resume", "nowhere"], "mwperf: error: --resume nowhere: no plan.yaml there"),
])
def test_sweep_usage_errors(tmp_path, args, expected):
    done = mwperf("sweep", *args, cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [done.stderr.strip()] and done.stderr.startswith(expected), done.stderr


def test_bad_plan_exits_2_naming_the_key(tmp_path):
    plan = tmp_path / "bad.yaml"
    plan.write_text("mw: udp\nsize: [1k, 70000]\n")
    done = mwperf("sweep", str(plan), "--dry-run", cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    assert done.stderr.startswith(f"mwperf: error: {plan}: size: 70000: udp carries at most 65507 bytes"), done.stderr
    assert "Traceback" not in done.stderr
