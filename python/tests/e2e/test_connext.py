"""RTI Connext end to end, against ground truth the tests set up.

test_adapters.py runs connext in every mode with its defaults (it is
registered); here what is particular to it: both transports, both
reliabilities, both receive paths, keyed instances and fan-out; under a
namespace that drops every 10th UDP datagram (best effort over UDPv4 loses
a tenth, reliable repairs everything, SHMEM does not use UDP at all); over a
namespace link; large messages (a reliable writer publishes them
asynchronously); the System V segments and semaphores of Connext's SHMEM
transport and the adapter's XML files gone after every run, and those of a
killed run at the next; what connext refuses.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import (count_leaving_packets, made_by_session, namespace_dropping_every_10th, own_group,
                      pids_with_cmdline, real_agent_path)
from mwperf.execute.agent import describe
from conftest import written
from mwperf.model.schema import validate_record

pytestmark = pytest.mark.e2e

ROOT = os.geteuid() == 0
SHORT = ("--duration", "1s", "--warmup", "300ms")
#: Connext's SHMEM transport: a segment 0x400000 + port, semaphores 0x800000 + port and 0xb00000 + port.
SYSV_BASES = (0x400000, 0x800000, 0xB00000)


def agent() -> str:
    path = real_agent_path()
    if path is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    if "connext" not in describe(str(path)).adapters:
        pytest.skip("the agent is built without connext")
    return str(path)


def connext_sysv() -> set[str]:
    """Connext's System V objects on this host, as 'shm KEY' / 'sem KEY': those
    this session's processes created (their creator's group), not another
    session's run meanwhile."""
    found = set()
    for kind in ("shm", "sem"):
        try:
            header, *lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        except (OSError, ValueError):
            continue
        cgid = header.split().index("cgid")
        for line in lines:
            fields = line.split()
            key = int(fields[0])
            if any(7400 <= key - base <= 0xFFFF for base in SYSV_BASES) and own_group() in (None, int(fields[cgid])):
                found.add(f"{kind} {key:#010x}")
    return found


def xml_files() -> set[str]:
    """The adapter's XML files in /tmp that this session's processes made (their group)."""
    return {n for n in os.listdir("/tmp") if n.startswith("mwperf-connext-") and made_by_session(Path("/tmp", n))}


def run(tmp_path, *args, points=1, prefix=(), timeout=300):
    """One `mwperf run --mw connext`: its records, all ok, nothing off loopback, nothing left."""
    out = tmp_path / "run"
    sysv, files = connext_sysv(), xml_files()
    with count_leaving_packets() as leaving:
        done = subprocess.run([*prefix, sys.executable, "-m", "mwperf", "run", "--no-floor", "--agent", agent(), "--mw", "connext",
                               *args, "--out", str(out)], capture_output=True, text=True, env=dict(os.environ),
                              timeout=timeout)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr[-3000:]
    assert leaving["packets"] == 0, f"{leaving['packets']} packet(s) left loopback"
    assert connext_sysv() <= sysv, f"left {connext_sysv() - sysv}"
    assert xml_files() <= files, f"left {xml_files() - files}"
    records = written(out)
    assert len(records) == points
    for r in records:
        validate_record(r)
        assert r["status"] == "ok", r["error"]
    return records, done.stdout


# Side by side (measuring.py): loopback, counts (80 % of the rate: the publisher catches up), and what
# is left is counted of this session's objects only.
@pytest.mark.side_by_side
@pytest.mark.parametrize("receive", ["listener", "waitset"])
def test_both_transports_and_reliabilities(tmp_path, receive):
    records, _ = run(tmp_path, "--mode", "rate", "--rate", "500", "--size", "1k", *SHORT, "--transport", "udp,shm",
                     "--reliability", "reliable,best-effort", "--receive", receive, "--history", "keep-all", points=4)
    seen = set()
    for r in records:
        config = r["adapter"]["config"]
        seen.add((r["transport"], r["reliability"]))
        assert config["transport"] == r["transport"] and config["receive"] == receive
        assert "DynamicData" in config["data_path"] and "Non-Commercial Use #4040" in config["license"]
        assert r["sent"] > 400 and r["received"] > 0  # a busy machine may keep the publisher behind its 500 Hz
        if r["reliability"] == "reliable":
            assert r["received"] == r["sent"] and r["lost"] == 0
    assert seen == {(t, rel) for t in ("udp", "shm") for rel in ("reliable", "best-effort")}


