"""Discovery as a measured mode: N participants (one agent ``discover`` each,
docs/agent-protocol.md) with T topics, each participant a writer and a reader
on every topic. All are started, then told ``go`` together; each reports when
its readers had matched every writer they should (the middleware's count,
T x N with its own) and when it had a sample from each of the N-1 others (the
payload names the writer: the core's own count), its CPU and RSS. The point's
times run from the first ``go`` to the last participant's.

With ``participants_as`` threads, one agent process (one per namespace of a
pair) hosts all the participants of its side, each its own participant of
the middleware opened on a thread of its own: N of 50 to 100 on a small
machine; CPU and RSS per participant are then the process's shared out.

On loopback only the ``unicast`` discovery runs (the others multicast). With
``--link netns`` the participants alternate between the pair's two
namespaces, each middleware may use its own default discovery (multicast on
the veth, which never leaves the machine), and the kernel counts the traffic
on the link: nftables counters at each namespace's egress onto the veth, every
UDP packet and those to RTPS's discovery ports (the metatraffic ports of the
standard port mapping are the even ones, user data the odd ones: Fast DDS keeps
them apart, while Cyclone DDS's default single socket takes its user data on
the even port too), read once every participant has reported, before any is
stopped. Every participant's one sample per topic crosses too, so ``udp`` is
discovery plus N x (N-1) x T small samples and their acknowledgments. ``tcp``
counts the TCP packets likewise: zenoh discovers over its TCP sessions (its
scouting alone is UDP multicast), so do a router's clients.
"""

from __future__ import annotations

import json
import random
import subprocess
import time
from dataclasses import dataclass
from typing import Any

from mwperf.errors import AgentError, PointFailed, ServiceError, UsageError
from mwperf.execute import services
from mwperf.execute.agent import describe
from mwperf.execute.netns import NetnsPair, nft_script
from mwperf.execute.placement import Local
from mwperf.execute.process import AgentProcess
from mwperf.execute.services import Service
from mwperf.execute.session import expect_event, participants_go, participants_stop
from mwperf.plan.where import LinkProfile
from mwperf.table import snapshot

__all__ = ["DiscoveryPoint", "run_point", "COUNTER_TABLE", "add_counters", "read_counters", "summarise"]

COUNTER_TABLE = "mwperf_discovery"
#: How long each participant may take to exit after its ``stop`` (a middleware
#: that lingers for readers it cannot reach any more is killed then).
EXIT_TIMEOUT_S = 3.0
#: How long every participant may take to start and say ``ready``.
READY_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class DiscoveryPoint:
    mw: str
    participants: int
    topics: int
    discovery: str  # the agent's --discovery profile
    timeout_ns: int
    participants_as: str = "processes"  # or threads: one agent per side hosts that side's participants

    @property
    def index(self) -> int:
        """What a service names its files after (services.py: a rosmaster's home): one point at a time."""
        return 0


def add_counters(ns: str, dev: str) -> None:
    """nftables counters in namespace ``ns`` on what leaves through ``dev``: all UDP, UDP to even ports, all TCP."""
    script = (f"table inet {COUNTER_TABLE} {{\n chain out {{\n  type filter hook postrouting priority 0;\n"
              f"  oifname \"{dev}\" meta l4proto udp counter\n"
              f"  oifname \"{dev}\" udp dport & 1 == 0 counter\n"
              f"  oifname \"{dev}\" meta l4proto tcp counter\n }}\n}}\n")
    nft_script(ns, script)


def read_counters(ns: str) -> tuple[dict, dict, dict]:
    """(all UDP, discovery, all TCP) counters of namespace ``ns``: ``{"packets": P, "bytes": B}`` each."""
    done = subprocess.run(["ip", "netns", "exec", ns, "nft", "-j", "list", "table", "inet", COUNTER_TABLE],
                          capture_output=True, text=True, timeout=30)
    if done.returncode != 0:
        raise OSError(f"nft in {ns}: {done.stderr.strip()}")
    counters = [item["rule"]["expr"] for item in json.loads(done.stdout)["nftables"] if "rule" in item]
    found = [next(e["counter"] for e in expr if "counter" in e) for expr in counters]
    udp, meta, tcp = ({"packets": f["packets"], "bytes": f["bytes"]} for f in found[:3])
    return udp, meta, tcp


def run_point(agent: str, point: DiscoveryPoint, link: LinkProfile | None) -> dict:
    """One discovery point: its record (:func:`summarise`), the namespaces and processes gone after it. On
    this host, the adapter's declared service (iceoryx's RouDi, ROS 1's rosmaster: services.py) runs for the
    point, started before the participants and stopped after them; on a link the participants refuse."""
    if link is not None:
        with NetnsPair(link) as pair:
            return _run(agent, point, pair, Service(Local(), point))
    try:
        with services.running(describe(agent).adapters.get(point.mw), Local(), point) as service:
            return _run(agent, point, None, service)
    except ServiceError as exc:
        raise AgentError(str(exc)) from None


