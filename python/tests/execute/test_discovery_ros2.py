"""ROS 2's discovery points (mwperf.execute.discovery on the ros2 adapters'
participants, agent/src/adapters/ros2/ros2_discovery.cpp) against ground
truth: N participants match N x (N-1) x T pairs as rmw_fastrtps counts them,
each reader has the sample of every other participant (the payload names it),
the participants of one process are one process, the discovery range in force
is the profile's, and across a namespace pair the kernel counts the traffic."""

import os
import shutil

import pytest

from conftest import agent_with
from mwperf.errors import AgentError
from mwperf.execute.discovery import DiscoveryPoint, run_point
from mwperf.plan.where import parse_link

ROOT = os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "nft"))
TIMEOUT_NS = 30_000_000_000  # a generous bound: the participants report as soon as they are complete

# (adapter, profile, the rcl discovery range the record must say)
LOOPBACK = [("ros2", "unicast", "SYSTEM_DEFAULT"), ("ros2", "tuned", "LOCALHOST"),
            ("ros2-kilted", "unicast", "SYSTEM_DEFAULT")]


@pytest.mark.e2e
@pytest.mark.side_by_side  # loopback, its own run id and domain, no timing asserted
@pytest.mark.parametrize("mw, profile, discovery_range", LOOPBACK)
def test_three_ros2_participants_match_every_pair_and_see_every_sample(mw, profile, discovery_range):
    r = run_point(agent_with(mw), DiscoveryPoint(mw, 3, 2, profile, TIMEOUT_NS), None)
    assert r["complete"], r
    assert r["remote_pairs"] == r["pairs_expected"] == 3 * 2 * 2
    assert r["samples_from"] == 3 * 2 * 2  # every other participant's sample on every topic
    assert r["config"]["discovery_range"].startswith(discovery_range)
    assert r["config"]["multicast"] == "none" and r["traffic"] is None and r["exit_codes"] == [0, 0, 0]


@pytest.mark.e2e
@pytest.mark.side_by_side  # loopback, its own run id and domain, no timing asserted
def test_ros2_participants_as_threads_are_one_process_and_loopback_refuses_multicast():
    """Four rcl contexts in one agent process (Fast DDS's intraprocess delivery off): every pair, every sample,
    one process; the default profile (Jazzy's SUBNET range, multicast on every interface) refused on lo."""
    agent = agent_with("ros2")
    r = run_point(agent, DiscoveryPoint("ros2", 4, 1, "unicast", TIMEOUT_NS, "threads"), None)
    assert r["complete"] and r["participants_as"] == "threads", r
    assert r["remote_pairs"] == r["pairs_expected"] == 4 * 3 and r["samples_from"] == 4 * 3
    assert len(r["exit_codes"]) == 1 and r["config"]["intraprocess_delivery"] == "off"
    assert "<intraprocess_delivery>OFF</intraprocess_delivery>" in r["config"]["fastdds_profile"]
    with pytest.raises(AgentError, match="SUBNET range .* not on lo"):
        run_point(agent, DiscoveryPoint("ros2", 2, 1, "default", TIMEOUT_NS), None)


@pytest.mark.skipif(not ROOT, reason="needs root, ip and nft")
@pytest.mark.measuring  # a namespace pair and its nftables counters
@pytest.mark.e2e
@pytest.mark.parametrize("mw, profile, discovery_range", [("ros2", "default", "SUBNET"),
                                                          ("ros2-kilted", "unicast", "SYSTEM_DEFAULT")])
def test_discovery_across_a_namespace_pair_matches_every_pair_and_is_counted(mw, profile, discovery_range):
    """Three participants over a namespace pair (two on one side, one on the other): ROS 2 Jazzy's own default
    (SPDP multicast on the link), and Kilted's unicast profile (its Fast DDS 3.2 with a veth whitelisted opened
    no socket there): every pair matched, and the kernel counted the discovery and the samples."""
    r = run_point(agent_with(mw), DiscoveryPoint(mw, 3, 1, profile, TIMEOUT_NS), parse_link("netns"))
    assert r["complete"], r
    assert r["remote_pairs"] == r["pairs_expected"] == 3 * 2 and r["samples_from"] == 3 * 2
    assert r["config"]["discovery_range"].startswith(discovery_range)
    assert r["traffic"]["metatraffic_ports"]["packets"] > 0
    assert r["traffic"]["udp"]["packets"] > r["traffic"]["metatraffic_ports"]["packets"]  # the samples, too
