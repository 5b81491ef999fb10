"""One writer per run directory, one measurement per machine (issue 17, item 4):
a second writer is refused with the owner named, a lock left by a dead
process is taken over, a measurement is refused while another mwperf
measurement holds the machine unless --force."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import real_agent_path
from mwperf.errors import Busy, StorageError
from mwperf.execute import lock
from mwperf.results.rundir import LOCK_FILE, RunDir

HOLDER = """\
import sys, time
from mwperf.execute.lock import hold
with hold(sys.argv[1], measure=sys.argv[2] == "measure", cores="0,1", argv=["mwperf", "holder", "test"]):
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.fixture
def lock_dir(tmp_path, monkeypatch):
    path = tmp_path / "machine"
    monkeypatch.setenv(lock.ENV_LOCK_DIR, str(path))
    return path


@pytest.fixture
def holder(tmp_path, lock_dir):
    """Start a process that holds the locks of a directory; yields start(dir, measure) -> Popen."""
    procs: list[subprocess.Popen] = []

    def start(directory: Path, measure: bool = True) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(directory), "measure" if measure else "-"],
                                stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        assert proc.stdout.readline() == "held\n"
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


def test_the_lock_names_its_owner_and_goes_with_it(tmp_path, lock_dir):
    run = tmp_path / "run"
    with lock.hold(run, cores="0,1", argv=["mwperf", "sweep", "p.yaml"]) as held:
        assert held.machine == "held"
        info = json.loads((run / LOCK_FILE).read_text())
        assert info["pid"] == os.getpid() and info["command"] == "mwperf sweep p.yaml" and info["cores"] == "0,1"
        assert json.loads((lock_dir / lock.MACHINE_LOCK).read_text())["pid"] == os.getpid()
    assert not (run / LOCK_FILE).exists() and not (lock_dir / lock.MACHINE_LOCK).exists()


def test_a_second_writer_is_refused_with_the_owner_named(tmp_path, holder):
    run = tmp_path / "run"
    proc = holder(run, measure=False)
    with pytest.raises(Busy) as caught:
        with lock.hold(run, measure=False):
            pass  # pragma: no cover
    message = str(caught.value)
    assert f"another mwperf is writing this run directory (pid {proc.pid}, mwperf holder test" in message
    assert json.loads((run / LOCK_FILE).read_text())["pid"] == proc.pid  # the owner's lock is untouched


def test_a_lock_of_a_killed_writer_is_taken_over(tmp_path, holder):
    run = tmp_path / "run"
    proc = holder(run, measure=True)
    (run / "run.json.tmp").write_text("{half")
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert (run / LOCK_FILE).exists()  # a killed process cannot remove it
    err = io.StringIO()
    with lock.hold(run, err=err):
        assert json.loads((run / LOCK_FILE).read_text())["pid"] == os.getpid()
    notes = err.getvalue()
    assert f"taking over the lock of a run that is gone (pid {proc.pid}, mwperf holder test" in notes
    assert "removed run.json.tmp left by a killed run" in notes
    assert not (run / "run.json.tmp").exists() and not (run / LOCK_FILE).exists()


def test_a_stale_lock_file_from_another_boot_is_taken_over(tmp_path, lock_dir):
    run = tmp_path / "run"
    run.mkdir()
    (run / LOCK_FILE).write_text(json.dumps({"pid": os.getpid(), "start": 1, "host": os.uname().nodename,
                                             "command": "mwperf sweep old.yaml"}))
    err = io.StringIO()
    with lock.hold(run, measure=False, err=err):  # the pid is alive, but it is not the same process
        pass
    assert "taking over the lock of a run that is gone" in err.getvalue()


def test_a_measurement_is_refused_while_another_holds_the_machine(tmp_path, holder):
    proc = holder(tmp_path / "theirs", measure=True)
    with pytest.raises(Busy) as caught:
        with lock.hold(tmp_path / "mine"):
            pass  # pragma: no cover
    message = str(caught.value)
    assert message.startswith(f"another mwperf measurement holds this machine's benchmark cores (pid {proc.pid}, "
                              f"mwperf holder test, cores 0,1, since ")
    assert "two benchmarks on one machine make both wrong" in message and "--force" in message
    assert not (tmp_path / "mine" / LOCK_FILE).exists()  # refused: nothing of it is left
    err = io.StringIO()
    with lock.hold(tmp_path / "mine", force=True, err=err) as held:
        pass
    assert f"measuring beside another mwperf measurement (pid {proc.pid}" in err.getvalue()
    assert held.machine.startswith(f"forced: measured beside another mwperf measurement (pid {proc.pid}, ")
    with lock.hold(tmp_path / "mine", measure=False) as held:  # agents elsewhere (--hosts): only the directory
        pass
    assert held.machine == "not taken: the agents run on other hosts"


