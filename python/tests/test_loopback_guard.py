"""The e2e guard of conftest.py counts this session's packets leaving a
non-loopback interface, and only those: unrelated traffic on the machine (a
package download, another test session) does not fail a test, a leak of the
project's own does.

The guard's table is tested in a network namespace made for the test, so
that its packets are seen by no other session's guard: there, a veth pair
takes the packets to 198.18.0.0/15 (the benchmarking range) and its peer
drops them (addressed to a MAC nobody has). Nothing leaves the namespace,
let alone the machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from conftest import LoopbackWatch, session_gid

SEND = ("import socket, sys\n"
        "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
        "for _ in range(int(sys.argv[2])):\n"
        "    s.sendto(b'mwperf-guard-test', (sys.argv[1], 9))\n")
TARGET = "198.18.0.2"

pytestmark = pytest.mark.measuring  # a namespace and nftables counters


def _run(*argv: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), capture_output=True, text=True, timeout=10, check=check)


@pytest.fixture
def netns():
    """A namespace whose only way out (but lo) is a veth pair to nowhere; removed after."""
    if os.geteuid() != 0 or shutil.which("ip") is None or shutil.which("nft") is None:
        pytest.skip("needs root, ip and nft")
    name = f"mwperf-guardtest-{os.getpid()}"
    _run("ip", "netns", "del", name, check=False)
    made = _run("ip", "netns", "add", name, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot make a network namespace: {made.stderr.strip()}")
    try:
        ns = ("ip", "netns", "exec", name)
        _run(*ns, "ip", "link", "add", "wa", "type", "veth", "peer", "name", "wb")
        _run(*ns, "ip", "link", "set", "wb", "address", "02:00:00:00:00:0b")
        _run(*ns, "ip", "addr", "add", "198.18.0.1/30", "dev", "wa")
        for dev in ("lo", "wa", "wb"):
            _run(*ns, "ip", "link", "set", dev, "up")
        _run(*ns, "ip", "neigh", "replace", TARGET, "lladdr", "02:00:00:00:00:99", "dev", "wa", "nud", "permanent")
        watch = LoopbackWatch(netns=name)
        watch.start()
        assert watch.reason is None, watch.reason
        yield name, watch
        watch.stop()
    finally:
        _run("ip", "netns", "del", name, check=False)


def _send(name: str, count: int, *, unrelated: bool = False) -> None:
    """``count`` datagrams out of the veth, from a process of this session or (unrelated) of another group."""
    kw = {"group": 0, "extra_groups": []} if unrelated else {}
    subprocess.run(["ip", "netns", "exec", name, sys.executable, "-c", SEND, TARGET, str(count)],
                   check=True, timeout=30, **kw)


def test_the_session_runs_under_its_own_group():
    if os.geteuid() != 0:
        pytest.skip("only root can take a group of its own")
    assert os.getegid() == session_gid()
    done = subprocess.run(["id", "-g"], capture_output=True, text=True, check=True)
    assert int(done.stdout) == session_gid()  # what the tests start inherits it


def test_unrelated_traffic_is_not_counted(netns):
    name, watch = netns
    _send(name, 25, unrelated=True)
    assert watch.packets() == 0


def test_a_leak_of_the_session_is_caught(netns):
    name, watch = netns
    _send(name, 3)  # as mwperf or an agent started by a test would
    assert watch.packets() == 3


def test_both_at_once_count_only_the_leak(netns):
    name, watch = netns
    _send(name, 40, unrelated=True)
    _send(name, 2)
    _send(name, 40, unrelated=True)
    assert watch.packets() == 2


def test_loopback_traffic_is_not_counted(netns):
    name, watch = netns
    subprocess.run(["ip", "netns", "exec", name, sys.executable, "-c", SEND, "127.0.0.1", "10"], check=True,
                   timeout=30)
    assert watch.packets() == 0
