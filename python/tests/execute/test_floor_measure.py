"""The floor against ground truth the tests set up, with the real agent
(skipped while it is not built; run under the measurement lock):

* the machine's wake-up cost, measured by the agent's own wake-up probe (two
  threads, eventfds) on one core and across two, shows up in the futex
  ping-pong between two processes, and not in the spinning one;
* memcpy at 63000 B copies faster than loopback UDP carries (iperf3);
* a peer the test stops (SIGSTOP) fails the floor with that reason in
  bounded time, and nothing of it is left.

And, without an agent: which floors a run's points need, and their budget.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time

import pytest

from dataclasses import replace

from conftest import described, pid_alive, real_agent_path, run_request
from mwperf.execute.agent import wakeup
from mwperf.execute.floor import MAX_TOTAL_S, MIN_BUDGET_S, budget_for, groups_of, measure_one
from mwperf.plan.options import CpuPlacement, PlannedPoint
from mwperf.plan.validate import build_run_options
from mwperf.plan.where import HostPair

SAME, CROSS = CpuPlacement(0, 0), CpuPlacement(0, 1)


def agent() -> str:
    path = real_agent_path()
    if path is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    return str(path)


def two_cpus() -> None:
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two CPUs")


def shm_rtt_p50(cpu: CpuPlacement, wait: str, size: int = 64) -> float:
    floor = measure_one(agent(), cpu, wait, [size], budget_s=0.2, kinds=("shm",))
    assert floor["error"] is None, floor["error"]
    (shm,) = [e for e in floor["entries"] if e["kind"] == "shm"]
    assert shm["method"] == ("futex" if wait == "block" else "spin")
    return shm["rtt_us"]["p50"]


@pytest.mark.e2e
def test_the_wakeup_cost_shows_in_the_futex_pingpong_and_not_in_the_spinning_one():
    """The wake-up probe (threads, eventfd) and the futex ping-pong (processes,
    shared memory) are two mechanisms; what a cross-core wake-up adds must be
    the same in both. Up to three tries: other work on a 2-vCPU machine can
    take a core away for milliseconds."""
    two_cpus()
    tries = []
    for _ in range(3):
        probe = {cpu: wakeup(agent(), (cpu.pub, cpu.sub))["rtt_ns"]["p50"] / 1000 for cpu in (SAME, CROSS)}
        cost = probe[CROSS] - probe[SAME]
        if cost < 10:
            pytest.skip(f"this machine wakes a thread on another core in about the same time ({probe}); "
                        "no asymmetry to find")
        futex = {cpu: shm_rtt_p50(cpu, "block") for cpu in (SAME, CROSS)}
        spin = shm_rtt_p50(CROSS, "spin")
        tries.append((probe, futex, spin))
        if 0.5 * cost < futex[CROSS] - futex[SAME] < 2 * cost and spin < probe[CROSS] / 4:
            return
    pytest.fail(f"(probe RTT p50, futex RTT p50, spin cross-core RTT p50) in us per try: {tries}")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.e2e
def test_memcpy_at_63000_bytes_beats_what_loopback_udp_carries():
    if shutil.which("iperf3") is None:
        pytest.skip("iperf3 is not installed")
    two_cpus()
    port = str(free_port())
    server = subprocess.Popen(["iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", port],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        client = subprocess.run(["iperf3", "-c", "127.0.0.1", "-p", port, "-u", "-b", "0", "-l", "63000", "-t", "1",
                                 "-J", "-A", "0,1"], capture_output=True, text=True, timeout=30)
    finally:
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    udp_gbps = json.loads(client.stdout)["end"]["sum"]["bits_per_second"] / 1e9
    floor = measure_one(agent(), CROSS, "block", [63000], budget_s=0.1, kinds=("memcpy",))
    (memcpy,) = [e for e in floor["entries"] if e["kind"] == "memcpy"]
    assert udp_gbps > 1, client.stdout[-500:]
    assert memcpy["gbps"] > udp_gbps, (memcpy, udp_gbps)


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as handle:
                if entry.isdigit() and int(handle.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
        except (OSError, ValueError, IndexError):
            continue
    return found


def _stop_the_peer(stopped: list[int], deadline: float) -> None:
    """Find the floor agent this test started and its forked peer; SIGSTOP the peer."""
    while time.monotonic() < deadline:
        for pid in _children(os.getpid()):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    if b"\0floor\0" not in handle.read():
                        continue
            except OSError:
                continue
            peers = _children(pid)
            if peers:
                os.kill(peers[0], signal.SIGSTOP)
                stopped.append(peers[0])
                return
        time.sleep(0.005)


@pytest.mark.e2e
@pytest.mark.parametrize("wait", ["block", "spin"])
def test_a_stopped_peer_fails_the_floor_with_the_reason_and_leaves_nothing(wait):
    stopped: list[int] = []
    stopper = threading.Thread(target=_stop_the_peer, args=(stopped, time.monotonic() + 20))
    stopper.start()
    started = time.monotonic()
    # A budget of 10 s a measurement: the peer is stopped long before the floor could end by itself.
    floor = measure_one(agent(), CROSS if (os.cpu_count() or 1) > 1 else SAME, wait, [64], budget_s=10,
                        timeout_s=0.5, kinds=("unix", "shm"))
    took = time.monotonic() - started
    stopper.join()
    assert stopped, "the test did not find the floor's peer process"
    assert floor["error"] is not None, floor
    assert f"the peer (pid {stopped[0]}): " in floor["error"] and "no answer within 0.5 s" in floor["error"]
    assert took < 10, took
    deadline = time.monotonic() + 5
    while pid_alive(stopped[0]) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not pid_alive(stopped[0]), "the stopped peer was left behind"


def jobs(**options):
    opts = build_run_options(run_request(**options), described(only=("udp", "tcp")), cpu_count=2, check_out=False)
    return [PlannedPoint(opts, point) for point in opts.points()]


def test_one_floor_per_placement_and_wait_at_the_sizes_of_their_points():
    plan = (jobs(mw="udp,tcp", size="64,1k", cpu="0,1") + jobs(mw="udp", size="63000,64", cpu="0,0")
            + jobs(mw="udp", size="32", cpu="0,0", wait="spin"))
    assert groups_of(plan) == {(CROSS, "block"): [64, 1024], (SAME, "block"): [64, 63000], (SAME, "spin"): [32]}
    two_hosts = [PlannedPoint(replace(j.opts, hosts=HostPair("me@a", "me@b", ("10.0.0.1", "10.0.0.2"))), j.point) for j in jobs(mw="udp")]
    assert groups_of(two_hosts) == {}


def test_the_budget_shrinks_only_past_the_total():
    assert budget_for(12) == 0.1
    assert budget_for(int(MAX_TOTAL_S / 0.1)) == 0.1
    assert budget_for(120) == pytest.approx(MAX_TOTAL_S / 120)
    assert budget_for(100_000) == MIN_BUDGET_S
