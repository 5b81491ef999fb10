"""Agent pairs (``--reuse BYTES`` / ``next``, mwperf run --reuse-agents).

The test is the controller of a udp pair over three sizes, so it knows the
run's key: between two points it sends the subscriber genuine-looking
samples of the point before (right tag, fresh stamp, that point's size and
sequence numbers, docs/agent-protocol.md: point i numbers from i << 40), as
a late datagram of that point would arrive. Each must be counted foreign,
none received: with one sequence space for every point they would be this
point's (received, duplicates, a span past what was sent). A control shows
the forged tags are right: forged warm-up samples of the running point are
counted as warm-up, not foreign.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import struct
import subprocess
import sys
import time

import pytest

from conftest import real_agent_path
from conftest import written

pytestmark = [pytest.mark.e2e, pytest.mark.measuring]

HEADER = struct.Struct("<IBB6sIQq")  # magic, version, flags, tag, size, seq, send_ns (core/header.h)
MAGIC, VERSION, WARMUP = 0x4650574D, 2, 1
M64 = (1 << 64) - 1


def _rotl(x: int, b: int) -> int:
    return ((x << b) | (x >> (64 - b))) & M64


def siphash13(k0: int, k1: int, data: bytes) -> int:
    """SipHash-1-3 (Aumasson and Bernstein), written from the paper for this test."""
    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rnd() -> None:
        v[0] = (v[0] + v[1]) & M64; v[1] = _rotl(v[1], 13); v[1] ^= v[0]; v[0] = _rotl(v[0], 32)  # noqa: E702
        v[2] = (v[2] + v[3]) & M64; v[3] = _rotl(v[3], 16); v[3] ^= v[2]  # noqa: E702
        v[0] = (v[0] + v[3]) & M64; v[3] = _rotl(v[3], 21); v[3] ^= v[0]  # noqa: E702
        v[2] = (v[2] + v[1]) & M64; v[1] = _rotl(v[1], 17); v[1] ^= v[2]; v[2] = _rotl(v[2], 32)  # noqa: E702

    def compress(m: int) -> None:
        v[3] ^= m
        rnd()
        v[0] ^= m

    whole = len(data) // 8 * 8
    for i in range(0, whole, 8):
        compress(int.from_bytes(data[i:i + 8], "little"))
    compress(int.from_bytes(data[whole:], "little") | ((len(data) & 0xFF) << 56))
    v[2] ^= 0xFF
    for _ in range(3):
        rnd()
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def sample(key: str, size: int, seq: int, flags: int = 0) -> bytes:
    """A sample as the publisher of the run with ``key`` writes it, stamped now (CLOCK_MONOTONIC)."""
    send_ns = time.monotonic_ns()
    message = struct.pack("<QqI", seq, send_ns, size) + bytes([flags])
    tag = siphash13(int(key[:16], 16), int(key[16:], 16), message).to_bytes(8, "little")[:6]
    return HEADER.pack(MAGIC, VERSION, flags, tag, size, seq, send_ns) + bytes(size - HEADER.size)


def agent() -> str:
    path = real_agent_path()
    if path is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    return str(path)


class Side:
    def __init__(self, *args: str, key: str):
        self.proc = subprocess.Popen([agent(), "run", *args, "--key", "stdin"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env={**os.environ, "MWPERF_RUN_ID": "4242"})
        self.say(f"key {key}")

    def say(self, line: str) -> None:
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def event(self) -> dict:
        line = self.proc.stdout.readline()
        assert line, f"the agent ended (exit {self.proc.wait(timeout=5)})"
        return json.loads(line)


SIZES = (64, 1024, 4096)
TIMING = ["--rate", "2000", "--duration", "300000000", "--warmup", "100000000"]


# apart: best-effort udp must bring 90 % and every forged datagram of a burst, which a stalled
# subscriber's socket buffer may not hold
def test_a_reused_udp_pair_counts_each_points_samples_and_none_of_the_last_points():
    key = secrets.token_hex(16)
    common = ["--mw", "udp", "--mode", "rate", "--reuse", "4096"]
    sub = Side("--role", "sub", *common, "--size", "64", key=key)
    pub = None
    forger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        ready = sub.event()
        target = ("127.0.0.1", ready["port"])
        pub = Side("--role", "pub", *common, "--size", "64", "--port", str(ready["port"]), *TIMING, key=key)
        previous_sent = 0
        for i, size in enumerate(SIZES):
            if i:
                sub.say(f"next --size {size}")
                pub.say(f"next --size {size} {' '.join(TIMING)}")
            matched, pub_ready = sub.event(), pub.event()
            assert (matched["event"], pub_ready["event"]) == ("matched", "ready")
            assert matched.get("pair_point", 0) == i and pub_ready.get("pair_point", 0) == i
            if i:  # the last point's samples, late: its sequence numbers and more, at its size
                forged = [sample(key, SIZES[i - 1], ((i - 1) << 40) + k) for k in range(previous_sent + 100)]
            else:  # the control: this point's warm-up numbers (2^62 on), which count as warm-up
                forged = [sample(key, size, (1 << 62) + 10_000_000 + k, WARMUP) for k in range(50)]
            for datagram in forged:
                forger.sendto(datagram, target)
            pub.say("go")
            pub_result = pub.event()
            assert pub_result["event"] == "result", pub_result
            sent = pub_result["sent"]
            sub.say(f"stop {sent}")
            result = sub.event()
            assert result["event"] == "result" and result["size"] == size, result
            assert sent > 300 and result["sent_known"] == sent
            assert result["received"] + result["lost"] == sent and result["received"] >= 0.9 * sent
            assert result["duplicates"] == 0 and result["seq_span"] <= sent
            if i:
                assert result["foreign"] == len(forged), result
            else:
                assert result["warmup_received"] == pub_result["warmup_sent"] + len(forged), result
                assert result["foreign"] == 0
            previous_sent = sent
        sub.say("close")
        pub.say("close")
        assert sub.proc.wait(timeout=10) == 0 and pub.proc.wait(timeout=10) == 0
    finally:
        forger.close()
        for side in (sub, pub):
            if side is not None and side.proc.poll() is None:
                side.proc.kill()
                side.proc.wait()


@pytest.mark.side_by_side  # a refusal and its exit codes
def test_a_next_line_that_changes_what_a_pair_cannot_is_refused_with_the_reason():
    key = secrets.token_hex(16)
    sub = Side("--role", "sub", "--mw", "udp", "--mode", "rate", "--reuse", "1024", key=key)
    try:
        ready = sub.event()
        pub = Side("--role", "pub", "--mw", "udp", "--mode", "rate", "--reuse", "1024", "--port", str(ready["port"]),
                   *TIMING, key=key)
        assert sub.event()["event"] == "matched" and pub.event()["event"] == "ready"
        pub.say("go")
        sent = pub.event()["sent"]
        sub.say(f"stop {sent}")
        assert sub.event()["event"] == "result"
        sub.say("next --reliability reliable")
        error = sub.event()
        assert error["event"] == "error"
        assert error["error"] == ("next: --reliability: cannot change between the points of one agent pair "
                                  "(a fresh pair can)")
        assert sub.proc.wait(timeout=10) == 2
        pub.say("close")
        assert pub.proc.wait(timeout=10) == 0
    finally:
        for side in (sub,):
            if side.proc.poll() is None:
                side.proc.kill()


# apart: compares the points' start-up times
def test_mwperf_run_reuse_agents_records_each_point_of_one_pair(tmp_path):
    out = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--agent", agent(), "--mw", "udp", "--mode", "rate",
                           "--rate", "2000", "--size", "64,1k,4k", "--duration", "300ms", "--warmup", "100ms",
                           "--reuse-agents", "--no-floor", "--db", "none", "--out", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    records = written(out)
    assert [r["size"] for r in records] == [64, 1024, 4096]
    assert [r["reuse"] for r in records] == [{"pair": 1, "point": i, "opened_for_bytes": 4096} for i in range(3)]
    for r in records:
        assert r["status"] == "ok", r["error"]
        assert r["sent"] > 300 and r["received"] + r["lost"] == r["sent"] and r["foreign"] == 0
    assert records[1]["phases"]["start_s"] < records[0]["phases"]["start_s"]  # no agent started for it
    assert records[0]["discovery_ms"] > 0 and records[1]["discovery_ms"] is None  # matched before it
