"""A scenario point's flows (execute/scenario.py) against the fake agent:
a subscriber that counts more samples than its flow's publishers sent, or
sequence numbers past what they sent, fails its flow (issue 27 item 4:
spoofed datagrams flag the point, a scenario's flows as a run's points)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

SCENARIO = "flows:\n - {name: a, size: 64, rate: 100}\n - {name: b, size: 128, rate: 50, publishers: 2}\n"


def scenario(tmp_path, fake_agent, fault: str | None) -> tuple[subprocess.CompletedProcess, dict]:
    path, out = tmp_path / "s.yaml", tmp_path / "run"
    path.write_text(SCENARIO)
    env = {k: v for k, v in os.environ.items() if k != "FAKE_AGENT_FAULT"}
    if fault:
        env["FAKE_AGENT_FAULT"] = fault
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--agent", str(fake_agent), "--scenario", str(path),
                           "--mw", "udp", "--duration", "200ms", "--warmup", "0", "--no-floor", "--no-solo",
                           "--out", str(out)], capture_output=True, text=True, timeout=120, env=env)
    assert "Traceback" not in done.stderr, done.stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert all(r["scenario"]["together"] for r in records), "--no-solo: the flows together only"
    return done, {r["scenario"]["flow"]: r for r in records}


@pytest.mark.parametrize("fault, error", [
    ("sub-spoofed", "received {received} samples of {sent} sent"),
    ("sub-spoofed-seq", "a sequence number 1000000000 past the {sent} sent"),
], ids=["received", "sequence-numbers"])
def test_more_received_than_sent_fails_the_flow(tmp_path, fake_agent, fault, error):
    done, flows = scenario(tmp_path, fake_agent, fault)
    assert done.returncode == 1, done.stdout + done.stderr
    # the fake agent's publishers send 1000 samples each: flow b's two, 2000
    for name, sent in (("a", 1000), ("b", 2000)):
        flow = flows[name]
        assert flow["status"] == "failed", flow
        expected = error.format(received=sent + 463, sent=sent if "sequence" not in error else 1000)
        assert flow["error"] == (f"{name}.sub0: {expected}: messages that are not this publisher's reached it "
                                 "(spoofed?); its numbers are not trusted")


def test_what_was_sent_passes(tmp_path, fake_agent):
    done, flows = scenario(tmp_path, fake_agent, None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert {n: (f["status"], f["sent"], f["received"]) for n, f in flows.items()} == {
        "a": ("ok", 1000, 1000), "b": ("ok", 2000, 2000)}
