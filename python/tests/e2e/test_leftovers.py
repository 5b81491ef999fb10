"""What a killed run leaves, removed by ``mwperf doctor --cleanup``: exactly
that, and nothing else. Each test kills a real run (SIGKILL to the
controller and to its agents, mid-point), takes what appeared meanwhile as
the ground truth of what it left, and plants files of its own that must stay.

- zenoh: its shared-memory segments (/dev/shm/*.zenoh), removed even when
  the clean-up comes within a second of their making (no age guard: a
  segment nobody maps nor locks is stale), and after a point shorter than
  a second;
- iceoryx: a RouDi of a controller run under another group leaves its data
  segment /dev/shm/<that group>, which goes, though the cleaner's group differs
  (and the group no longer exists);
- ros2: its Fast DDS profile (/tmp/mwperf-ros2-*) goes while an agent runs
  meanwhile (a live agent holds its own open);
- ``mwperf-agent cleanup`` makes no file of its own (loading ROS 2's libraries
  made LTTng-UST's wait segments, the ones the clean-up removes).
"""

from __future__ import annotations

import fcntl
import grp
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import agent_with, made_by_session, pid_alive, session_gid
from mwperf.execute.services import RouDi, _pids_named

pytestmark = pytest.mark.e2e

SHM = Path("/dev/shm")


def zenoh_segments() -> set[str]:
    return {n for n in os.listdir(SHM) if n.endswith(".zenoh")}


