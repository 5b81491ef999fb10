"""Data that does not belong to the run cannot change its numbers.

A local attacker who knows the run id (root can read it from the agents'
environment; nobody else can: it is not on their command line) sends the
subscriber datagrams with it: old sequence numbers (replays), send times from
before the run, from the future or just late, sequence numbers far past the
run's. None of them may enter the latency statistics or the counts: without
the run's key, which only the agents' stdin sees, no header's tag is right,
and each is counted as foreign. A client that connects to the TCP
subscriber's port first does not become its publisher.
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import pids_with_cmdline, real_agent_path
from conftest import written

pytestmark = pytest.mark.e2e

MAGIC = 0x4650574D
VERSION = 2
HEADER = struct.Struct("<IBB6sIQq")  # magic, version, flags, tag, size, seq, send_ns


#: The header before the tag: magic, version 1, flags, reserved, run id, size, seq, send_ns.
HEADER_V1 = struct.Struct("<IBBHIIQq")


def forged(size: int, seq: int, send_ns: int) -> bytes:
    """A header right in all but its tag (which needs the run's key), and its payload."""
    return HEADER.pack(MAGIC, VERSION, 0, os.urandom(6), size, seq, send_ns) + bytes(size - HEADER.size)


def forged_v1(run_id: int, size: int, seq: int, send_ns: int) -> bytes:
    """The same with the run id where the header once had it (what the agent took before the tag)."""
    return HEADER_V1.pack(MAGIC, 1, 0, 0, run_id, size, seq, send_ns) + bytes(size - HEADER_V1.size)


def agent() -> str:
    path = real_agent_path()
    if path is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    return str(path)


def start(out: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mwperf", "run", "--agent", agent(), *args, "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ))


def finish(proc: subprocess.Popen, out: Path) -> dict:
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0 and "Traceback" not in stderr, stderr
    (record,) = written(out)
    assert record["status"] == "ok", record["error"]
    return record


