"""The agent binary on its own (no controller): foreign traffic on the data port,
sequence numbers that wrap, and refusals of bad arguments."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time

import pytest

from conftest import real_agent_path

pytestmark = pytest.mark.e2e


def agent() -> str:
    path = real_agent_path()
    if path is None:
        pytest.skip("mwperf-agent is not built (cmake -S agent -B agent/build && cmake --build agent/build)")
    return str(path)


def start_sub(*args: str) -> tuple[subprocess.Popen, dict]:
    sub = subprocess.Popen([agent(), "run", "--role", "sub", *args], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    ready = json.loads(sub.stdout.readline())
    assert ready["event"] == "ready"
    return sub, ready


def finish(sub: subprocess.Popen, sent: int) -> dict:
    """Stops the subscriber; its result (after its `matched`)."""
    sub.stdin.write(f"stop {sent}\n")
    sub.stdin.flush()
    events = [json.loads(line) for line in sub.stdout]
    assert sub.wait(timeout=10) == 0
    assert [e["event"] for e in events] == ["matched", "result"], events
    return events[-1]


def run_pub(*args: str) -> dict:
    """A publisher told `go` at once (as the controller does once the subscriber is matched)."""
    out = subprocess.run([agent(), "run", "--role", "pub", *args], input="go\n", capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


@pytest.mark.side_by_side  # counts; its own port
def test_foreign_datagrams_are_counted_and_ignored():
    common = ["--mw", "udp", "--mode", "rate", "--size", "256", "--run-id", "77", "--cpu", "-1"]
    timing = ["--rate", "2000", "--duration", "1000000000", "--warmup", "100000000"]  # the publisher's
    sub, ready = start_sub(*common)
    try:
        junk = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        target = ("127.0.0.1", ready["port"])
        header_of_other_run = (0x4650574D).to_bytes(4, "little") + bytes([1, 0, 0, 0]) + (78).to_bytes(4, "little")
        foreign = [b"", b"x", b"GET / HTTP/1.1\r\n\r\n", os.urandom(256), os.urandom(9000),
                   header_of_other_run + bytes(244), b"\xff" * 65000]
        for datagram in foreign:
            junk.sendto(datagram, target)
        pub = run_pub(*common, *timing, "--port", str(ready["port"]))
        for datagram in foreign:  # and some after the run, while the sub drains
            junk.sendto(datagram, target)
        result = finish(sub, pub["sent"])
    finally:
        sub.kill()
    assert result["foreign"] >= len(foreign)
    assert result["received"] + result["lost"] == pub["sent"]
    assert result["duplicates"] == 0
    assert result["latency_ns"]["count"] == result["received"]


@pytest.mark.side_by_side  # udp matches at once; a loaded machine only waits longer
def test_the_publisher_sends_nothing_before_go():
    """The start barrier: a publisher that is matched but never told `go`
    (its stdin open and silent) sends nothing, and gives up when its match
    timeout (0.5 s) has passed; its subscriber received not one sample, not
    even of the warm-up."""
    common = ["--mw", "udp", "--mode", "rate", "--size", "64", "--run-id", "78", "--cpu", "-1"]
    sub, ready = start_sub(*common)
    try:
        pub = subprocess.Popen([agent(), "run", "--role", "pub", *common, "--rate", "2000", "--duration", "500000000",
                                "--warmup", "100000000", "--port", str(ready["port"]), "--match-timeout", "500000000"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            started = time.monotonic()
            events = [json.loads(line) for line in pub.stdout]
            assert pub.wait(timeout=10) == 4 and time.monotonic() - started > 0.45
        finally:
            pub.kill()
        assert [e["event"] for e in events] == ["ready", "error"], events
        assert events[1]["error"] == "no 'go' from the controller within 0.5 s of being matched"
        result = finish(sub, 0)
    finally:
        sub.kill()
    assert (result["received"], result["warmup_received"], result["foreign"]) == (0, 0, 0), result


# tcp counts; half its 2000 Hz is what a loaded machine keeps (a publisher behind catches up)
@pytest.mark.side_by_side
def test_sequence_numbers_wrap_without_loss_or_duplicates():
    start = str(2**64 - 500)  # the run crosses UINT64_MAX -> 0
    common = ["--mw", "tcp", "--mode", "rate", "--size", "64", "--run-id", "5", "--cpu", "-1", "--seq-start", start]
    sub, ready = start_sub(*common)
    try:
        pub = run_pub(*common, "--rate", "2000", "--duration", "1000000000", "--warmup", "0", "--port", str(ready["port"]))
        result = finish(sub, pub["sent"])
    finally:
        sub.kill()
    assert pub["sent"] > 1000
    assert result["received"] == pub["sent"]
    assert (result["lost"], result["duplicates"], result["out_of_order"]) == (0, 0, 0)


@pytest.mark.side_by_side  # refusals
@pytest.mark.parametrize("args, named", [
    (["--size", "0"], "'0'"),
    (["--size", "70000"], "70000"),
    (["--mw", "nope"], "'nope'"),
    (["--wait", "sometimes"], "'sometimes'"),
    (["--cpu", "-7"], "'-7'"),
    (["--duration", "100"], "--role pub"),  # an option of the other role is refused, not ignored
    (["--nic", "lo"], "udp"),               # an option the adapter cannot honour, too
])
def test_bad_arguments_exit_2_with_one_line(args, named):
    base = {"--role": "sub", "--mw": "udp", "--size": "64"}
    for i in range(0, len(args), 2):
        base[args[i]] = args[i + 1]
    argv = [x for kv in base.items() for x in kv]
    out = subprocess.run([agent(), "run", *argv], capture_output=True, text=True, timeout=10)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0], out.stderr


def test_untimed_wait_survives_a_lost_pong():  # apart: timing (a pong within 5 s, 100 of them)
    """Cyclone waits for pongs without a timer (Adapter::can_wake); when the
    subscriber stops answering, the watchdog must still end each overdue wait."""
    import signal

    from mwperf.execute.agent import describe

    if "cyclonedds" not in describe(agent()).adapters:
        pytest.skip("the agent is built without cyclonedds")
    common = ["--mw", "cyclonedds", "--mode", "latency", "--size", "64", "--run-id", "4242", "--cpu", "-1"]
    sub, _ = start_sub(*common)
    pub = subprocess.Popen([agent(), "run", "--role", "pub", *common, "--duration", "2000000000", "--warmup",
                            "100000000", "--ping-timeout", "200000000"], stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, text=True)
    try:
        assert json.loads(pub.stdout.readline())["event"] == "ready"
        pub.stdin.write("go\n")
        pub.stdin.flush()
        time.sleep(0.6)
        sub.send_signal(signal.SIGSTOP)  # the echoes stop mid-run
        time.sleep(0.5)
        sub.send_signal(signal.SIGCONT)
        started = time.monotonic()
        result = json.loads(pub.stdout.readline())
        pub.stdin.close()  # as the controller, once the subscriber has its result: the publisher may go
        assert pub.wait(timeout=10) == 0
        assert time.monotonic() - started < 5
    finally:
        sub.send_signal(signal.SIGCONT)
        pub.kill()
    assert result["event"] == "result" and result["ping_lost"] >= 1 and result["pongs"] > 100
    final = finish(sub, result["sent"])
    assert final["event"] == "result"


def _settled_after_result(close: bool) -> tuple[float, dict, dict]:
    """A udp rate point; seconds from the publisher's result to its exit, told
    `close` once the subscriber has its result, or not told at all (its stdin open)."""
    common = ["--mw", "udp", "--mode", "rate", "--size", "64", "--run-id", "79", "--cpu", "-1"]
    sub, ready = start_sub(*common)
    try:
        pub = subprocess.Popen([agent(), "run", "--role", "pub", *common, "--rate", "1000", "--duration", "200000000",
                                "--warmup", "0", "--port", str(ready["port"])],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            pub.stdin.write("go\n")
            pub.stdin.flush()
            events = [json.loads(pub.stdout.readline()) for _ in range(2)]
            at = time.monotonic()
            assert [e["event"] for e in events] == ["ready", "result"], events
            result = finish(sub, events[1]["sent"])  # the subscriber drains while the publisher is still there
            if close:
                pub.stdin.write("close\n")
                pub.stdin.flush()
            assert pub.wait(timeout=10) == 0
            return time.monotonic() - at, events[1], result
        finally:
            pub.kill()
    finally:
        sub.kill()


def test_the_publisher_closes_when_told_not_after_a_fixed_settle():  # apart: timing
    """After its result the publisher keeps its endpoints for its settle (200 ms:
    no disposal overtakes its last sample), unless the controller closes it
    earlier, once every subscriber has its result: then it goes at once."""
    waited, pub, sub = _settled_after_result(close=False)
    told, pub2, sub2 = _settled_after_result(close=True)
    assert waited >= 0.2 and told < waited - 0.1, (waited, told)
    for sent, got in ((pub, sub), (pub2, sub2)):
        assert got["received"] == sent["sent"] > 100 and got["lost"] == 0
