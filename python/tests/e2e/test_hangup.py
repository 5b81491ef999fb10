"""A hang-up (the terminal or ssh session that started mwperf closed) ends a
run as Ctrl-C does: the namespaces and their nft tables, RouDi, the agents
and the shared memory go, and run.json says 'interrupted'."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import leftover_segments, pid_alive, pids_with_cmdline, real_agent_path, shm_segments
from mwperf.execute.agent import describe

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_packet_leaves_loopback")]


def descendants(root: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        while pid > 1:
            try:
                pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                break
            if pid == root:
                found.append(int(entry))
                break
    return found


def namespaces_of(pid: int) -> list[str]:
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.startswith(f"mwperf-{pid}-")]


@pytest.mark.parametrize("mw, where", [("udp", ["--link", "netns:lossy:5%"]), ("iceoryx", [])])
def test_a_hang_up_takes_down_what_the_point_set_up(tmp_path, mw, where):
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    if mw not in describe(str(agent)).adapters:
        pytest.skip(f"{mw} is not built")
    if where and os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    out = tmp_path / "run"
    before = shm_segments()
    proc = subprocess.Popen([sys.executable, "-m", "mwperf", "run", "--agent", str(agent), "--mw", mw, *where,
                             "--mode", "rate", "--rate", "100", "--duration", "20s", "--warmup", "0",
                             "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not any("--role pub" in _cmdline(p) for p in descendants(proc.pid)):
            time.sleep(0.1)
        time.sleep(0.5)
        mine = descendants(proc.pid)
        assert any("--role pub" in _cmdline(p) for p in mine), "the point did not start"
        if where:
            assert namespaces_of(proc.pid), "no namespace while the point runs"
        else:
            assert any("iox-roudi" in _cmdline(p) for p in mine), "no RouDi while the point runs"
        os.killpg(proc.pid, signal.SIGHUP)  # what the terminal's closing sends its foreground group
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert json.loads((out / "run.json").read_text())["status"] == "interrupted"
    assert not namespaces_of(proc.pid)
    deadline = time.monotonic() + 5
    while [p for p in mine if pid_alive(p)] and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [_cmdline(p) for p in mine if pid_alive(p)], "processes of the run left behind"
    assert not pids_with_cmdline("iox-roudi")
    assert not leftover_segments(before)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
