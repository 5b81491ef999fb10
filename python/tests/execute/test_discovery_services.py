"""Discovery points of the middlewares whose discovery is a daemon's
(mwperf.execute.discovery with services.py): iceoryx through RouDi, ROS 1
through a rosmaster, each started by the controller for the point and gone
after it. Ground truth: the samples' payloads name their writers (every other
participant on every topic), the pairs against N x (N-1) x T, and what is left
on the machine afterwards (the daemon's process, its shared memory, its
files) against what was there before."""

import glob
import os

import pytest

from conftest import agent_with, leftover_segments, pids_with_cmdline, shm_segments
from mwperf.errors import AgentError
from mwperf.execute.discovery import DiscoveryPoint, run_point

pytestmark = pytest.mark.measuring  # the middleware's daemon and processes

N, T = 3, 2


def left_behind(before: set[str]) -> list[str]:
    """What a daemon of ours or its participants left: processes, segments, files (a master's home is named
    after the controller that started it, this process)."""
    files = (glob.glob(f"/tmp/mwperf-rosmaster.{os.getpid()}.*") + glob.glob("/tmp/mwperf-roudi.*") +
             glob.glob("/tmp/mwperf-iox-*"))
    return (pids_with_cmdline("iox-roudi") + pids_with_cmdline("rosmaster --core") +
            pids_with_cmdline("discover --mw") + leftover_segments(before) + files)


def matches_every_pair(mw: str) -> dict:
    agent = agent_with(mw)
    before = shm_segments()
    r = run_point(agent, DiscoveryPoint(mw, N, T, "unicast", 30_000_000_000), None)
    assert r["complete"], r
    assert r["samples_from"] == N * (N - 1) * T  # the payloads: every other participant, every topic
    # the middleware's count, each reader's own participant's writer included
    assert r["matched_writers"] == N * N * T and r["remote_pairs"] == r["pairs_expected"] == N * (N - 1) * T
    assert r["exit_codes"] == [0] * N and r["traffic"] is None
    assert not left_behind(before - {"iceoryx_mgmt"}) and not os.path.exists("/dev/shm/iceoryx_mgmt")
    return r


@pytest.mark.e2e  # RouDi: one per machine, never side by side
def test_iceoryx_participants_match_through_roudi_and_leave_nothing():
    r = matches_every_pair("iceoryx")
    assert "RouDi" in r["config"]["discovery"] and "queue 3" in r["config"]["qos"]


@pytest.mark.e2e  # apart: what it checks is left behind is any RouDi, rosmaster or participant on the machine
def test_ros1_participants_match_through_the_rosmaster_and_leave_nothing():
    r = matches_every_pair("ros1")
    assert r["config"]["master"].startswith("http://127.0.0.1:") and r["config"]["ros_ip"] == "127.0.0.1"


@pytest.mark.e2e
@pytest.mark.parametrize("mw, reason", [("iceoryx", "one runtime per process"), ("ros1", "one node per process")])
def test_threads_are_refused_with_the_reason(mw, reason):
    before = shm_segments()
    with pytest.raises(AgentError, match=reason):
        run_point(agent_with(mw), DiscoveryPoint(mw, 2, 1, "unicast", 5_000_000_000, "threads"), None)
    assert not left_behind(before - {"iceoryx_mgmt"})


@pytest.mark.e2e
@pytest.mark.skipif(os.geteuid() != 0, reason="needs root (a namespace pair)")
@pytest.mark.parametrize("mw, reason", [("iceoryx", "serve one host"), ("ros1", "not in a namespace of the pair")])
def test_a_namespace_pairs_link_is_refused_with_the_reason(mw, reason):
    from mwperf.plan.where import parse_link

    with pytest.raises(AgentError, match=reason):
        run_point(agent_with(mw), DiscoveryPoint(mw, 2, 1, "unicast", 5_000_000_000), parse_link("netns"))
