"""Data that does not belong to the run cannot change its numbers.

A local attacker who knows the run id (root can read it from the agents'
environment; nobody else can: it is not on their command line) sends the
subscriber datagrams with it: old sequence numbers (replays), send times from
before the run or from the future. None of them may enter the latency
statistics or the counts; all are counted as foreign or duplicate. A client
that connects to the TCP subscriber's port first does not become its
publisher.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import pids_with_cmdline, real_agent_path
from mwperf.results.rundir import read_records

pytestmark = pytest.mark.e2e

MAGIC = 0x4650574D
HEADER = struct.Struct("<IBBHIIQq")  # magic, version, flags, reserved, run id, size, seq, send_ns


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
    (record,) = read_records(out)
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
    for seq in range(0, 200):       # replays of samples already sent: duplicates, never measured twice
        spoofs.append(HEADER.pack(MAGIC, 1, 0, 0, run_id, 64, seq, now - 10_000_000_000) + bytes(32))
    for seq in range(10_000, 10_050):  # from before the run started (an hour ago)
        spoofs.append(HEADER.pack(MAGIC, 1, 0, 0, run_id, 64, seq, now - 3600 * 10**9) + bytes(32))
    for seq in range(20_000, 20_050):  # from an hour in the future
        spoofs.append(HEADER.pack(MAGIC, 1, 0, 0, run_id, 64, seq, now + 3600 * 10**9) + bytes(32))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for datagram in spoofs:  # to each of its sockets: the data socket is one of them
            for port in ports:
                s.sendto(datagram, ("127.0.0.1", port))
    r = finish(proc, out)
    assert r["sent"] == 1000 and r["received"] == 1000 and r["lost"] == 0
    # the 100 mistimed ones are foreign; the 200 replays are foreign (before the stamp check) or duplicates
    assert r["foreign"] >= 100 and r["foreign"] + r["duplicates"] >= 300 - 1, (r["foreign"], r["duplicates"])
    assert r["latency_us"]["count"] == 1000
    assert r["latency_us"]["max"] < 1e6  # not one spoofed stamp (10 s, an hour) entered the statistics


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
    assert refused == len(strangers) or (refused == 0 and not strangers), (refused, len(strangers))
