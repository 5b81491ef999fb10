"""Scenarios end to end, against ground truth the test sets up: an nftables
rule drops exactly every 10th datagram of one flow (by its length) and no
other's; three publishers' counts are what two subscribers count of each; a
file's bytes are what arrives; results.jsonl holds one record per flow
measured together and one per flow alone. Real agents and middlewares."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import namespace_dropping_every_10th, pids_with_cmdline, real_agent_path

pytestmark = pytest.mark.e2e
PLANS = Path(__file__).resolve().parents[3] / "plans"


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]


def flows(recs: list[dict], together: bool = True) -> dict[str, dict]:
    """The flows' records measured together (or alone), by flow name; each flow once."""
    mine = [r for r in recs if r["scenario"]["together"] is together]
    assert len({r["scenario"]["flow"] for r in mine}) == len(mine), "a flow recorded twice"
    return {r["scenario"]["flow"]: r for r in mine}


def scenario(out: Path, path: Path, *args: str, prefix: tuple[str, ...] = (), timeout: float = 170) -> dict:
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    done = subprocess.run([*prefix, sys.executable, "-m", "mwperf", "run", "--agent", str(agent), "--scenario",
                           str(path), "--out", str(out), *args], capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    assert not pids_with_cmdline(f"{out}/samples/"), "an agent of the scenario outlived it"
    assert not (out / "scenario.json").exists()  # results.jsonl is the run's truth
    return {"records": records(out), "stdout": done.stdout, "run": json.loads((out / "run.json").read_text())}


@pytest.fixture
def netns_dropping_one_flow():
    """Every 10th UDP datagram of 1000 bytes (UDP length 1008: the victim flow's) dropped at the input."""
    with namespace_dropping_every_10th("udp length 1008", "-scn") as name:
        yield name


def test_the_dropped_flow_loses_a_tenth_the_others_nothing(tmp_path, netns_dropping_one_flow):
    path = tmp_path / "s.yaml"
    path.write_text("flows:\n - {name: victim, size: 1000, rate: 1000}\n - {name: other, size: 500, rate: 1000}\n"
                    " - {name: burst, size: 200, demand: 20, burst-gap: 20ms}\n")
    doc = scenario(tmp_path / "run", path, "--mw", "udp", "--duration", "2s", "--warmup", "300ms", "--no-floor",
                   prefix=("ip", "netns", "exec", netns_dropping_one_flow))
    together, alone = flows(doc["records"]), flows(doc["records"], together=False)
    victim = together["victim"]
    assert victim["sent"] == 2000
    assert abs(victim["lost"] - victim["sent"] / 10) <= 1  # the phase of the 10 against the first measured sample
    assert victim["received"] + victim["lost"] == victim["sent"]
    for name in ("other", "burst"):
        flow = together[name]
        assert flow["sent"] > 0 and flow["lost"] == 0 and flow["received"] == flow["sent"]
    solo = alone["victim"]  # alone, the same rule: again a tenth
    assert abs(solo["lost"] - solo["sent"] / 10) <= 1 and alone["other"]["lost"] == 0
    assert "victim" in doc["stdout"] and "p99 together" in doc["stdout"]


def test_three_publishers_two_subscribers_together_and_alone(tmp_path):
    """Every subscriber counts every publisher's samples, each in its own sequence space; results.jsonl holds the
    flows together and each alone, one record each, their counts per publisher what the publishers sent."""
    path = tmp_path / "s.yaml"
    path.write_text("flows:\n - {name: nm, size: 256, rate: 200, publishers: 3, subscribers: 2, "
                    "reliability: reliable, history: keep-all}\n - {name: one, size: 128, rate: 100, "
                    "reliability: reliable}\n")
    doc = scenario(tmp_path / "run", path, "--mw", "cyclonedds", "--duration", "1s", "--warmup", "200ms",
                   "--no-floor")
    recs = doc["records"]
    assert sorted((r["scenario"]["flow"], r["scenario"]["together"]) for r in recs) == [
        ("nm", False), ("nm", True), ("one", False), ("one", True)]
    assert doc["run"]["points"] == {"total": 4, "ok": 4, "failed": 0, "done": 4}
    for flow in (flows(recs)["nm"], flows(recs, together=False)["nm"]):
        section = flow["scenario"]
        sent = section["publisher_sent"]
        assert len(sent) == 3 and all(s == 200 for s in sent)  # 200 Hz for 1 s, each publisher
        assert flow["sent"] == 600 and section["publishers"] == 3 and flow["subscribers"] == 2
        assert len(section["per_publisher"]) == 2  # one list per subscriber
        for sub in section["per_publisher"]:
            assert [p["publisher"] for p in sub] == [0, 1, 2]
            for p, s in zip(sub, sent):
                assert (p["received"], p["lost"], p["duplicates"], p["seq_span"], p["sent_known"]) == (s, 0, 0, s, s)
    for flow in (flows(recs)["one"], flows(recs, together=False)["one"]):
        assert flow["scenario"]["publisher_sent"] == [100] and flow["sent"] == flow["received"] == 100
        assert flow["scenario"]["per_publisher"] is None
    assert len({r["point_key"] for r in recs}) == 4 and len({r["point"] for r in recs}) == 4
    csv = (tmp_path / "run" / "results.csv").read_text().splitlines()
    assert len(csv) == 5 and "scenario_flow" in csv[0]


def test_a_file_payload_arrives_as_the_files_bytes(tmp_path):
    data = tmp_path / "payload.bin"
    data.write_bytes(os.urandom(10 * 1000 + 123))  # ten 1000-byte chunks and a tail never sent
    path = tmp_path / "s.yaml"
    path.write_text("flows:\n - {name: f, size: 1032, rate: 100, payload: 'file:payload.bin', check_payload: true}\n")
    doc = scenario(tmp_path / "run", path, "--mw", "udp", "--duration", "1s", "--warmup", "100ms", "--no-floor",
                   "--no-solo")
    (flow,) = doc["records"]
    assert flow["scenario"]["payload"] == f"file:{data.resolve()}"
    (check,) = flow["scenario"]["payload_check"]
    assert flow["received"] == 100 and check == {"payload_matched": 100, "payload_mismatched": 0}
    assert doc["run"]["hostname"] and doc["run"]["agent"]


def test_a_flow_whose_publisher_dies_fails_alone(tmp_path):
    """SIGKILL to flow 'b''s publisher (point 1's, by its samples file) mid-run: b fails, a's numbers stand."""
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    path, out = tmp_path / "s.yaml", tmp_path / "run"
    path.write_text("flows:\n - {name: a, size: 200, rate: 500}\n - {name: b, size: 300, rate: 500}\n")
    proc = subprocess.Popen([sys.executable, "-m", "mwperf", "run", "--agent", str(agent), "--scenario", str(path),
                             "--out", str(out), "--mw", "udp", "--duration", "2s", "--warmup", "200ms", "--no-floor",
                             "--no-solo"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    marker = f"{out}/samples/00001.i64"
    deadline = time.monotonic() + 30
    pids: list[int] = []
    while not pids and time.monotonic() < deadline:
        pids = [p for p in pids_with_cmdline("--role pub") if p in pids_with_cmdline(marker)]
        time.sleep(0.05)
    assert pids, "flow b's publisher never appeared"
    time.sleep(1.2)
    os.kill(pids[0], signal.SIGKILL)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1 and "Traceback" not in stderr, stdout + stderr
    together = flows(records(out))
    assert together["b"]["status"] == "failed" and "killed by SIGKILL" in together["b"]["error"]
    assert together["a"]["status"] == "ok" and together["a"]["sent"] == 1000 and together["a"]["lost"] == 0


def test_robot_mobile_preset(tmp_path):
    doc = scenario(tmp_path / "run", PLANS / "robot-mobile.yaml", "--mw", "cyclonedds", "--duration", "1s",
                   "--warmup", "200ms")
    names = {"imu", "odometry", "tf", "lidar", "rgb", "depth", "cmd_vel"}
    assert set(flows(doc["records"])) == set(flows(doc["records"], together=False)) == names
    assert all(r["status"] == "ok" for r in doc["records"])
    page = (tmp_path / "run" / "report.html").read_text()
    assert '<section id="scenario">' in page and page.count("<table>") >= 3  # the flows, the floor, provenance
