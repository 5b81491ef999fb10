"""``mwperf sweep`` end to end with the real agent on loopback: a small sweep,
a sweep killed mid-way and resumed (every point exactly once), what the
adaptive stop says of a point that cannot reach its precision, and the
command line's errors."""

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from conftest import real_agent_path
from conftest import written
from mwperf.model.schema import validate_record

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
@pytest.mark.side_by_side  # loopback, counts and statuses (no timing): beside other tests (measuring.py)
def test_small_sweep_end_to_end(tmp_path):
    agent = agent_or_skip()
    plan = tmp_path / "small.yaml"
    plan.write_text(SMALL)
    out = tmp_path / "run"
    done = mwperf("sweep", str(plan), "--out", str(out), "--agent", agent, "--format", "md", "--verbose")
    assert done.returncode == 0, done.stderr[-2000:]
    records = written(out)
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
@pytest.mark.side_by_side  # loopback, counts; the lock is the session's own (conftest)
def test_killed_sweep_resumes_every_point_exactly_once(tmp_path):
    agent = agent_or_skip()
    plan = tmp_path / "p.yaml"
    plan.write_text("mw: udp\nmode: latency\nsize: [32, 64, 128, 256, 512, 1k]\nduration: 300ms\nwarmup: 100ms\n")
    out = tmp_path / "run"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf", "sweep", str(plan), "--out", str(out), "--agent", agent],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if (out / "results.jsonl").exists() and len(written(out)) >= 2:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)  # the controller, as a crash would (its agents follow: PR_SET_PDEATHSIG)
    proc.wait()
    before = written(out)
    assert 2 <= len(before) < 6

    done = mwperf("sweep", "--resume", str(out), "--agent", agent)
    assert done.returncode == 0, done.stderr[-2000:]
    after = written(out)
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
    assert len(written(out)) == 6


@pytest.mark.e2e  # apart: its points' elapsed time is asserted (1.5 s +- 0.2), both sides on core 0
def test_a_point_that_cannot_reach_its_precision_says_what_it_would_need(tmp_path):
    """What this machine cannot change: at 0.01 % no point of 1.5 s stops
    early; each runs its full duration and says, in its record and on screen,
    how long it would need, or why that is not known; and every interval of
    every record lies within [min, max]. (That the rule stops when its
    intervals meet the precision, and keeps its confidence when it does, is
    tested on seeded series: agent/tests/core/test_stop.cpp.)"""
    agent = agent_or_skip()
    plan = tmp_path / "a.yaml"
    plan.write_text("mw: udp\nmode: [latency, rate, throughput]\nrate: 2000\nsize: 32\ncpu: '0,0'\n"
                    "duration: 1500ms\nwarmup: 100ms\nprecision: 0.01%\n")
    out = tmp_path / "run"
    done = mwperf("sweep", str(plan), "--out", str(out), "--agent", agent)
    assert done.returncode == 0, done.stderr[-2000:]
    records = written(out)
    assert [r["mode"] for r in records] == ["latency", "rate", "throughput"]
    for r in records:
        a = r["adaptive"]
        assert r["precision"] == 0.0001 and a["converged_after_s"] is None and not a["stopped_early"], a
        assert r["elapsed_s"] == pytest.approx(1.5, abs=0.2)
        last = a["last_look"]
        assert last is not None and last["after_s"] >= 0.5, a
        # it would need longer than it had, or it says why it cannot tell
        assert (a["needed_s"] is not None and a["needed_s"] > 1.5) or a["needed_note"], a
        stats = r["latency_us"]
        for q in ("p50", "p99", "p999"):
            ci = stats.get(f"{q}_ci")
            assert ci is None or stats["min"] <= ci[0] <= stats[q] <= ci[1] <= stats["max"], (q, stats)
    assert done.stderr.count("+-0.01% not reached") == 3, done.stderr
    assert "adaptive stop: 0/3 points within precision" in done.stdout  # its full sentence: --verbose


def test_dry_run_prints_points_and_count(tmp_path):
    plan = tmp_path / "p.yaml"
    plan.write_text("mw: [udp, tcp]\nmode: rate\nsize: [32, 1k]\nrate: [10, 100]\nrepetitions: 2\n")
    done = mwperf("sweep", str(plan), "--dry-run", cwd=tmp_path, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "8 points, 16 launches"
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


def test_run_json_keeps_every_matrix_of_the_plan():
    from mwperf.cli.sweep import plan_doc
    from mwperf.plan.sweep_plan import parse_plan

    plan = parse_plan("mw: udp\nalso:\n  - {mw: built, security: [none, encrypt], exclude: [{security: none}]}\n",
                      "p.yaml")
    doc = plan_doc(plan, 4)
    assert doc["options"] == {"mw": ["udp"]} and doc["exclude"] == []
    assert doc["also"] == [{"options": {"mw": ["built"], "security": ["none", "encrypt"]},
                            "exclude": [{"security": ["none"]}]}]
    assert "also" not in plan_doc(parse_plan("mw: udp\n", "p.yaml"), 1)
