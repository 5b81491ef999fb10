"""zenoh's discovery participant (agent/src/adapters/zenoh/zenoh_discovery.cpp) in discovery points
(mwperf.execute.discovery), against ground truth the tests set up: the pairs N x (N-1) x T, every other
participant's index in the samples each reader took, and (across a namespace pair) the kernel's
counters of what crossed the link: TCP, and no UDP at all with scouting off."""

import os
import shutil

import pytest

from conftest import agent_with
from mwperf.execute.discovery import DiscoveryPoint, run_point
from mwperf.execute.netns import SUBNET
from mwperf.plan.where import parse_link

ROOT = os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "nft"))
needs_root = pytest.mark.skipif(not ROOT, reason="needs root, ip and nft")
pytestmark = pytest.mark.measuring  # the middleware's processes


@pytest.mark.e2e
@pytest.mark.side_by_side  # loopback, its own run id (its ports come from it), no timing asserted
def test_unicast_peers_match_n_times_n_minus_1_times_t_pairs():
    """Three peers, two topics, scouting off and explicit endpoints only: each reader counts the
    writers' liveliness tokens of its topic (its own included) and has the sample of each other."""
    r = run_point(agent_with("zenoh"), DiscoveryPoint("zenoh", 3, 2, "unicast", 20_000_000_000), None)
    assert r["complete"], r
    assert r["matched_writers"] == 3 * 3 * 2 and r["remote_pairs"] == r["pairs_expected"] == 3 * 2 * 2
    assert r["samples_from"] == 3 * 2 * 2  # what the samples' payload says: every other participant, every topic
    assert r["config"]["mode"] == "peer" and r["config"]["scouting"] == "off (multicast, gossip)"
    assert r["config"]["listen"].startswith("tcp/127.0.0.1:")
    assert [p["matched_writers"] for p in r["participants_detail"]] == [3 * 2] * 3


@pytest.mark.e2e
@pytest.mark.side_by_side  # loopback, its own run id (its ports come from it), no timing asserted
def test_through_a_router_as_threads_of_one_process():
    """Four participants in one process: participant 0's session a router, the other three its clients
    (no endpoint but the router's, no scouting): every pair matched and every sample seen through it."""
    r = run_point(agent_with("zenoh"), DiscoveryPoint("zenoh", 4, 1, "tuned", 20_000_000_000, "threads"), None)
    assert r["complete"] and r["participants_as"] == "threads", r
    assert r["remote_pairs"] == r["pairs_expected"] == 4 * 3 and r["samples_from"] == 4 * 3
    assert len(r["exit_codes"]) == 1  # one process hosted the four
    assert r["config"]["mode"].startswith("router") and r["config"]["router"].startswith("tcp/127.0.0.1:")


@needs_root
@pytest.mark.e2e
def test_through_a_router_across_a_namespace_pair_is_tcp_only():
    """Participant 0 (the router) and 2 in one namespace, 1 in the other, scouting off: every pair matched
    through the router's TCP sessions, and the kernel counted TCP on the link and not one UDP datagram."""
    r = run_point(agent_with("zenoh"), DiscoveryPoint("zenoh", 3, 1, "tuned", 20_000_000_000), parse_link("netns"))
    assert r["complete"], r
    assert r["remote_pairs"] == r["pairs_expected"] == 3 * 2 and r["samples_from"] == 3 * 2
    assert r["config"]["router"].startswith(f"tcp/{SUBNET}.")  # the first namespace's address
    assert r["traffic"]["tcp"]["packets"] > 0
    assert r["traffic"]["udp"] == {"packets": 0, "bytes": 0}
