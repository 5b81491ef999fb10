"""Discovery points (mwperf.execute.discovery) against ground truth the tests
set up: the kernel's counters against datagrams the test sends itself, the
pairs the middleware matched against N x (N-1) x T, and a link that drops
everything (nftables, 100 % loss) against a point that then matches nothing
across it. Needs root, ip and nft, and the agent with Cyclone DDS."""

import os
import shutil
import subprocess
import sys

import pytest

from conftest import built_agent
from mwperf.errors import AgentError
from mwperf.execute.discovery import DiscoveryPoint, add_counters, read_counters, run_point
from mwperf.execute.netns import NetnsPair
from mwperf.plan.where import parse_link

ROOT = os.geteuid() == 0 and all(shutil.which(t) for t in ("ip", "nft"))
needs_root = pytest.mark.skipif(not ROOT, reason="needs root, ip and nft")
pytestmark = pytest.mark.measuring  # namespaces, nftables, the middleware's processes

SEND = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for port, n, size in ((7410, 7, 100), (7411, 5, 300)):
    for _ in range(n):
        s.sendto(b"x" * size, (sys.argv[1], port))
"""


@needs_root
def test_the_counters_count_what_the_test_sent():
    """7 datagrams of 100 B to a discovery port (even), 5 of 300 B to a data port (odd), a -> b."""
    with NetnsPair(parse_link("netns")) as pair:
        for ns, dev in zip(pair.ns, pair.ifname):
            add_counters(ns, dev)
        subprocess.run(["ip", "netns", "exec", pair.ns[0], sys.executable, "-c", SEND, pair.addr[1]], check=True,
                       timeout=30)
        (udp_a, disc_a, tcp_a), (udp_b, disc_b, tcp_b) = read_counters(pair.ns[0]), read_counters(pair.ns[1])
    assert disc_a == {"packets": 7, "bytes": 7 * (100 + 28)}  # IPv4 and UDP headers: 28 B
    assert udp_a == {"packets": 12, "bytes": 7 * 128 + 5 * 328}
    assert udp_b == disc_b == tcp_a == tcp_b == {"packets": 0, "bytes": 0}  # nothing went b -> a, no TCP


@pytest.mark.e2e
@pytest.mark.side_by_side  # loopback, its own run id and domain, no timing asserted
def test_n_participants_match_n_times_n_minus_1_times_t_pairs():
    r = run_point(built_agent(), DiscoveryPoint("cyclonedds", 3, 2, "unicast", 20_000_000_000), None)
    assert r["complete"], r
    assert r["remote_pairs"] == r["pairs_expected"] == 3 * 2 * 2
    assert r["samples_from"] == 3 * 2 * 2  # what the samples' payload says: every other participant, every topic
    assert 0 < r["time_to_match_ms"] <= r["time_to_first_sample_ms"]
    assert r["traffic"] is None and len(r["cpu_ms"]) == len(r["rss_kb"]) == 3


@needs_root
@pytest.mark.e2e
@pytest.mark.parametrize("spec, across", [("netns", True), ("netns:lossy:100%", False)])
def test_default_discovery_across_the_link_is_counted_and_a_dropping_link_matches_nothing(spec, across):
    """Two participants, one per namespace: with the link dropping every packet at the receiver
    they never match, yet the sender's counters count what left."""
    r = run_point(built_agent(), DiscoveryPoint("cyclonedds", 2, 1, "default", 1_500_000_000), parse_link(spec))
    assert r["complete"] is across
    assert r["remote_pairs"] == (2 if across else 0)
    assert r["samples_from"] == (2 if across else 0)
    assert r["traffic"]["metatraffic_ports"]["packets"] > 0
    assert r["traffic"]["udp"]["packets"] >= r["traffic"]["metatraffic_ports"]["packets"]
    assert "<NetworkInterface name=\"mwa" in r["config"]["xml"] and "AllowMulticast" not in r["config"]["xml"]


@pytest.mark.e2e
@pytest.mark.side_by_side  # loopback, its own run id and domain, no timing asserted
def test_participants_as_threads_of_one_process_match_as_processes_do():
    """Four Fast DDS participants in one agent process, intraprocess delivery off: every pair matched, every
    sample seen, one process (its CPU and RSS shared out evenly); Cyclone DDS refused with the reason."""
    r = run_point(built_agent(), DiscoveryPoint("fastdds", 4, 1, "unicast", 20_000_000_000, "threads"), None)
    assert r["complete"] and r["participants_as"] == "threads", r
    assert r["remote_pairs"] == r["pairs_expected"] == 4 * 3 and r["samples_from"] == 4 * 3
    assert len(set(r["rss_kb"])) == 1 and len(r["exit_codes"]) == 1  # one process hosted the four
    assert r["config"]["intraprocess_delivery"] == "off"
    with pytest.raises(AgentError, match="one instance of a domain per process"):
        run_point(built_agent(), DiscoveryPoint("cyclonedds", 2, 1, "unicast", 5_000_000_000, "threads"), None)