@pytest.fixture
def netns_dropping_user_traffic():
    """Every 10th datagram to an RTPS user-traffic port (odd: 7400 + 250 domain + 11 + 2 participant),
    none of discovery's (even: + 10 + 2 participant): an exact every-10th drop of discovery's
    periodic rounds can hit the same repair each time and keep a reader unmatched (seen once, 14 s)."""
    with namespace_dropping_every_10th("udp dport & 1 == 1", "-rtps") as name:
        yield name


def test_a_tenth_of_udp_dropped(tmp_path, netns_dropping_user_traffic):
    """Best effort over UDPv4 loses a tenth (a sample is one datagram; the
    heartbeats and acknowledgements on the same ports move the count a
    little); reliable (keep-all) repairs every one; SHMEM carries no UDP
    datagram, so it loses nothing either way."""
    records, _ = run(tmp_path, "--mode", "rate", "--rate", "1000", "--size", "256", "--duration", "2s",
                     "--warmup", "300ms", "--transport", "udp,shm", "--reliability", "best-effort,reliable",
                     "--history", "keep-all", "--receive", "waitset", points=4,
                     prefix=("ip", "netns", "exec", netns_dropping_user_traffic))
    by = {(r["transport"], r["reliability"]): r for r in records}
    udp_be = by[("udp", "best-effort")]
    assert 0.085 * udp_be["sent"] <= udp_be["lost"] <= 0.11 * udp_be["sent"], (udp_be["lost"], udp_be["sent"])
    for key in (("udp", "reliable"), ("shm", "best-effort"), ("shm", "reliable")):
        assert by[key]["received"] == by[key]["sent"] > 1500 and by[key]["lost"] == 0, key


@pytest.mark.side_by_side
@pytest.mark.parametrize("subscribers_as", ["processes", "threads"])
def test_keyed_instances_and_fan_out(tmp_path, subscribers_as):
    (r,), _ = run(tmp_path, "--mode", "rate", "--rate", "500", "--size", "1k", *SHORT, "--keyed", "--instances", "64",
                  "--subscribers", "3", "--subscribers-as", subscribers_as, "--reliability", "reliable",
                  "--history", "keep-all")
    assert r["adapter"]["config"]["type"] == "mwperf::msg::dds_::KeyedUInt8MultiArray_"
    assert r["adapter"]["config"]["instances"] == 64 and r["subscribers"] == 3
    assert [s["received"] for s in r["per_subscriber"]] == [r["sent"]] * 3


@pytest.mark.side_by_side
def test_latency_counts_agree_and_large_messages_go_asynchronously(tmp_path):
    records, stdout = run(tmp_path, "--mode", "latency", "--size", "1k,63000,4MiB", "--duration", "2s",
                          "--warmup", "300ms", points=3)
    for r in records:
        assert r["received"] == r["sent"] == r["rtt_us"]["count"] > 0 and r["lost"] == 0
        assert r["adapter"]["config"]["type"] == "std_msgs::msg::dds_::UInt8MultiArray_"
    # the record's qos says what was in force (the adapter's report, under the option's own name)
    assert [r["qos"]["async"] for r in records] == [False, False, True]  # Connext fragments reliable data only so
    assert "connext" in stdout


