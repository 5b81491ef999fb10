"""What each adapter says it did, against ground truth the test sets up: a
fan-out whose every subscriber must get every ping, shared memory that must
really carry the samples (and a copy where the test takes the shared memory
away), limits refused with the middleware's reason, versions in the record.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import agent_with, count_leaving_packets
from mwperf.execute.agent import describe
from conftest import written
from mwperf.model.schema import validate_record

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_shm_leftovers")]


agent = agent_with


def mwperf(mw, *args, agent_path=None, timeout=300):
    # --no-floor: the floor is not what this module checks (test_floor_* do)
    return subprocess.run([sys.executable, "-m", "mwperf", "run", "--no-floor", "--agent", agent_path or agent(mw), "--mw", mw,
                           *args], capture_output=True, text=True, env=dict(os.environ), timeout=timeout)


def run(tmp_path, mw, *args, agent_path=None):
    out = tmp_path / "run"
    with count_leaving_packets() as leaving:
        done = mwperf(mw, *args, "--out", str(out), agent_path=agent_path)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr[-3000:]
    assert leaving["packets"] == 0
    (r,) = written(out)
    validate_record(r)
    assert r["status"] == "ok", r["error"]
    return r


@pytest.mark.parametrize("mw", ["iceoryx", "iceoryx2"])
def test_fan_out_in_latency_mode_every_subscriber_gets_every_ping(tmp_path, mw):
    """Four subscriber processes, the first echoing: each gets every ping the
    publisher counted as sent. The echo must not change the sample the other
    subscribers read (iceoryx shares one chunk among them: an echo flipped in
    place made the others file the ping as foreign), and every subscriber
    process must be let in (RouDi refuses a runtime name twice)."""
    r = run(tmp_path, mw, "--mode", "latency", "--subscribers", "4", "--size", "1k", "--duration", "1s",
            "--warmup", "300ms", "--reliability", "reliable")
    assert r["sent"] > 100
    for s in r["per_subscriber"]:
        assert s["received"] == r["sent"], s
    assert r["adapter"]["data_path"]["sub"]["receive"] == "loan"  # read in place, from the middleware's counters
    assert r["adapter"]["versions"] == {mw: r["adapter"]["version"].split()[-1]}


def test_zenoh_shared_memory_carries_the_samples(tmp_path):
    """--transport shm: every sample the subscriber took arrived as a zenoh
    shared-memory buffer and every one the publisher put was one (zenoh's own
    view of its buffers, read after the measured phase, not at open)."""
    if "shm" not in describe(agent("zenoh")).adapters["zenoh"].transports:
        pytest.skip("zenoh built without shared memory")
    r = run(tmp_path, "zenoh", "--transport", "shm", "--mode", "throughput", "--size", "4k", "--duration", "1s",
            "--warmup", "300ms", "--latency-count", "100")
    pub, sub = r["adapter"]["data_path"]["pub"], r["adapter"]["data_path"]["sub"]
    assert pub["send"] == "shm" and pub["sent_shm"] == pub["sent"] >= r["sent"], pub
    assert sub["receive"] == "shm" and sub["received_shm"] == sub["received"] >= r["received"] > 0, sub


@pytest.mark.skipif(os.geteuid() != 0, reason="a mount namespace needs root")
def test_zenoh_falls_back_to_copying_where_the_shared_memory_cannot_be_reached(tmp_path):
    """The subscriber in a mount namespace with a /dev/shm of its own cannot
    map the publisher's segments: zenoh copies the samples over TCP instead,
    and the record shows it (put from shared memory, received as copies)."""
    real = agent("zenoh")
    if "shm" not in describe(real).adapters["zenoh"].transports:
        pytest.skip("zenoh built without shared memory")
    wrapper = tmp_path / "agent-own-shm"
    wrapper.write_text("#!/bin/sh\n"
                       "case \" $* \" in *' --role sub '*)\n"
                       f"  exec unshare -m --propagation private sh -c 'mount -t tmpfs tmpfs /dev/shm && exec \"$0\" \"$@\"' {real} \"$@\";;\n"
                       "esac\n"
                       f"exec {real} \"$@\"\n")
    wrapper.chmod(0o755)
    r = run(tmp_path, "zenoh", "--transport", "shm", "--mode", "throughput", "--size", "4k", "--duration", "1s",
            "--warmup", "300ms", "--latency-count", "100", agent_path=str(wrapper))
    pub, sub = r["adapter"]["data_path"]["pub"], r["adapter"]["data_path"]["sub"]
    assert pub["send"] == "shm", pub
    assert sub["receive"] == "copy" and sub["received_shm"] == 0 and sub["received"] >= r["received"] > 0, sub


def test_ros2_records_the_rmw_and_the_dds_it_runs_on(tmp_path):
    r = run(tmp_path, "ros2", "--mode", "latency", "--size", "1k", "--duration", "1s", "--warmup", "300ms")
    versions = r["adapter"]["versions"]
    assert versions["rmw"] == "rmw_fastrtps_cpp" and versions["rmw_version"].count(".") == 2, versions
    assert versions["fastdds"].startswith("2.14."), versions  # the wheel's Fast DDS, not Debian's 2.9
    assert versions["fastcdr"].startswith("2."), versions  # and its Fast CDR, not Debian's 1.0


def test_fastdds_jazzy_runs_on_the_wheels_fast_dds_2_14(tmp_path):
    """fastdds-jazzy, the base of ros2's overhead pair: a point runs, and its record
    names the Fast DDS and Fast CDR loaded: the ROS 2 wheels' 2.14 and 2.x, never
    Debian's 2.9 and 1.x (what the fastdds adapter runs on)."""
    r = run(tmp_path, "fastdds-jazzy", "--mode", "latency", "--size", "1k", "--duration", "1s", "--warmup", "300ms")
    assert r["mw"] == "fastdds-jazzy" and r["received"] > 0
    versions = r["adapter"]["versions"]
    assert versions["fastdds"].startswith("2.14.") and versions["fastcdr"].startswith("2."), versions
    assert r["adapter"]["version"] == versions["fastdds"]


