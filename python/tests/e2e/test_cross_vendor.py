"""Cross-vendor points end to end (issue 24): a publisher of one RTPS
middleware against the subscriber (and echo) of another, on one topic, type
and QoS. Ground truth: the publisher counts what it sent, the other vendor's
subscriber what it received, each in its own process on its own library; a
reliable point delivers every sample, so the two counts agree exactly. A pair
whose transports cannot meet (Fast DDS's shared memory and Connext's SHMEM
are not one transport) fails with the middlewares' reason within its match
timeout; a middleware that does not speak RTPS is refused up front."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

import pytest

from conftest import count_leaving_packets, real_agent_path
from mwperf.execute.agent import describe
from conftest import written
from mwperf.model.schema import validate_record

pytestmark = pytest.mark.e2e
# Every test but the namespace link's runs side by side (measuring.py): each point its own
# run id (topic names), no timing asserted.

SHORT = ("--duration", "1s", "--warmup", "300ms")
TYPE = "std_msgs::msg::dds_::UInt8MultiArray_"


def agent(*mws: str) -> str:
    path = real_agent_path()
    if path is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    missing = set(mws) - set(describe(str(path)).adapters)
    if missing:
        pytest.skip(f"the agent is built without {', '.join(sorted(missing))}")
    return str(path)


def mwperf(tmp_path, pub: str, sub: str, *args, timeout=240):
    out = tmp_path / f"{pub}-{sub}"
    with count_leaving_packets() as leaving:
        done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--agent", agent(pub, sub), "--mw", pub,
                               "--peer-mw", sub, *args, "--out", str(out)], capture_output=True, text=True,
                              env=dict(os.environ), timeout=timeout)
    assert "Traceback" not in done.stderr
    assert leaving["packets"] == 0, f"{leaving['packets']} packet(s) left loopback"
    return done, out


def records_of(done, out, points=1):
    assert done.returncode == 0, done.stderr[-3000:]
    records = written(out)
    assert [r["status"] for r in records] == ["ok"] * points, [r["error"] for r in records]
    return [validate_record(r) or r for r in records]


def on_its_own_side(r: dict, pub: str, sub: str) -> None:
    """Each side ran its own middleware, on one type and one topic."""
    assert (r["mw"], r["peer_mw"]) == (pub, sub)
    pub_config, sub_config = r["adapter"]["config"], r["adapter"]["sub_config"]
    for config in (pub_config, sub_config):
        assert config.get("type", config.get("message_type")) in (TYPE, "std_msgs/msg/UInt8MultiArray")
    if "topic_out" in pub_config and "topic_in" in sub_config and pub != "ros2" and sub != "ros2":
        assert pub_config["topic_out"] == sub_config["topic_in"] and pub_config["topic_out"].startswith("rt/")
    # what only each adapter's own configuration says
    own = {"cyclonedds": "xml", "fastdds": "interface_whitelist", "connext": "license", "ros2": "rmw_prefix"}
    assert own[pub] in pub_config and own[sub] in sub_config, (sorted(pub_config), sorted(sub_config))
    versions = {"cyclonedds": "0.10", "fastdds": "2.", "connext": "Connext DDS 6.1", "ros2": "rcl"}
    assert versions[sub] in r["adapter"]["sub_version"] and versions[pub] in r["adapter"]["version"]


PAIRS = [("cyclonedds", "connext"), ("connext", "cyclonedds"), ("fastdds", "cyclonedds"), ("cyclonedds", "fastdds"),
         ("ros2", "connext")]


@pytest.mark.side_by_side
@pytest.mark.parametrize("pub, sub", PAIRS)
def test_rate_counts_agree_on_both_sides(tmp_path, pub, sub):
    done, out = mwperf(tmp_path, pub, sub, "--mode", "rate", "--rate", "1000", "--size", "1k", *SHORT,
                       "--reliability", "reliable", "--history", "keep-all")
    (r,) = records_of(done, out)
    on_its_own_side(r, pub, sub)
    assert r["sent"] > 800 and r["received"] == r["sent"] and r["lost"] == 0, (r["sent"], r["received"], r["lost"])
    assert r["latency_us"]["count"] > 0
    assert f"{pub}->{sub}" in done.stdout or "Cross-vendor" in done.stdout


@pytest.mark.side_by_side
@pytest.mark.parametrize("pub, sub", [("connext", "cyclonedds"), ("fastdds", "connext")])
def test_latency_the_echo_is_the_peers(tmp_path, pub, sub):
    done, out = mwperf(tmp_path, pub, sub, "--mode", "latency", "--size", "1k", *SHORT)
    (r,) = records_of(done, out)
    on_its_own_side(r, pub, sub)
    assert r["received"] == r["sent"] == r["rtt_us"]["count"] > 100 and r["lost"] == 0


@pytest.mark.side_by_side
def test_a_pair_whose_transports_cannot_meet_fails_with_the_reason(tmp_path):
    started = time.monotonic()
    done, out = mwperf(tmp_path, "fastdds", "connext", "--mode", "rate", "--rate", "100", "--size", "1k", *SHORT,
                       "--transport", "shm", "--match-timeout", "3s")
    assert time.monotonic() - started < 60
    assert done.returncode != 0
    (r,) = written(out)
    assert r["status"] == "failed" and re.search(r"fastdds: no matching peer within \d s", r["error"]), r["error"]


@pytest.mark.parametrize("pub, sub, word", [("cyclonedds", "zenoh", "zenoh"), ("zenoh", "cyclonedds", "zenoh"),
                                            ("udp", "fastdds", "udp")])
@pytest.mark.side_by_side
def test_a_middleware_without_rtps_is_refused_up_front(tmp_path, pub, sub, word):
    path = agent(pub, sub)
    done = subprocess.run([sys.executable, "-m", "mwperf", "run", "--agent", path, "--mw", pub, "--peer-mw", sub,
                           "--out", str(tmp_path / "x")], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "--peer-mw" in lines[0] and word in lines[0] and "RTPS" in lines[0], done.stderr
    assert not (tmp_path / "x" / "results.jsonl").exists()


@pytest.mark.side_by_side
@pytest.mark.parametrize("pub, sub", [("cyclonedds", "connext"), ("connext", "fastdds")])
def test_keyed_instances_cross_vendors(tmp_path, pub, sub):
    done, out = mwperf(tmp_path, pub, sub, "--mode", "rate", "--rate", "1000", "--size", "1k", *SHORT, "--keyed",
                       "--instances", "16", "--reliability", "reliable", "--history", "keep-all")
    (r,) = records_of(done, out)
    keyed = "mwperf::msg::dds_::KeyedUInt8MultiArray_"
    assert r["adapter"]["config"]["type"] == r["adapter"]["sub_config"]["type"] == keyed
    assert r["sent"] > 800 and r["received"] == r["sent"] and r["lost"] == 0


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_across_a_namespace_link(tmp_path):
    done, out = mwperf(tmp_path, "connext", "cyclonedds", "--mode", "rate", "--rate", "1000", "--size", "1k", *SHORT,
                       "--link", "netns:gige")
    (r,) = records_of(done, out)
    assert r["link"]["kind"] == "netns" and r["received"] == r["sent"] > 800


@pytest.mark.side_by_side
def test_a_plan_of_pairs_makes_the_matrices(tmp_path):
    """A 2 x 2 sweep, as plans/interop.yaml's 4 x 4 (shorter): every cell of both matrices filled,
    each from a point whose counts agree."""
    plan = tmp_path / "pairs.yaml"
    plan.write_text("mw: [cyclonedds, connext]\npeer_mw: [cyclonedds, connext]\nmode: [latency, rate]\nrate: 1000\n"
                    "size: 1k\nreliability: reliable\nhistory: keep-last:10\ntransport: udp\nduration: 1s\nwarmup: 300ms\n")
    out = tmp_path / "sweep"
    with count_leaving_packets() as leaving:
        done = subprocess.run([sys.executable, "-m", "mwperf", "sweep", str(plan), "--agent",
                               agent("cyclonedds", "connext"), "--out", str(out), "--no-floor"],
                              capture_output=True, text=True, timeout=240)
    assert leaving["packets"] == 0
    records = records_of(done, out, points=8)
    assert {(r["mw"], r["peer_mw"] or r["mw"], r["mode"]) for r in records} == {
        (p, s, m) for p in ("cyclonedds", "connext") for s in ("cyclonedds", "connext") for m in ("latency", "rate")}
    assert all(r["received"] == r["sent"] > 0 for r in records)
    tables = [line for line in done.stdout.splitlines() if line.startswith("== Cross-vendor")]
    assert len(tables) == 4, tables  # p50 and loss, latency and rate
    for name in ("cyclonedds", "connext"):
        rows = [line for line in done.stdout.splitlines() if line.startswith(name + " ")]
        assert any(len(line.split()) == 3 and "-" not in line.split()[1:] for line in rows), rows