@pytest.mark.side_by_side
def test_batched_durable_writes_and_a_polling_reader(tmp_path):
    """--batch (samples share a batch, flushed after what must not wait),
    transient-local; then a reader polled without blocking (--wait spin)."""
    (r,), _ = run(tmp_path, "--mode", "throughput", "--size", "256", *SHORT, "--batch", "--history", "keep-all",
                  "--durability", "transient-local", "--latency-count", "1000")
    assert r["adapter"]["config"]["batch"] is True and r["adapter"]["config"]["durability"] == "transient-local"
    assert r["received"] == r["sent"] > 0 and r["lost"] == 0 and r["rtt_us"]["count"] > 0
    (r,), _ = run(tmp_path / "spin", "--mode", "latency", "--size", "1k", *SHORT, "--wait", "spin",
                  "--receive", "waitset")
    assert r["wait"] == "spin" and r["received"] == r["sent"] > 0


@pytest.mark.skipif(not ROOT, reason="network namespaces need root")
def test_over_a_gigabit_link_between_namespaces(tmp_path):
    (r,), _ = run(tmp_path, "--mode", "rate", "--rate", "100", "--size", "1k", "--duration", "1s",
                  "--warmup", "1s", "--link", "netns:gige", "--async")
    config = r["adapter"]["config"]
    assert r["link"]["profile"] == "gige" and r["transport"] == "udp" and r["lost"] == 0
    assert config["async"] is True and r["qos"]["async"] is True
    assert r["received"] == r["sent"] > 90
    assert config["allow_interfaces"].startswith("10.77.") and config["initial_peers"].startswith("10.77.")


def test_what_a_killed_run_left_the_next_run_removes(tmp_path):
    """Agents killed mid-point leave Connext's SHMEM segments and semaphores
    (and the XML files); the next run, of any middleware, removes them.
    Apart: that run removes what any killed run left on the machine."""
    sysv, files = connext_sysv(), xml_files()
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf", "run", "--agent", agent(), "--mw", "connext",
                             "--transport", "shm", "--duration", "20s", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not pids_with_cmdline("--role pub --mw connext"):
        time.sleep(0.1)
    time.sleep(1.0)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    for pid in pids_with_cmdline(f"{out}/"):  # its agents (their --samples-out), never another run's
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.5)
    left = connext_sysv() - sysv
    assert {k.split()[0] for k in left} == {"shm", "sem"}, left  # what a killed Connext leaves
    assert xml_files() - files
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--agent", agent(), "--mw", "udp", "--duration",
                           "200ms", "--warmup", "100ms", "--verbose", "--out", str(tmp_path / "next")], capture_output=True,
                          text=True, env=dict(os.environ), timeout=120)
    assert done.returncode == 0, done.stderr
    assert not (connext_sysv() & left) and not (xml_files() - files)
    assert "connext: sem 0x" in done.stderr  # the run says what it removed (--verbose: every name)


def refusal(*args):
    # a directory of this call's own that is never made (a fixed path is shared with every other session)
    out = Path(tempfile.mkdtemp(prefix="mwperf-refusal-")) / "never-made"
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--agent", agent(), "--mw", "connext", *args,
                           "--out", str(out)], capture_output=True, text=True,
                          env=dict(os.environ), timeout=60)
    made = out.exists()
    shutil.rmtree(out.parent, ignore_errors=True)
    assert done.returncode == 2 and not made, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    return done.stderr


@pytest.mark.side_by_side
def test_what_connext_refuses():
    assert refusal("--size", "20MiB").startswith(
        "mwperf: error: --size 20MiB: connext carries at most 16777216 bytes per message: mwperf's cap, not Connext's")
    assert "--congestion drop: not supported by connext" in refusal("--congestion", "drop")
    assert "--transport tcp: not supported by connext" in refusal("--transport", "tcp")
    assert "shared memory does not cross hosts" in refusal("--transport", "shm", "--link", "netns:gige")


@pytest.mark.side_by_side
def test_the_license_is_described():
    info = describe(agent()).adapters["connext"]
    assert info.license.startswith("RTI Software License for Non-Commercial Use #4040")
    assert info.version.startswith("Connext DDS 6.1.2")