def _run(agent: str, point: DiscoveryPoint, pair: NetnsPair | None, service: Service) -> dict:
    run_id = random.randrange(1, 1 << 31)
    domain = 1 + run_id % 200  # away from domain 0, where other DDS processes of the machine may be
    parts: list[AgentProcess] = []
    hosted: list[int] = []  # the participants each process hosts
    try:
        for i, count, stride in _processes(point, pair is not None):
            values: dict[str, Any] = {"mw": point.mw, "participants": point.participants, "topics": point.topics,
                                      "index": i, "discovery": point.discovery, "domain": domain,
                                      "timeout": point.timeout_ns}
            if point.participants_as == "threads":
                values.update({"participants-as": "threads", "hosted": count, "stride": stride})
            hosted.append(count)
            prefix: list[str] = []
            if pair is not None:
                side = i % 2
                values.update(nic=pair.ifname[side], peer=pair.addr[1 - side], server=pair.addr[0])
                prefix = pair.exec_prefix("pub" if side == 0 else "sub")
            parts.append(AgentProcess(prefix + [agent, *snapshot().argv("discover", values)], f"participant {i}",
                                      env={"MWPERF_RUN_ID": str(run_id), **service.agent_env("pub")}))
        for p in parts:
            _expect(p, "ready", READY_TIMEOUT_S)
        if pair is not None:
            for ns, dev in zip(pair.ns, pair.ifname):
                add_counters(ns, dev)
                # Multicast's route on the veth, as a host has one on its NIC: a middleware that joins its
                # groups on "any interface" (Fast DDS 2.9 in a namespace) then joins them there.
                subprocess.run(["ip", "-n", ns, "route", "add", "224.0.0.0/4", "dev", dev], check=True, timeout=30)
        participants_go(parts)
        deadline = time.monotonic() + point.timeout_ns / 1e9 + 10
        events = [_expect(p, "discovered", deadline - time.monotonic()) for p, count in zip(parts, hosted)
                  for _ in range(count)]
        traffic = None
        if pair is not None:
            counted = [read_counters(ns) for ns in pair.ns]
            traffic = {key: {unit: sum(c[k][unit] for c in counted) for unit in ("packets", "bytes")}
                       for k, key in enumerate(("udp", "metatraffic_ports", "tcp"))}
    finally:
        codes = participants_stop(parts, EXIT_TIMEOUT_S)  # one at a time; one not gone by then is killed (None)
        for p in parts:
            p.kill()
    return summarise(point, events, traffic, pair.as_dict() if pair is not None else None, codes)


def _processes(point: DiscoveryPoint, two_sides: bool) -> list[tuple[int, int, int]]:
    """(first index, participants hosted, stride) of each agent process: one participant each, or with threads
    one process per side (the participants alternate between the sides as processes do)."""
    n = point.participants
    if point.participants_as != "threads":
        return [(i, 1, 1) for i in range(n)]
    return [(0, (n + 1) // 2, 2), (1, n // 2, 2)] if two_sides else [(0, n, 1)]


def _expect(p: AgentProcess, kind: str, seconds: float) -> dict:
    """The participant's next ``kind`` event; UsageError when the agent refused its options (exit 2: one
    line naming the value), AgentError with the reason otherwise."""
    try:
        return expect_event(p, {kind}, max(seconds, 0.0), kind)
    except PointFailed as exc:
        if p.wait_exit(time.monotonic() + 2) == 2 and p.last_stderr():
            raise UsageError(None, None, p.last_stderr().removeprefix("mwperf-agent: ")) from None
        raise AgentError(str(exc)) from None


def summarise(point: DiscoveryPoint, events: list[dict], traffic: dict | None, link: dict | None,
              codes: list[int | None]) -> dict:
    """The point's record from its participants' ``discovered`` events."""
    n, t = point.participants, point.topics
    start = min(e["go_ns"] for e in events)

    def until(key: str) -> float | None:
        if any(e[key] < 0 for e in events):
            return None
        return round((max(e["go_ns"] + e[key] for e in events) - start) / 1e6, 3)

    matched = sum(e["matched_writers"] for e in events)
    return {
        "mw": point.mw, "version": events[0]["version"], "mode": "discovery", "participants": n, "topics": t,
        "participants_as": point.participants_as, "discovery": point.discovery, "config": events[0]["config"],
        "link": link, "complete": all(e["complete"] for e in events),
        "time_to_match_ms": until("matched_ns"), "time_to_first_sample_ms": until("first_sample_ns"),
        # The middleware's count includes each reader's own participant's writer (every DDS matches local endpoints).
        "matched_writers": matched, "remote_pairs": matched - n * t, "pairs_expected": n * (n - 1) * t,
        "samples_from": sum(e["samples_from"] for e in events),
        "cpu_ms": [round(e["cpu_ns"] / 1e6, 3) for e in events], "rss_kb": [e["rss_kb"] for e in events],
        "traffic": traffic, "poll_ms": events[0]["poll_ns"] / 1e6, "exit_codes": codes,
        "participants_detail": [{k: e[k] for k in ("index", "open_ns", "matched_ns", "first_sample_ns",
                                                   "matched_writers", "samples_from", "cpu_ns", "rss_kb",
                                                   "rss_growth_kb")} for e in events],
    }
