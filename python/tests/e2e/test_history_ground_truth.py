"""``mwperf history`` against ground truth the test sets up: twelve real runs
of one point (udp, rate mode, 1 KiB at 1 kHz, publisher and subscriber in
two network namespaces, pinned cross-core), ingested by ``run --db``; the
last six over a link shaped to 2 Mbit/s (tbf), which the point's 8.5 Mbit/s
overloads. The shaping sets the new level, not mwperf:

* loss: the link passes 2 Mbit/s of the 8.5 offered (1024 B payload + 28 B
  UDP/IPv4 + 14 B Ethernet a datagram), so 1 - 2/8.53 = 76.5 % is lost;
* latency: the tbf queue is full, and a datagram waits for the whole queue,
  burst (32 KiB) + rate x latency (50 ms), to drain at 2 Mbit/s: 181 ms.

History must find the change at run 7, in p50, p99 and loss, with these
levels after it, none after it, and none in p50 or loss among the first six
runs (p99 there is the tail of a VM's noise, which the test does not set). (CPU is no ground truth
here: it falls with the datagrams the link passes, by an amount the test
does not set, and moves with the VM's noise; its change points are shown,
not asserted.)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import real_agent_path

pytestmark = pytest.mark.e2e

ROOT = os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "tc"))
RATE_BIT_S, BURST_B, TBF_LATENCY_S = 2e6, 32 * 1024, 0.050  # --link netns:rate=2mbit (execute/netns.py's tbf)
WIRE_B = 1024 + 28 + 14
OFFERED_BIT_S = 1000 * WIRE_B * 8


def mwperf(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(not ROOT, reason="needs root, ip and tc (network namespaces, tbf)")
def test_history_finds_a_link_slowed_from_run_7_and_nothing_before(tmp_path):
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    store = str(tmp_path / "store.duckdb")
    point = ("--agent", str(agent), "--mw", "udp", "--mode", "rate", "--rate", "1000", "--size", "1k",
             "--duration", "500ms", "--warmup", "200ms", "--cpu", "0,1",
             "--no-floor")  # history reads no floor
    # One run kept out of the store first: the first of a series on this VM has been seen at twice the
    # p50 of the next ones (96 vs 50 us, cold caches and a first namespace), a change history rightly
    # finds at run 2 but not one this test sets up.
    done = mwperf("run", *point, "--link", "netns:none", "--out", str(tmp_path / "warm-up"))
    assert done.returncode == 0, done.stderr[-2000:]
    for i in range(12):
        link = "netns:none" if i < 6 else "netns:rate=2mbit"
        done = mwperf("run", *point, "--link", link, "--out", str(tmp_path / f"run{i + 1:02d}"), "--db", store)
        assert done.returncode == 0, done.stderr[-2000:]
        assert "store: stored in" in done.stderr
    done = mwperf("history", "--db", store, "--json")
    assert done.returncode == 0, done.stderr
    (series,) = json.loads(done.stdout)  # one point, one host, one placement: the link's shaping is no placement
    assert [run["run_id"] for run in series["runs"]] == [f"run{i:02d}" for i in range(1, 13)]
    changes: dict[str, list[dict]] = {}
    for change in series["change_points"]:
        changes.setdefault(change["metric"], []).append(change)
    detail = json.dumps({"change_points": series["change_points"],
                         "runs": [{k: run[k] for k in ("run_id", "p50", "p99", "loss", "cpu.pub", "cpu.sub")}
                                  for run in series["runs"]]}, indent=1)
    for metric in ("p50", "loss"):
        assert [c["run"] for c in changes.get(metric, [])] == [7], detail
    # p99 before the shaping is the tail of ~500 samples on a shared VM, which the test does not set (one
    # run's 618 us among 75-108 us has been found as a change): only the change the shaping makes is checked
    p99 = {c["run"]: c for c in changes.get("p99", [])}
    assert 7 in p99 and max(p99) == 7, detail
    loss, p50 = changes["loss"][0], changes["p50"][0]
    assert loss["before"] == 0
    assert loss["after"] == pytest.approx(100 * (1 - RATE_BIT_S / OFFERED_BIT_S), abs=3)
    queued_us = 1e6 * (BURST_B * 8 / RATE_BIT_S + TBF_LATENCY_S)
    assert p50["after"] == pytest.approx(queued_us, rel=0.15)
    assert p99[7]["after"] == pytest.approx(queued_us, rel=0.15)
    assert p50["before"] < 1000 and p50["pvalue"] < 0.001