def start_run(agent: str, out: Path, *args: str, preexec=None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mwperf", "run", "--agent", agent, *args, "--duration", "30s",
                             "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ), preexec_fn=preexec)


def wait_for(what, timeout: float = 60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = what()
        if found:
            return found
        time.sleep(0.05)
    return what()


def run_pids(out: Path) -> list[int]:
    """The live agents of the run writing to ``out`` (their --samples-out is
    under it: no other run's), whatever group they run under."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError):
            continue
        if f"{out}/" in cmdline and pid_alive(int(entry)):
            found.append(int(entry))
    return found


def kill_run(proc: subprocess.Popen, out: Path) -> None:
    """SIGKILL to the controller, then to its agents."""
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    for pid in run_pids(out):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def doctor_cleanup(agent: str) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "mwperf", "doctor", "--cleanup", "--agent", agent],
                          capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done


def test_zenoh_segments_of_a_killed_run_go_at_once(tmp_path):
    agent = agent_with("zenoh")
    # a live holder's segment (as zenoh holds one: open, a shared flock), which must stay
    live = SHM / f"{4_000_000_000 + os.getpid()}.zenoh"
    live.write_bytes(b"\0" * 4096)
    holder = open(live, "rb")
    fcntl.flock(holder.fileno(), fcntl.LOCK_SH)
    before = zenoh_segments()
    out = tmp_path / "killed"
    try:
        proc = start_run(agent, out, "--mw", "zenoh", "--transport", "shm", "--mode", "rate", "--rate", "200")
        assert wait_for(lambda: zenoh_segments() - before), "the zenoh run made no segment"
        assert wait_for(lambda: len(run_pids(out)) >= 2)
        kill_run(proc, out)
        left = zenoh_segments() - before  # everything it made
        done = doctor_cleanup(agent)  # at once: some segments are younger than a second
        assert not (zenoh_segments() & left), (done.stdout, zenoh_segments() & left)
        assert live.exists()
    finally:
        holder.close()
        live.unlink(missing_ok=True)


@pytest.mark.side_by_side  # no clean-up: of the segments, those of this session's processes (their group)
def test_a_zenoh_point_shorter_than_a_second_leaves_no_segment(tmp_path):
    agent = agent_with("zenoh")
    before = zenoh_segments()
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--agent", agent, "--mw", "zenoh", "--transport",
                           "shm", "--mode", "rate", "--rate", "200", "--duration", "200ms", "--warmup", "100ms",
                           "--out", str(tmp_path / "run")], capture_output=True, text=True, env=dict(os.environ),
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert {n for n in zenoh_segments() - before if made_by_session(SHM / n)} == set()


@pytest.mark.skipif(os.geteuid() != 0, reason="runs a controller under a group of its own (root: groupadd, setgid)")
def test_the_roudi_segment_of_another_groups_killed_run_goes(tmp_path):
    agent = agent_with("iceoryx")
    if shutil.which("iox-roudi") is None:
        pytest.skip("iox-roudi is not installed")
    if _pids_named("iox-roudi"):
        pytest.skip("a RouDi runs on this machine (one per machine)")
    group, gid = f"mwperf-t{os.getpid()}-other", session_gid() + 1  # not the session's: another user's run
    subprocess.run(["groupadd", "-g", str(gid), "-U", "root", group], check=True, capture_output=True)
    decoy = SHM / f"mwperf-t{os.getpid()}-decoy"  # a segment named like a group, of nobody's RouDi
    decoy.write_bytes(b"x")
    out = tmp_path / "killed"
    roudi = []
    try:
        proc = start_run(agent, out, "--mw", "iceoryx", "--mode", "rate", "--rate", "200",
                         preexec=lambda: os.setgid(gid))
        assert wait_for(lambda: (SHM / group).exists()), "RouDi made no segment named after the run's group"
        assert wait_for(lambda: len(run_pids(out)) >= 2, timeout=30)
        kill_run(proc, out)
        roudi = _pids_named("iox-roudi")
        assert roudi, "RouDi went with its controller: nothing left to clean"
        subprocess.run(["groupdel", group], capture_output=True)  # gone since, as a test session's group goes
        assert grp.getgrgid(os.getgid()).gr_name != group
        doctor_cleanup(agent)
        assert not (SHM / group).exists() and not (SHM / "iceoryx_mgmt").exists()
        assert not [pid for pid in _pids_named("iox-roudi") if pid_alive(pid)]
        assert decoy.exists()
    finally:
        for pid in roudi:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        RouDi.clean_stale()  # whatever a failure left (its controller is gone)
        decoy.unlink(missing_ok=True)
        (SHM / group).unlink(missing_ok=True)
        subprocess.run(["groupdel", group], capture_output=True)


def ros2_profiles() -> set[str]:
    return {n for n in os.listdir("/tmp") if n.startswith("mwperf-ros2-")}


def test_the_ros2_profile_of_a_killed_run_goes_while_an_agent_runs(tmp_path):
    agent = agent_with("ros2")
    before = ros2_profiles()
    out = tmp_path / "killed"
    proc = start_run(agent, out, "--mw", "ros2", "--mode", "rate", "--rate", "200")
    # an agent that runs meanwhile (another run, a unit test): by its program's name, as the clean-up looks
    other = subprocess.Popen(["bash", "-c", "exec -a mwperf-agent-meanwhile sleep 60"])
    try:
        assert wait_for(lambda: ros2_profiles() - before), "the ros2 run wrote no profile"
        assert wait_for(lambda: len(run_pids(out)) >= 2, timeout=60)
        kill_run(proc, out)
        left = ros2_profiles() - before
        assert left
        doctor_cleanup(agent)
        assert not (ros2_profiles() & left), ros2_profiles() & left
    finally:
        other.kill()
        other.wait()
        for name in ros2_profiles() - before:
            Path("/tmp", name).unlink(missing_ok=True)


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                    reason="a /dev/shm of the test's own: a mount namespace (root, unshare)")
def test_the_agents_cleanup_makes_nothing_in_dev_shm():
    """In a mount namespace with an empty /dev/shm of its own: ``list`` (which
    loads the ros2 plugin) makes LTTng-UST's wait segments there, which shows
    they would be seen; ``cleanup`` must make nothing."""
    agent = agent_with("ros2")

    def made_by(command: str) -> list[str]:
        done = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c",
                               f"mount -t tmpfs mwperf-test /dev/shm && {agent} {command} >/dev/null && ls -A /dev/shm"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()

    assert any(n.startswith("lttng-ust-wait-") for n in made_by("list"))
    assert made_by("cleanup") == []