def test_ros2_and_its_fast_dds_base_share_one_shared_memory_setting(tmp_path):
    """The shared-memory segment and message size ros2's Fast DDS profile gives
    rmw_fastrtps_cpp are the ones fastdds-jazzy sets (fastdds_shm.h): the profile
    ros2 wrote holds the values fastdds-jazzy's record reports, and they are not
    Fast DDS's default segment (512 KiB) at 1 MiB."""
    args = ("--transport", "shm", "--mode", "latency", "--size", "1MiB", "--duration", "500ms", "--warmup", "200ms")
    base = run(tmp_path / "base", "fastdds-jazzy", *args)["adapter"]["config"]
    ros2 = run(tmp_path / "ros2", "ros2", *args)["adapter"]["config"]
    segment, message = base["shm_segment_size"], base["shm_max_message_size"]
    assert segment > 512 << 10 and message > 1 << 20, base
    assert (ros2["shm_segment_size"], ros2["shm_max_message_size"]) == (segment, message)
    assert f"<segment_size>{segment}</segment_size><maxMessageSize>{message}</maxMessageSize>" in ros2["confinement"]


def test_ros2_with_an_rmw_rcl_cannot_load_is_refused_with_rcls_reason(tmp_path, monkeypatch):
    """RMW_IMPLEMENTATION names an rmw that is not installed: rcl refuses it
    when it is loaded (ROS 2's own check), and mwperf says so in one line,
    naming the rmw asked for and the one rcl runs on."""
    path = agent("ros2")
    monkeypatch.setenv("RMW_IMPLEMENTATION", "rmw_cyclonedds_cpp")
    done = mwperf("ros2", "--mode", "latency", "--size", "1k", "--duration", "1s", "--out", str(tmp_path / "run"),
                  agent_path=path)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    line = done.stderr.strip().splitlines()[-1]
    assert line.startswith("mwperf: error: --mw ros2: not available:"), line
    assert "rmw_cyclonedds_cpp" in line and "rmw_fastrtps_cpp" in line, line


@pytest.mark.parametrize("args, reason", [
    (("--history", "keep-all", "--reliability", "best-effort"), "at most 256 samples and drops the oldest"),
    (("--durability", "transient-local", "--history", "keep-last:20"), "at most 16 samples of history"),
])
def test_iceoryx_says_which_limit_it_cannot_go_beyond(tmp_path, args, reason):
    """A keep-all iceoryx cannot keep (best effort: a queue of 256 that drops)
    and a history beyond its 16 are refused with the limit, not shrunk."""
    out = tmp_path / "run"
    done = mwperf("iceoryx", "--mode", "rate", "--rate", "100", "--size", "1k", "--duration", "1s", *args,
                  "--out", str(out))
    assert "Traceback" not in done.stderr
    (r,) = written(out)
    assert r["status"] == "failed" and reason in r["error"], r["error"]


def test_iceoryx_keep_all_says_it_is_a_queue_of_256_the_publisher_waits_on(tmp_path):
    """Reliable keep-all is iceoryx's largest subscriber queue (256) with the
    publisher waiting while it is full: run, and the record says so (not a
    silent keep-all), with nothing lost. (The adapter once put that sentence
    in its configuration's "history", the record's qos.history: every keep-all
    iceoryx point failed the results schema.)"""
    r = run(tmp_path, "iceoryx", "--mode", "rate", "--rate", "1000", "--size", "1k", "--duration", "1s",
            "--warmup", "300ms", "--history", "keep-all", "--reliability", "reliable")
    for config in (r["adapter"]["config"], r["adapter"]["sub_config"]):
        assert config["history"] == "keep-all", config
        assert config["keep_all"].startswith("a subscriber queue of 256 (iceoryx's largest); the publisher waits"), config
        assert config["queue_capacity"] == 256 and config["queue_full_policy"] == "BLOCK_PRODUCER", config
    assert r["qos"]["history"] == "keep-all"
    assert r["received"] == r["sent"] > 500
