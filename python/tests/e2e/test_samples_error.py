"""A samples file the agent cannot write (a directory where it goes): the run says so as a warning
naming the point and keeps the agent's reason in the record (samples_error); the figures are whole."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import agent_with

pytestmark = [pytest.mark.e2e, pytest.mark.side_by_side, pytest.mark.usefixtures("no_packet_leaves_loopback")]


def test_a_samples_file_that_cannot_be_written_is_a_warning_naming_the_point(tmp_path):
    agent = agent_with("udp")
    out = tmp_path / "run"
    (out / "samples" / "00000.i64").mkdir(parents=True)  # the agent's unlink of it fails: EISDIR
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--agent", agent, "--mw", "udp", "--mode", "latency",
                           "--size", "64", "--duration", "200ms", "--warmup", "0", "--launches", "1", "--no-floor",
                           "--db", "none", "--out", str(out)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert record["status"] == "ok" and record["latency_us"]["p50"] > 0 and record["samples_file"] is None
    assert record["samples_error"] == f"cannot write {out}/samples/00000.i64: Is a directory"
    warning = " ".join(done.stdout.split())  # the warning wraps at 100 columns
    assert (f"warning: point 0 (udp latency 64 B): no samples file (cannot write {out}/samples/00000.i64: Is a "
            "directory)") in warning, done.stdout
    assert "no samples file (warning at the end)" in done.stderr
