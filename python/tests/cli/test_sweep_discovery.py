"""A sweep plan with a discovery matrix in its ``also`` list, end to end with the real agent on loopback: its
points measured after the others into the same run directory (results.jsonl and discovery.jsonl), report.html
with both sections, the terminal's line, ``--resume`` that redoes none, ``mwperf report`` that gives both."""

import json
import subprocess
import sys

import pytest

from conftest import real_agent_path, written

PLAN = """\
mw: udp
mode: latency
size: 32
duration: 300ms
warmup: 100ms
launches: 1
also:
  - mode: discovery
    mw: cyclonedds
    participants: 2
    topics: 1
    discovery: unicast
    timeout: 10s
"""


def mwperf(*args):
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True, timeout=120)


@pytest.mark.e2e
@pytest.mark.side_by_side  # loopback, counts and statuses (no timing), its own run id and domain
def test_a_plans_discovery_point_goes_into_the_same_run_directory(tmp_path):
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    plan, out = tmp_path / "p.yaml", tmp_path / "run"
    plan.write_text(PLAN)
    dry = mwperf("sweep", str(plan), "--dry-run", "--agent", str(agent))
    assert dry.returncode == 0 and dry.stdout.endswith(
        "1 points\ncyclonedds participants=2 topics=1 participants-as=processes discovery=unicast\n"
        "1 discovery point(s)\n"), dry.stdout
    done = mwperf("sweep", str(plan), "--out", str(out), "--agent", str(agent), "--no-floor")
    assert done.returncode == 0, done.stderr[-2000:]
    (record,) = written(out)
    assert (record["mw"], record["status"]) == ("udp", "ok"), record["error"]
    (found,) = [json.loads(line) for line in (out / "discovery.jsonl").read_text().splitlines()]
    assert found["mw"] == "cyclonedds" and found["complete"] and found["remote_pairs"] == found["pairs_expected"] == 2
    assert "discovery: cyclonedds N=2 T=1 unicast ...\n" in done.stderr  # after the udp point's progress line
    assert done.stderr.index("udp latency 32 B ... ok") < done.stderr.index("discovery: cyclonedds")
    assert "discovery N=2 T=1 unicast loopback, ms to match / 1st sample: cyclonedds " in done.stdout
    html = (out / "report.html").read_text()
    assert '<section id="discovery"><h2>Discovery</h2>' in html and '<section id="tables">' in html
    assert "time to match / to the first sample (ms) vs N participants" in html and "udp" in html
    run = json.loads((out / "run.json").read_text())
    assert run["options"]["discovery"] == [{"mw": "cyclonedds", "participants": "2", "topics": "1",
                                            "discovery": "unicast", "timeout": "10s"}]
    again = mwperf("sweep", "--resume", str(out), "--agent", str(agent), "--no-floor")
    assert again.returncode == 0 and "nothing to resume" in again.stdout, again.stderr[-2000:]
    assert "discovery: cyclonedds" not in again.stderr  # measured already: not again
    assert len((out / "discovery.jsonl").read_text().splitlines()) == 1 and len(written(out)) == 1
    (out / "report.html").unlink()
    report = mwperf("report", str(out))
    assert report.returncode == 0, report.stderr[-2000:]
    html = (out / "report.html").read_text()
    assert '<section id="discovery">' in html and '<section id="tables">' in html
