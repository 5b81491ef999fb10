"""--peer-mw (plan key peer_mw): a publisher of one RTPS middleware against
the subscriber of another. Refusals before anything runs, the point it makes,
the agents' arguments and the record's field."""

import pytest

from conftest import described, run_request
from mwperf.errors import UsageError
from mwperf.execute.point import agent_argv
from mwperf.plan.sweep_plan import point_hash
from mwperf.plan.validate import build_run_options

DDS = described()


def build(**options):
    options = {"out": "results/x", **options}
    return build_run_options(run_request(**options), DDS, cpu_count=2)


def test_the_subscriber_runs_the_peers_middleware():
    opts = build(mw="connext", peer_mw="cyclonedds", mode="rate", rate="1000")
    (point,) = opts.points()
    assert point.get("peer-mw") == "cyclonedds"
    assert point.label().startswith("connext->cyclonedds rate 1024 B 1000 Hz")
    pub = agent_argv("A", "pub", point, opts, 0)
    sub = agent_argv("A", "sub", point, opts, 0)
    assert pub[pub.index("--mw") + 1] == "connext" and pub[pub.index("--peer-mw") + 1] == "cyclonedds"
    assert sub[sub.index("--mw") + 1] == "cyclonedds" and "--peer-mw" not in sub
    # the QoS the same on both sides
    opts = build(mw="connext", peer_mw="fastdds", mode="rate", rate="1000",
                 qos=dict(reliability="best-effort", transport="udp", history="keep-all"))
    (point,) = opts.points()
    pub, sub = agent_argv("A", "pub", point, opts, 0), agent_argv("A", "sub", point, opts, 0)
    for flag in ("--reliability", "--transport", "--history", "--mode"):
        assert pub[pub.index(flag) + 1] == sub[sub.index(flag) + 1], flag


def test_its_own_peer_is_a_point_like_any_other():
    opts = build(mw="cyclonedds,fastdds", peer_mw="cyclonedds")
    same, cross = opts.points()
    assert same.get("peer-mw") is None and cross.get("peer-mw") == "cyclonedds"
    plain = build(mw="cyclonedds")
    assert point_hash(opts, same, 0) == point_hash(plain, plain.points()[0], 0)
    alone = build(mw="fastdds")
    assert point_hash(opts, cross, 0) != point_hash(alone, alone.points()[0], 0)


@pytest.mark.parametrize("mw, peer, message", [
    ("cyclonedds", "zenoh", r"^--peer-mw zenoh: zenoh cannot be the other side of a DDS point \(it does not "
                            r"speak RTPS"),
    ("cyclonedds", "udp", r"^--peer-mw udp: udp cannot be the other side"),
    ("cyclonedds", "nosuch", r"^--peer-mw nosuch: unknown middleware"),
    ("zenoh", "cyclonedds", r"^--peer-mw cyclonedds: not supported by zenoh \(it does not speak RTPS"),
    ("iceoryx", "fastdds", r"^--peer-mw fastdds: not supported by iceoryx"),
])
def test_a_pair_that_cannot_speak_is_refused_up_front(mw, peer, message):
    if mw not in DDS.adapters and mw != "nosuch":
        pytest.skip(f"{mw} is not in the recorded description")
    with pytest.raises(UsageError, match=message):
        build(mw=mw, peer_mw=peer)


def test_what_the_peer_cannot_honour_on_its_side_is_refused():
    # ros2 receives by wait set only: a listener asked of the subscriber is refused, naming ros2
    with pytest.raises(UsageError, match=r"^--receive listener: not supported by ros2"):
        build(mw="cyclonedds", peer_mw="ros2", qos=dict(receive="listener"))
    # a transport only one side has
    with pytest.raises(UsageError, match=r"^--transport shm: not supported by cyclonedds"):
        build(mw="connext", peer_mw="cyclonedds", qos=dict(transport="shm"))
    # asynchronous writes: the echo writes too, and Cyclone DDS has none
    with pytest.raises(UsageError, match=r"^--async: not supported by cyclonedds"):
        build(mw="connext", peer_mw="cyclonedds", qos=dict(async_=True))
    (point,) = build(mw="connext", peer_mw="fastdds", qos=dict(async_=True)).points()
    assert point.get("async") is True


def test_without_peer_mw_every_rtps_middleware_pairs():
    opts = build(peer_mw="cyclonedds")
    assert set(opts.mws) == {n for n, a in DDS.adapters.items() if a.honours("rtps")}
    assert {"cyclonedds", "fastdds", "connext", "ros2"} <= set(opts.mws)


def test_a_plan_over_peers_and_levels_keeps_each_level_apart():
    """peer_mw x security: each cell at each level, both sides secured at its level (the subscriber's agent
    too), and each level's cells a matrix of their own (the report's interop matrices, from these points)."""
    from pathlib import Path

    from mwperf.execute import keystore
    from mwperf.export.interop import matrices
    from mwperf.plan.sweep_plan import expand, parse_plan

    plan = parse_plan("mw: [cyclonedds, fastdds]\npeer_mw: [cyclonedds, fastdds]\nsecurity: [none, encrypt]\n"
                      "transport: udp\nsize: 1k\nlaunches: 1\n", "p.yaml")
    points = expand(plan, out=Path("results/x"), agent=None, agent_info=DDS, cpu_count=2)
    cells = {(p.point.mw, p.point.get("peer-mw") or p.point.mw, p.point.get("security")) for p in points}
    assert cells == {(a, b, level) for a in ("cyclonedds", "fastdds") for b in ("cyclonedds", "fastdds")
                     for level in ("none", "encrypt")}
    try:
        for p in points:
            pub, sub = agent_argv("A", "pub", p.point, p.opts, 0), agent_argv("A", "sub", p.point, p.opts, 0)
            level = p.point.get("security")
            for side in (pub, sub):
                assert (side[side.index("--security") + 1] if "--security" in side else "none") == level
                assert ("--enclave" in side) == (level == "encrypt")
    finally:
        keystore.remove_made()
    records = [_record(p.point.mw, p.point.get("peer-mw"), p.point.get("security")) for p in points]
    grouped = matrices(records)
    assert len(grouped) == 2 and all(len(m.cells) == 4 for m in grouped)
    assert sorted(m.qos for m in grouped) == ["reliable, keep-last:10, volatile, udp",
                                              "reliable, keep-last:10, volatile, udp, security encrypt"]
    for m in grouped:
        assert len({r.qos("security") for rs in m.cells.values() for r in rs}) == 1


def _record(mw, peer, level):
    import copy
    import json

    from conftest import FIXTURES, typed

    line = (FIXTURES / "results-extended.jsonl").read_text().splitlines()[2]  # fastdds latency 1 KiB reliable udp
    r = copy.deepcopy(json.loads(line))
    r["mw"], r["peer_mw"] = mw, peer
    r["qos"]["security"] = level
    return typed(r)
