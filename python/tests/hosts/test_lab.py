"""The tests' far hosts (far_hosts.py) take down what they set up, and what a crashed lab left is removed by the
next: its namespaces (and their processes), directories and binfmt entry, never a live lab's."""

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

import far_hosts

pytestmark = [pytest.mark.side_by_side, pytest.mark.xdist_group("far-hosts")]


def _dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.mark.skipif(far_hosts.possible() is not None, reason="needs root and the lab's tools")
def test_a_crashed_labs_leftovers_go_and_a_live_ones_stay():
    dead, live = _dead_pid(), os.getpid()
    names = [f"{far_hosts.PREFIX}{dead}-lab", f"{far_hosts.PREFIX}{live}-x"]
    dirs = [Path(tempfile.mkdtemp(prefix=f"{far_hosts.DIR_PREFIX}{pid}-")) for pid in (dead, live)]
    try:
        for ns in names:
            subprocess.run(["ip", "netns", "add", ns], check=True)
        sleeper = subprocess.Popen(["ip", "netns", "exec", names[0], "sleep", "60"])  # a crashed lab's host
        removed = far_hosts.remove_leftovers()
        assert names[0] in removed and str(dirs[0]) in removed and sleeper.wait(timeout=10) == -9
        listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
        assert names[0] not in listed and names[1] in listed
        assert not dirs[0].exists() and dirs[1].exists()
    finally:
        for ns in names:
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)
        for d in dirs:
            subprocess.run(["rm", "-rf", str(d)])


def test_the_lab_leaves_nothing(lab):
    """What the session's lab is made of exists while it runs (closed by the session's end: checked here on a
    second lab of its own, built and closed)."""
    second = far_hosts.build(("x86_64",), tag="b")
    made = [second.netns, *(h.netns for h in second.hosts.values())]
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert all(ns in listed for ns in made) and second.dir.exists()
    init = second.hosts["x86_64"].init_pid()
    second.close()
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(ns in listed for ns in made) and not second.dir.exists()
    assert not Path(f"/proc/{init}").exists()