def test_a_symlink_planted_as_the_lock_file_is_not_followed(tmp_path, lock_dir):
    target = tmp_path / "precious"
    target.write_text("keep me\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / LOCK_FILE).symlink_to(target)
    with pytest.raises(StorageError):
        with lock.hold(run):
            pass  # pragma: no cover
    assert target.read_text() == "keep me\n"


def test_where_the_machine_lock_is(monkeypatch, tmp_path):
    monkeypatch.setenv(lock.ENV_LOCK_DIR, str(tmp_path))
    assert lock.machine_lock_path() == tmp_path / lock.MACHINE_LOCK
    monkeypatch.delenv(lock.ENV_LOCK_DIR)
    assert lock.machine_lock_path().name == lock.MACHINE_LOCK


def test_the_suite_measures_under_a_lock_of_its_own(own_measurement_lock):
    """conftest points MWPERF_LOCK_DIR at the session's own directory: the
    suite neither waits for a user's benchmark nor is refused by one."""
    assert os.environ[lock.ENV_LOCK_DIR] == str(own_measurement_lock)
    assert lock.machine_lock_path().parent == own_measurement_lock


# -- end to end -------------------------------------------------------------------------------

PLAN = """\
mw: udp
mode: latency
size: [32, 64, 128, 256, 512, 1k]
duration: 500ms
warmup: 0s
"""


def agent_or_skip() -> str:
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    return str(agent)


def mwperf(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mwperf", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, **kw)


def wait_for_records(run: Path, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (run / "results.jsonl").exists() and len((run / "results.jsonl").read_text().splitlines()) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{count} record(s) did not appear in {run}")


# Apart (not side_by_side), as the next: the refused mwperf must reach the lock before the holder's
# remaining points are done, a race of start-up time that a loaded machine can lose.
@pytest.mark.e2e
@pytest.mark.usefixtures("no_packet_leaves_loopback")
def test_two_resumes_at_once_one_is_refused_and_every_point_is_measured_once(tmp_path):
    agent = agent_or_skip()
    run = tmp_path / "run"
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN)
    first = mwperf("sweep", str(plan), "--out", str(run), "--agent", agent)
    wait_for_records(run, 1)
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=60)
    resume = mwperf("sweep", "--resume", str(run), "--agent", agent)
    wait_for_records(run, 2)
    second = mwperf("sweep", "--resume", str(run), "--agent", agent)
    out, err = second.communicate(timeout=60)
    assert second.returncode == 2, err
    assert err == (f"mwperf: error: {run}: another mwperf is writing this run directory (pid {resume.pid}, "
                   f"mwperf sweep --resume {run} --agent {agent}, since {err.split('since ')[1].split(')')[0]}); "
                   f"wait for it to finish, or stop it\n")
    out, err = resume.communicate(timeout=120)
    assert resume.returncode == 0, err
    records = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert sorted(r["size"] for r in records) == [32, 64, 128, 256, 512, 1024]
    assert len({r["point_key"] for r in records}) == 6
    assert not (run / LOCK_FILE).exists()


@pytest.mark.e2e
@pytest.mark.usefixtures("no_packet_leaves_loopback")
def test_a_run_is_refused_while_a_sweep_measures_unless_forced(tmp_path):
    agent = agent_or_skip()
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN)
    sweep = mwperf("sweep", str(plan), "--out", str(tmp_path / "sweep"), "--agent", agent)
    try:
        wait_for_records(tmp_path / "sweep", 1)
        run = subprocess.run([sys.executable, "-m", "mwperf", "run", "--mw", "udp", "--duration", "200ms",
                              "--warmup", "0s", "--out", str(tmp_path / "run"), "--agent", agent],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 2, run.stderr
        assert run.stderr.startswith(f"mwperf: error: another mwperf measurement holds this machine's benchmark "
                                     f"cores (pid {sweep.pid}, mwperf sweep {plan} --out ")
        assert not (tmp_path / "run" / "results.jsonl").exists()
        forced = subprocess.run([sys.executable, "-m", "mwperf", "run", "--mw", "udp", "--duration", "200ms",
                                 "--warmup", "0s", "--out", str(tmp_path / "run"), "--agent", agent, "--force"],
                                capture_output=True, text=True, timeout=60)
        assert forced.returncode == 0, forced.stderr
        assert f"measuring beside another mwperf measurement (pid {sweep.pid}" in forced.stderr
        run_json = json.loads((tmp_path / "run" / "run.json").read_text())  # the run says so itself
        assert run_json["machine_lock"].startswith(f"forced: measured beside another mwperf measurement "
                                                   f"(pid {sweep.pid}, mwperf sweep ")
    finally:
        out, err = sweep.communicate(timeout=120)
    assert sweep.returncode == 0, err


@pytest.mark.e2e
@pytest.mark.side_by_side  # no race: the controller is killed, then read and resumed
@pytest.mark.usefixtures("no_packet_leaves_loopback")
def test_a_killed_controller_leaves_a_run_that_reads_as_killed_and_resumes(tmp_path):
    agent = agent_or_skip()
    run = tmp_path / "run"
    plan = tmp_path / "plan.yaml"
    plan.write_text(PLAN)
    sweep = mwperf("sweep", str(plan), "--out", str(run), "--agent", agent)
    wait_for_records(run, 1)
    sweep.kill()
    sweep.communicate(timeout=30)
    assert json.loads((run / "run.json").read_text())["status"] == "running"  # nobody could say otherwise
    assert RunDir(run).read_run_json()["status"] == "killed"
    report = subprocess.run([sys.executable, "-m", "mwperf", "report", str(run)], capture_output=True, text=True,
                            timeout=60)
    assert "this run is 'killed'" in report.stderr
    resume = subprocess.run([sys.executable, "-m", "mwperf", "sweep", "--resume", str(run), "--agent", agent],
                            capture_output=True, text=True, timeout=120)
    assert resume.returncode == 0, resume.stderr
    assert "taking over the lock of a run that is gone" in resume.stderr
    assert json.loads((run / "run.json").read_text())["status"] == "complete"
    assert len((run / "results.jsonl").read_text().splitlines()) == 6
