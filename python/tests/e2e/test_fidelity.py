"""The numbers follow ground truth that the test itself sets up.

Nothing here is checked against a quantity computed from the one under test:
an nftables rule drops exactly every 10th datagram, a publisher or a
subscriber is stopped (SIGSTOP) for a known time, a link is shaped to a known
rate, a host gets a clock a known number of seconds ahead (a Linux time
namespace). Real agents, real sockets and middlewares; namespaces made here.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import pids_with_cmdline, real_agent_path

pytestmark = pytest.mark.e2e

ROOT = os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "nft", "tc", "unshare"))


def agent() -> str:
    path = real_agent_path()
    if path is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    return str(path)


def mwperf(out: Path, *args: str, prefix: tuple[str, ...] = (), timeout: float = 180) -> subprocess.Popen:
    # --no-floor: the floor is not what this module checks (test_floor_* do)
    return subprocess.Popen([*prefix, sys.executable, "-m", "mwperf", "run", "--no-floor", "--agent", agent(), *args,
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def finish(proc: subprocess.Popen, out: Path, timeout: float = 180) -> dict:
    stdout, stderr = proc.communicate(timeout=timeout)
    assert "Traceback" not in stderr, stderr
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert len(records) == 1, stdout + stderr
    record = records[0]
    assert record["status"] == "ok", record["error"]
    return record


def stop_for(role: str, marker: str, after: float, seconds: float) -> float:
    """SIGSTOP the agent of `role` of the run carrying `marker`, `after` s after it appears, for `seconds`."""
    deadline = time.monotonic() + 30
    pids: list[int] = []
    while not pids and time.monotonic() < deadline:
        pids = [p for p in pids_with_cmdline(f"--role {role}") if marker in _cmdline(p)]
        time.sleep(0.02)
    assert pids, f"no {role} agent appeared"
    time.sleep(after)
    os.kill(pids[0], signal.SIGSTOP)
    t0 = time.monotonic()
    time.sleep(seconds)
    os.kill(pids[0], signal.SIGCONT)
    return time.monotonic() - t0


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.parametrize("role, mw", [("pub", "udp"), ("sub", "tcp")])
def test_a_stopped_side_shows_up_as_latency_from_the_intended_send_time(tmp_path, role, mw):
    """1000 Hz for 4 s; one side is stopped for 1 s in the middle. The 1000
    samples due meanwhile leave (pub stopped) or are read (sub stopped) up to
    1 s late, evenly spread: the maximum is ~1 s, p90 ~0.6 s, p99 ~0.96 s,
    and nothing is skipped: the publisher catches up (loop rate 1)."""
    out = tmp_path / "run"
    proc = mwperf(out, "--mw", mw, "--mode", "rate", "--rate", "1000", "--size", "256", "--duration", "4s",
                  "--warmup", "300ms")
    stopped = stop_for(role, str(out), after=1.5, seconds=1.0)
    r = finish(proc, out)
    lat = r["latency_us"]
    assert lat["max"] == pytest.approx(stopped * 1e6, abs=0.25e6)
    assert lat["p90"] == pytest.approx(0.6e6, abs=0.15e6)
    assert lat["p99"] == pytest.approx(0.96e6, abs=0.15e6)
    assert r["loop_rate"] > 0.98 and r["lost"] == 0
    if role == "pub":  # the publisher's own view: its sends went out up to 1 s behind schedule
        assert r["send_lag_us"]["max"] == pytest.approx(stopped * 1e6, abs=0.25e6)


def test_every_tenth_datagram_dropped_is_a_tenth_lost(tmp_path, netns_with_nth_drop):
    out = tmp_path / "run"
    proc = mwperf(out, "--mw", "udp", "--mode", "rate", "--rate", "2000", "--size", "256", "--duration", "2s",
                  "--warmup", "300ms", prefix=("ip", "netns", "exec", netns_with_nth_drop))
    r = finish(proc, out)
    assert r["sent"] == 4000
    assert abs(r["lost"] - r["sent"] / 10) <= 1  # the phase of the 10 against the first measured sample
    assert r["received"] + r["lost"] == r["sent"]


def test_a_publisher_that_cannot_keep_up_is_a_result(tmp_path):
    """5000 Hz of 1000-byte messages into a 10 Mbit/s link (tbf): about 1250 a
    second fit (1004 B with the framing; TCP segments of many messages add
    little), so the loop rate is ~0.25 (tbf's bucket and TCP's segmentation
    move it by ~15 %); the point ends at its deadline as a result, not a
    timeout. The 2 s warm-up fills the socket buffers first, so that they do
    not flatter it."""
    if not ROOT:
        pytest.skip("needs root, ip, tc and nft")
    out = tmp_path / "run"
    start = time.monotonic()
    proc = mwperf(out, "--mw", "tcp", "--mode", "rate", "--rate", "5000", "--size", "1000", "--duration", "3s",
                  "--warmup", "2s", "--link", "netns:rate=10mbit")
    r = finish(proc, out)
    assert 0.18 <= r["loop_rate"] <= 0.32, r["loop_rate"]
    assert r["scheduled"] == 15000 and r["unsent"] == r["scheduled"] - r["sent"]
    assert r["elapsed_s"] == pytest.approx(3.0, abs=0.3)
    assert time.monotonic() - start < 60
    # queued behind the link, the last samples arrive seconds after they were due
    assert r["latency_us"]["max"] > 1e6


@pytest.mark.parametrize("mw, args", [
    ("cyclonedds", ("--rate", "2150", "--size", "1MiB", "--reliability", "reliable")),
    ("tcp", ("--rate", "200000", "--size", "63000")),
])
def test_the_reference_sweeps_overload_cells_complete(tmp_path, mw, args):
    """The cells the reference sweep reports with a loop rate below 1 end at
    their deadline with what the publisher achieved (once: rate x duration sends,
    however long they took, or a timeout)."""
    out = tmp_path / "run"
    proc = mwperf(out, "--mw", mw, "--mode", "rate", *args, "--duration", "2s", "--warmup", "300ms")
    r = finish(proc, out)
    assert r["loop_rate"] <= 1.0
    assert r["elapsed_s"] == pytest.approx(2.0, abs=0.5)
    assert r["sent"] == r["scheduled"] - r["unsent"]


@pytest.mark.parametrize("clock", ["monotonic", "realtime"])
def test_a_host_with_its_own_clock(tmp_path, clock):
    """The subscriber's host runs in a time namespace whose monotonic clock is
    3 s ahead. Monotonic stamps: the estimated offset comes out at 3 s and is
    subtracted, so one-way latency is small and positive; the raw figures are
    3 s more. Realtime stamps: time namespaces do not shift CLOCK_REALTIME, the
    estimate is ~0 and nothing is subtracted."""
    if not ROOT:
        pytest.skip("needs root, ip, nft and unshare")
    out = tmp_path / "run"
    proc = mwperf(out, "--mw", "udp", "--mode", "rate", "--rate", "1000", "--size", "256", "--duration", "1s",
                  "--warmup", "300ms", "--link", "netns:none,clock_offset=3s", "--clock", clock)
    r = finish(proc, out)
    c = r["clock"]
    assert c["same_clock"] is False and r["stamp_clock"] == clock
    expected = 3e6 if clock == "monotonic" else 0.0
    assert abs(c["offset_us"] - expected) <= max(c["uncertainty_us"], 1000.0)
    assert c["applied_us"] == (pytest.approx(c["offset_us"], abs=0.001) if clock == "monotonic" else 0.0)
    lat = r["latency_us"]
    assert -c["uncertainty_us"] <= lat["p50"] <= 5000  # microseconds on a veth, not seconds
    assert lat["uncertainty_us"] == c["uncertainty_us"]
    if clock == "monotonic":
        assert r["latency_raw_us"]["p50"] == pytest.approx(lat["p50"] + c["applied_us"], abs=0.01)
