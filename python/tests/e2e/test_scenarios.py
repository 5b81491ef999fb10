"""Scenarios end to end, against ground truth the test sets up: an nftables
rule drops exactly every 10th datagram of one flow (by its length) and no
other's; three publishers' counts are what two subscribers count of each; a
file's bytes are what arrives. Real agents and middlewares."""

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


def scenario(out: Path, path: Path, *args: str, prefix: tuple[str, ...] = (), timeout: float = 170) -> dict:
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    done = subprocess.run([*prefix, sys.executable, "-m", "mwperf", "run", "--agent", str(agent), "--scenario",
                           str(path), "--out", str(out), *args], capture_output=True, text=True, timeout=timeout)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    assert not pids_with_cmdline(f"{out}/samples/"), "an agent of the scenario outlived it"
    doc = json.loads((out / "scenario.json").read_text())
    doc["stdout"] = done.stdout
    return doc


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
    (point,) = doc["points"]
    flows = point["together"]["flows"]
    victim = flows["victim"]
    assert victim["sent"] == 2000
    assert abs(victim["lost"] - victim["sent"] / 10) <= 1  # the phase of the 10 against the first measured sample
    assert victim["received"] + victim["lost"] == victim["sent"]
    for name in ("other", "burst"):
        assert flows[name]["sent"] > 0 and flows[name]["lost"] == 0 and flows[name]["received"] == flows[name]["sent"]
    alone = point["alone"]["victim"]  # alone, the same rule: again a tenth
    assert abs(alone["lost"] - alone["sent"] / 10) <= 1 and point["alone"]["other"]["lost"] == 0
    assert "victim" in doc["stdout"] and "p99 together" in doc["stdout"]


def test_three_publishers_two_subscribers(tmp_path):
    """Every subscriber counts every publisher's samples, each in its own sequence space."""
    path = tmp_path / "s.yaml"
    path.write_text("flows:\n - {name: nm, size: 256, rate: 200, publishers: 3, subscribers: 2, "
                    "reliability: reliable, history: keep-all}\n")
    doc = scenario(tmp_path / "run", path, "--mw", "cyclonedds", "--duration", "1s", "--warmup", "200ms",
                   "--no-floor", "--no-solo")
    flow = doc["points"][0]["together"]["flows"]["nm"]
    sent = flow["publisher_sent"]
    assert len(sent) == 3 and all(s == 200 for s in sent)
    assert flow["sent"] == 600
    assert len(flow["per_publisher"]) == 2  # one list per subscriber
    for sub in flow["per_publisher"]:
        assert [p["publisher"] for p in sub] == [0, 1, 2]
        for p, s in zip(sub, sent):
            assert (p["received"], p["lost"], p["duplicates"], p["seq_span"], p["sent_known"]) == (s, 0, 0, s, s)


def test_a_file_payload_arrives_as_the_files_bytes(tmp_path):
    data = tmp_path / "payload.bin"
    data.write_bytes(os.urandom(10 * 1000 + 123))  # ten 1000-byte chunks and a tail never sent
    path = tmp_path / "s.yaml"
    path.write_text("flows:\n - {name: f, size: 1032, rate: 100, payload: 'file:payload.bin', check_payload: true}\n")
    doc = scenario(tmp_path / "run", path, "--mw", "udp", "--duration", "1s", "--warmup", "100ms", "--no-floor",
                   "--no-solo")
    flow = doc["points"][0]["together"]["flows"]["f"]
    assert flow["payload"] == f"file:{data.resolve()}"
    (check,) = flow["payload_check"]
    assert flow["received"] == 100 and check == {"payload_matched": 100, "payload_mismatched": 0}
    assert doc["provenance"]["hostname"] and doc["provenance"]["agent"]


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
    flows = json.loads((out / "scenario.json").read_text())["points"][0]["together"]["flows"]
    assert flows["b"]["status"] == "failed" and "killed by SIGKILL" in flows["b"]["error"]
    assert flows["a"]["status"] == "ok" and flows["a"]["sent"] == 1000 and flows["a"]["lost"] == 0


def test_robot_mobile_preset(tmp_path):
    doc = scenario(tmp_path / "run", PLANS / "robot-mobile.yaml", "--mw", "cyclonedds", "--duration", "1s",
                   "--warmup", "200ms")
    (point,) = doc["points"]
    assert set(point["together"]["flows"]) == set(point["alone"]) == {"imu", "odometry", "tf", "lidar", "rgb",
                                                                       "depth", "cmd_vel"}
    assert not point["together"]["totals"]["failed"]
    assert (tmp_path / "run" / "scenario.html").read_text().count("<table>") >= 2  # the flows and the floor
