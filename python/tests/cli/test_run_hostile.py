"""`mwperf run` and `report` under what a careless or hostile environment
gives them (no git, an unencodable path or plan text, a hang-up), against the
fake agent: one line naming the fault, no traceback, nothing lost, nothing
left behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

RUN = ["run", "--mw", "udp", "--size", "32", "--duration", "100ms", "--warmup", "0"]


def mwperf(*args: str, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **(env or {})})


def test_a_run_without_git_information_writes_its_report(tmp_path, fake_agent):
    """GIT_DIR pointing nowhere (as an installed copy, or another user's
    checkout git refuses): run.json's git is null, the report is written."""
    out = tmp_path / "run"
    done = mwperf(*RUN, "--agent", str(fake_agent), "--out", str(out), env={"GIT_DIR": "/nonexistent"})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert json.loads((out / "run.json").read_text())["git"] is None
    assert (out / "report.html").is_file()
    (out / "report.html").unlink()
    done = mwperf("report", str(out))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "git unknown" in (out / "report.html").read_text()
