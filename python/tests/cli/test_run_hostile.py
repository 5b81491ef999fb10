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

from conftest import FIXTURES, pid_alive

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
        left = [p for p in logged(log) if pid_alive(p)]
        time.sleep(0.5)
        for pid in left:  # a controller that died of the hang-up left them (the fake agent has no PDEATHSIG)
            if pid_alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert [json.loads(line)["size"] for line in (out / "results.jsonl").read_text().splitlines()] == [32]
    assert not left, "agents left behind"


def logged(log: Path) -> list[int]:
    return [json.loads(line)["pid"] for line in log.read_text().splitlines()] if log.exists() else []


def one_line(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    return done.stderr


def no_temporaries(folder: Path) -> None:
    assert not [p for p in folder.rglob("*") if p.name.endswith(".tmp")]


def test_a_path_that_is_no_utf8_is_one_line(tmp_path, fake_agent):
    out = os.fsencode(tmp_path) + b"/x\xff"
    done = subprocess.run([sys.executable, "-m", "mwperf", *RUN, "--agent", str(fake_agent), "--out", out],
                          capture_output=True, text=True, timeout=60)
    assert one_line(done) == (f"mwperf: error: b'{tmp_path}/x\\xff': not UTF-8 text (mwperf keeps its command line "
                              "and paths as UTF-8); rename it\n").replace("b'", "'")
    assert list(tmp_path.iterdir()) == [fake_agent]


PLAN = "description: \"\\ud800\"\nmw: udp\nsize: 32\nduration: 100ms\nwarmup: 0s\n"


def test_a_plan_text_that_is_no_unicode_is_one_line_and_leaves_nothing(tmp_path, fake_agent):
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN)
    out = tmp_path / "run"
    done = mwperf("sweep", str(plan), "--agent", str(fake_agent), "--out", str(out))
    assert one_line(done) == f"mwperf: error: {plan}: line 1: \\ud800: not valid Unicode text\n"
    assert not out.exists()
    out.mkdir()
    (out / "plan.yaml").write_text(PLAN)  # a sweep directory that holds such a plan
    done = mwperf("sweep", "--resume", str(out), "--agent", str(fake_agent))
    assert "line 1: \\ud800: not valid Unicode text" in one_line(done)
    no_temporaries(tmp_path)


def test_resume_over_a_run_json_and_a_record_that_are_no_unicode(tmp_path, fake_agent):
    out = tmp_path / "run"
    out.mkdir()
    (out / "plan.yaml").write_text(PLAN.replace('"\\ud800"', "fine"))
    (out / "run.json").write_text('{"status": "running", "hostname": "\\ud800"}')
    good = json.loads((FIXTURES / "results.jsonl").read_text().splitlines()[0])
    (out / "results.jsonl").write_text(json.dumps({**good, "transport": "\ud800"}) + "\n")
    done = mwperf("sweep", "--resume", str(out), "--agent", str(fake_agent))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "results.jsonl:1: not a JSON record (a lone surrogate" in done.stderr
    assert json.loads((out / "run.json").read_text())["status"] == "complete"
    no_temporaries(tmp_path)


def test_escape_codes_from_a_run_directory_never_reach_the_terminal(tmp_path):
    run = tmp_path / "evil\x1b]0;owned\x07"
    run.mkdir()
    records = [json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines()]
    for r in records:
        r["transport"] = "udp\x1b[2J"
        r["error"] = r["error"] and "boom\x1b[31m"
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run / "run.json").write_text(json.dumps({"status": "\x1b[5mrunning"}))
    for fmt in ("text", "md"):
        done = mwperf("report", str(run), "--format", fmt)
        assert done.returncode == 0, done.stderr
        assert "udp\\x1b[2J" in done.stdout and "\\x1b]0;owned\\x07" in done.stderr
        assert not set(done.stdout + done.stderr) & {"\x1b", "\x07"}
    done = mwperf("compare", str(run), str(run))
    assert done.returncode == 0 and "udp\\x1b[2J" in done.stdout and "\x1b" not in done.stdout, done.stderr
