"""`mwperf run` and `report` under what a careless or hostile environment
gives them (no git, an unencodable path or plan text, a hang-up), against the
fake agent: one line naming the fault, no traceback, nothing lost, nothing
left behind."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import pid_alive

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
    assert "git -<" in (out / "report.html").read_text()


def as_another_user(argv: list[str]) -> list[str]:
    """``argv`` run as nobody (uid 65534), able to read (not write) what root
    can, so that this interpreter and the tests' files stay reachable."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a command as another user")
    return ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=+dac_read_search",
            "--ambient-caps=+dac_read_search", *argv]


@pytest.fixture
def world_dir():
    """A folder outside the tests' own (which only root may search), every user's to write."""
    path = Path(tempfile.mkdtemp(prefix="mwperf-test-"))
    path.chmod(0o1777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_link_netns_as_another_user_is_refused_before_anything_runs(world_dir, fake_agent):
    agent = Path(shutil.copy(fake_agent, world_dir / "fake-agent"))
    out = world_dir / "run"
    done = subprocess.run(as_another_user([sys.executable, "-m", "mwperf", *RUN, "--size", "32,64", "--link", "netns",
                                           "--agent", str(agent), "--out", str(out)]),
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "FAKE_AGENT_LOG": str(world_dir / "log")})
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == ["mwperf: error: --link netns: needs root (network namespaces, tc, nft)"]
    assert not out.exists()  # no run directory, no point started
    assert not (world_dir / "log").exists()


def test_a_hang_up_ends_the_run_as_ctrl_c_does(tmp_path, fake_agent):
    """SIGHUP (the terminal or ssh session closed) to the controller's process
    group while a point hangs: exit 130, the first point kept, run.json
    'interrupted', no agent left, and nothing printed to the closed terminal
    raises."""
    log = tmp_path / "agents.log"
    out = tmp_path / "run"
    env = {**os.environ, "FAKE_AGENT_FAULT": "pub-hang-result", "FAKE_AGENT_FAULT_SIZE": "64",
           "FAKE_AGENT_LOG": str(log)}
    proc = subprocess.Popen([sys.executable, "-m", "mwperf", *RUN, "--size", "32,64", "--agent", str(fake_agent),
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while len(logged(log)) < 4 and time.monotonic() < deadline:  # the second point's two agents
            time.sleep(0.05)
        time.sleep(0.3)
        os.killpg(proc.pid, signal.SIGHUP)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert [json.loads(line)["size"] for line in (out / "results.jsonl").read_text().splitlines()] == [32]
    deadline = time.monotonic() + 5
    while any(pid_alive(p) for p in logged(log)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [p for p in logged(log) if pid_alive(p)], "agents left behind"


def logged(log: Path) -> list[int]:
    return [json.loads(line)["pid"] for line in log.read_text().splitlines()] if log.exists() else []