def the_sub(controller: subprocess.Popen, marker: str = "--role sub") -> int:
    """The subscriber agent of this controller (another session's agents may
    run on the machine meanwhile)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        pids = [p for p in pids_with_cmdline(marker) if descends_from(p, controller.pid)]
        if pids:
            return pids[0]
        time.sleep(0.02)
    raise AssertionError("no subscriber agent appeared")


def descends_from(pid: int, ancestor: int) -> bool:
    while pid > 1:
        if pid == ancestor:
            return True
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat.rsplit(")", 1)[1].split()[1])
    return False


def run_id_of(pid: int) -> int:
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    assert b"run-id" not in cmdline  # not where every user can read it
    env = dict(e.split(b"=", 1) for e in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0") if b"=" in e)
    return int(env[b"MWPERF_RUN_ID"])


def bound_ports(pid: int, proto: str) -> list[int]:
    """The subscriber's ports on 127.0.0.1, from the sockets its process holds
    (a udp subscriber has its data socket and the one it answers from)."""
    inodes = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        raise AssertionError(f"pid {pid} is gone") from None
    for fd in fds:
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    ports = []
    for line in Path(f"/proc/net/{proto}").read_text().splitlines()[1:]:
        fields = line.split()
        local, inode = fields[1], fields[9]
        if inode in inodes and local.startswith("0100007F:"):
            ports.append(int(local.split(":")[1], 16))
    if not ports:
        raise AssertionError(f"no {proto} socket of pid {pid} on 127.0.0.1")
    return ports


def bound_port(pid: int, proto: str) -> int:
    return bound_ports(pid, proto)[0]


@pytest.mark.skipif(os.geteuid() != 0, reason="reading another process's environment needs root")
def test_replayed_and_mistimed_datagrams_with_the_run_id_change_nothing(tmp_path):
    out = tmp_path / "run"
    proc = start(out, "--mw", "udp", "--mode", "rate", "--rate", "500", "--size", "64", "--duration", "2s",
                 "--warmup", "300ms")
    pid = the_sub(proc)
    time.sleep(0.6)  # the measured phase is on
    run_id, ports = run_id_of(pid), bound_ports(pid, "udp")
    now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    spoofs = []
    for form in (forged, lambda *a: forged_v1(run_id, *a)):
        for seq in range(0, 200):       # replays of samples already sent
            spoofs.append(form(64, seq, now - 10_000_000_000))
        for seq in range(10_000, 10_050):  # from before the run started (an hour ago)
            spoofs.append(form(64, seq, now - 3600 * 10**9))
        for seq in range(20_000, 20_050):  # from an hour in the future
            spoofs.append(form(64, seq, now + 3600 * 10**9))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for datagram in spoofs:  # to each of its sockets: the data socket is one of them
            for port in ports:
                s.sendto(datagram, ("127.0.0.1", port))
    r = finish(proc, out)
    assert r["sent"] == 1000 and r["received"] == 1000 and r["lost"] == 0
    assert r["foreign"] >= 600 and r["duplicates"] == 0, (r["foreign"], r["duplicates"])
    assert r["latency_us"]["count"] == 1000
    assert r["latency_us"]["max"] < 1e6  # not one spoofed stamp (10 s, an hour) entered the statistics


@pytest.mark.skipif(os.geteuid() != 0, reason="reading another process's environment needs root")
def test_late_datagrams_far_past_the_run_never_count(tmp_path):
    """The probe of issue 27: datagrams with the run id (read from the
    environment as root), sequence numbers from 10^9 on, stamped 300 ms late,
    beside a 100 Hz run: before, received 663 > sent 200 and p50 300 ms, ok."""
    out = tmp_path / "run"
    proc = start(out, "--mw", "udp", "--mode", "rate", "--rate", "100", "--size", "64", "--duration", "2s",
                 "--warmup", "300ms")
    pid = the_sub(proc)
    time.sleep(0.6)
    run_id, ports = run_id_of(pid), bound_ports(pid, "udp")  # known to the attacker: not enough
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for seq in range(10**9, 10**9 + 500):
            now = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
            for datagram in (forged(64, seq, now - 300_000_000), forged_v1(run_id, 64, seq, now - 300_000_000)):
                for port in ports:
                    s.sendto(datagram, ("127.0.0.1", port))
            time.sleep(0.002)
    r = finish(proc, out)
    assert r["sent"] == r["received"] == 200 and r["lost"] == 0
    assert r["foreign"] >= 1000
    assert r["latency_us"]["count"] == 200 and r["latency_us"]["max"] < 100_000


def test_a_stranger_connecting_first_does_not_become_the_publisher(tmp_path):
    out = tmp_path / "run"
    proc = start(out, "--mw", "tcp", "--mode", "rate", "--rate", "200", "--size", "64", "--duration", "1s",
                 "--warmup", "300ms")
    pid = the_sub(proc)
    port = None
    deadline = time.monotonic() + 10
    while port is None and time.monotonic() < deadline:
        try:
            port = bound_port(pid, "tcp")
        except AssertionError:
            time.sleep(0.01)
    assert port is not None
    strangers = []
    for payload in (b"", b"GET / HTTP/1.0\r\n\r\n"):
        try:
            c = socket.create_connection(("127.0.0.1", port), timeout=2)
            c.sendall(payload)
            strangers.append(c)
        except OSError:
            pass  # the publisher was quicker: nothing to prove with this one
    r = finish(proc, out)
    for c in strangers:
        c.close()
    assert r["received"] == r["sent"] == 200 and r["lost"] == 0
    refused = r["adapter"]["sub_config"]["refused_connections"]
    # A stranger that connected after the publisher is never accepted (the subscriber stopped listening)
    # and so never counted as refused: at most every stranger is, never more (it failed 1 in 4 as '==').
    assert 0 <= refused <= len(strangers), (refused, len(strangers))
