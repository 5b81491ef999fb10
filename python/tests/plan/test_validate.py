import json
from pathlib import Path

import pytest

from conftest import described, run_request
from mwperf.errors import UsageError
from mwperf.plan.options import CpuPlacement
from mwperf.plan.validate import build_run_options, default_cpu, parse_cpu


SOCKETS = described(only=("udp", "tcp"))
DDS = described()


def build(agent_info=SOCKETS, cpu_count=4, **options):
    options = {"mw": "udp", "out": "results/x", **options}
    return build_run_options(run_request(**options), agent_info, cpu_count=cpu_count)


def test_defaults():
    opts = build()
    assert opts.mws == ("udp",)
    (point,) = opts.points()
    assert (point.mode, point.size, point.get("duration"), point.get("warmup")) == (
        "latency", 1024, 5_000_000_000, 1_000_000_000)
    assert opts.cpu == CpuPlacement(0, 1)
    assert point.get("wait") == "block"
    (tput,) = build(mode="throughput").points()
    assert tput.get("latency-count") == 10000 and point.get("latency-count") is None  # throughput only
    assert opts.run_id == "x"


def test_default_mw_is_every_adapter():
    assert build(mw=None).mws == ("udp", "tcp")


def test_default_out_is_utc_timestamp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = build(out=None).out
    assert out.parent == Path("results")
    assert len(out.name) == 15 and out.name[8] == "-"


def test_points_cartesian_product():
    opts = build(mw="udp,tcp", mode="latency,rate", size="32,1k", rate="100,1k")
    points = opts.points()
    # per mw: latency x 2 sizes + rate x 2 sizes x 2 rates = 6
    assert len(points) == 12
    assert [p.index for p in points] == list(range(12))
    assert points[0].mw == "udp" and points[0].mode == "latency" and points[0].rate_hz is None
    rate_points = [p for p in points if p.mode == "rate"]
    assert {(p.size, p.rate_hz) for p in rate_points} == {(32, 100.0), (32, 1000.0), (1024, 100.0), (1024, 1000.0)}
    assert all(p.rate_hz is None for p in points if p.mode != "rate")


def test_duplicates_removed():
    opts = build(mw="udp,udp", size="1k,1024")
    assert opts.mws == ("udp",) and opts.given("size") == (1024,)


def test_size_limits_come_from_the_agents_description():
    import dataclasses

    udp = SOCKETS.adapters["udp"]
    small = dataclasses.replace(SOCKETS, adapters={"shm": dataclasses.replace(udp, name="shm",
                                                                              limits={**udp.limits, "max_size": 4096})})
    with pytest.raises(UsageError, match="--size 8KiB: shm carries at most 4096 bytes per message"):
        build(mw="shm", size="8k", agent_info=small)
    assert build(mw="shm", size="4k", agent_info=small).given("size") == (4096,)


def test_ranges_come_from_the_agents_description():
    with pytest.raises(UsageError, match="--rate 1e30: must be from"):
        build(mode="rate", rate="1e30")
    with pytest.raises(UsageError, match="--rate 0.0001: not one sample is due"):
        build(mode="rate", rate="0.0001")
    with pytest.raises(UsageError, match="--latency-count 5: only with --mode throughput"):
        build(mode="latency", latency_count="5")
    assert build(mode="throughput", latency_count="5").points()[0].get("latency-count") == 5


def test_size_limit_boundaries():
    assert build(size="65507").given("size") == (65507,)
    assert build(size="32").given("size") == (32,)
    assert build(mw="tcp", size="16MiB").given("size") == (16 * 1048576,)
    with pytest.raises(UsageError, match="--size 16: must be from 32 to"):
        build(size="16")


def test_cpu_parsing():
    assert parse_cpu("0,1", 2) == CpuPlacement(0, 1)
    assert parse_cpu("1,1", 2).placement == "same-core"
    assert parse_cpu("0,1", 2).placement == "cross-core"
    assert parse_cpu("none", 2) == CpuPlacement(None, None)
    assert parse_cpu("none", 2).placement == "unpinned"
    assert str(parse_cpu("none", 2)) == "none"
    with pytest.raises(UsageError, match="--cpu 0,2: core 2 does not exist"):
        parse_cpu("0,2", 2)
    assert default_cpu(1) == CpuPlacement(0, 0)
    assert default_cpu(2) == CpuPlacement(0, 1)
    assert build(cpu_count=1).cpu == CpuPlacement(0, 0)


def test_as_dict_is_json():
    opts = build(mode="rate", rate="1k", cpu="none")
    data = json.loads(json.dumps(opts.as_dict()))
    assert data["options"]["rate"] == ["1000"]
    assert data["cpu"] == {"pub": None, "sub": None, "placement": "unpinned"}
    assert data["out"] == "results/x"
    assert "adapters" not in data


def test_zero_warmup_allowed():
    assert build(warmup="0").points()[0].get("warmup") == 0
    assert build(point_timeout="0").point_timeout_ns == 0


def test_qos_points_order_and_defaults():
    opts = build(mw="udp,fastdds", mode="latency,throughput", size="64", agent_info=DDS,
                 qos=dict(transport="default,udp", reliability="best-effort"))
    points = [(p.mw, p.get("transport"), p.get("reliability"), p.get("history"), p.get("durability"), p.mode)
              for p in opts.points()]
    assert points == [  # mw, mode, then the table's order (transport last)
        ("udp", None, "best-effort", None, None, "latency"),
        ("udp", "udp", "best-effort", None, None, "latency"),
        ("udp", None, "best-effort", None, None, "throughput"),
        ("udp", "udp", "best-effort", None, None, "throughput"),
        ("fastdds", None, "best-effort", "keep-last:10", "volatile", "latency"),
        ("fastdds", "udp", "best-effort", "keep-last:10", "volatile", "latency"),
        ("fastdds", None, "best-effort", "keep-last:10", "volatile", "throughput"),
        ("fastdds", "udp", "best-effort", "keep-last:10", "volatile", "throughput"),
    ]
    assert [p.index for p in opts.points()] == list(range(8))


def test_qos_cartesian_product():
    opts = build(mw="cyclonedds,fastdds", mode="rate", rate="100,1k", size="1k", agent_info=DDS,
                 qos=dict(reliability="reliable,best-effort", history="keep-last:1,keep-all",
                          durability="volatile,transient-local"))
    points = opts.points()
    assert len(points) == 2 * 2 * 2 * 2 * 2
    first = points[0]
    assert (first.mw, first.get("reliability"), first.get("history"), first.get("durability"), first.rate_hz) == (
        "cyclonedds", "reliable", "keep-last:1", "volatile", 100.0)
    assert points[1].get("durability") == "transient-local" and points[2].get("history") == "keep-all"
    assert points[4].get("reliability") == "best-effort" and points[8].rate_hz == 1000.0
    assert first.qos_label() == "reliable, keep-last:1"  # volatile is the default: it says nothing


def test_qos_refused_for_a_listed_middleware():
    with pytest.raises(UsageError, match=r"^--async: not supported by cyclonedds"):
        build(mw="fastdds,cyclonedds", agent_info=DDS, qos=dict(async_=True))
    with pytest.raises(UsageError, match=r"^--instances 5: needs --keyed"):
        build(mw="fastdds", agent_info=DDS, qos=dict(instances="5"))


def test_default_mw_is_every_adapter_that_honours_the_qos():
    four = described(only=("udp", "tcp", "cyclonedds", "fastdds"))
    assert build(mw=None, agent_info=four).mws == ("udp", "tcp", "cyclonedds", "fastdds")
    assert build(mw=None, agent_info=four, qos=dict(async_=True)).mws == ("fastdds",)
    assert build(mw=None, agent_info=four, qos=dict(reliability="reliable")).mws == ("tcp", "cyclonedds", "fastdds")
    assert build(mw=None, agent_info=four, qos=dict(keyed=True)).mws == ("cyclonedds", "fastdds")
    with pytest.raises(UsageError, match="--async: not supported by udp"):
        build(mw=None, agent_info=SOCKETS, qos=dict(async_=True))


def test_as_dict_has_the_qos():
    data = json.loads(json.dumps(build(mw="fastdds", agent_info=DDS, qos=dict(keyed=True, instances="9")).as_dict()))
    assert data["options"]["instances"] == ["9"] and "history" not in data["options"]


def test_out_of_range_values_are_refused_naming_them():
    for options, message in (
        ({"mode": "throughput", "latency_count": "99999999999999999999999"},
         "--latency-count 99999999999999999999999: must be from 0 to 1000000000000"),
        ({"duration": "99999999999999999999h"}, "--duration 99999999999999999999h: must be from 1ns to"),
        ({"warmup": "1e12s"}, "--warmup 1e12s: must be from 0"),
    ):
        with pytest.raises(UsageError, match=message.replace("(", r"\(")):
            build(**options)


def test_burst_needs_a_demand_and_only_burst_takes_one():
    with pytest.raises(UsageError, match="--mode burst: needs --demand"):
        build(mode="burst")
    with pytest.raises(UsageError, match="--demand 10: only with --mode burst"):
        build(mode="rate", rate="10", demand="10")
    with pytest.raises(UsageError, match="--burst-gap 5ms: only with --mode burst"):
        build(mode="latency", burst_gap="5ms")
    with pytest.raises(UsageError, match="--demand 0: must be from 1 to"):
        build(mode="burst", demand="0")
    opts = build(mode="burst,latency", demand="1,100", burst_gap="20ms")
    assert opts.given("demand") == (1, 100) and opts.points()[0].get("burst-gap") == 20_000_000
    # demand expands burst points only
    assert [(p.mode, p.demand) for p in opts.points()] == [("burst", 1), ("burst", 100), ("latency", None)]


def test_subscribers_within_what_each_middleware_serves():
    with pytest.raises(UsageError, match=r"--subscribers 2: udp serves at most 1 subscriber\(s\) per publisher"):
        build(subscribers="1,2")
    opts = build(agent_info=DDS, mw="cyclonedds", subscribers="1,4", mode="rate", rate="10")
    assert [p.subscribers for p in opts.points()] == [1, 4]
    with pytest.raises(UsageError, match="--subscribers 65: must be from 1 to 64"):
        build(agent_info=DDS, mw="cyclonedds", subscribers="65")


def test_subscribers_as_processes_or_threads():
    opts = build(agent_info=DDS, mw="cyclonedds", subscribers="1,4", mode="rate", rate="10")
    assert {p.subscribers_as for p in opts.points()} == {"processes"}
    opts = build(agent_info=DDS, mw="cyclonedds", subscribers="1,4", mode="rate", rate="10", subscribers_as="threads")
    assert [(p.subscribers, p.subscribers_as) for p in opts.points()] == [(1, "threads"), (4, "threads")]
    assert "1:4 threads" in opts.points()[1].label()
    assert opts.as_dict()["options"]["subscribers-as"] == ["threads"]
    with pytest.raises(UsageError, match="--subscribers-as fibers: choose from processes, threads"):
        build(agent_info=DDS, mw="cyclonedds", subscribers="2", subscribers_as="fibers")


def test_threads_within_the_readers_a_middleware_holds_in_one_process():
    """The limit comes from the agent's description (max_readers_per_process),
    not from a name kept in Python."""
    limited = [name for name, a in DDS.adapters.items() if a.limit("max_readers_per_process") == 1 and a.limit("max_subscribers") != 1]
    if not limited:
        pytest.skip("no adapter of the recorded agent holds one reader per process")
    name = limited[0]
    with pytest.raises(UsageError, match=f"--subscribers 2: {name} holds at most 1 reader"
                                         r"\(s\) per process \(--subscribers-as processes has no such limit\)"):
        build(agent_info=DDS, mw=name, subscribers="1,2", subscribers_as="threads")
    assert build(agent_info=DDS, mw=name, subscribers="2").given("subscribers") == (2,)  # as processes it may
    assert build(agent_info=DDS, mw=name, subscribers="1", subscribers_as="threads").given("subscribers") == (1,)


def test_an_adapter_of_one_reader_per_process():
    import dataclasses

    cyclone = DDS.adapters["cyclonedds"]
    old = dataclasses.replace(DDS, adapters={"cyclonedds": dataclasses.replace(
        cyclone, limits={**cyclone.limits, "max_readers_per_process": 1})})
    with pytest.raises(UsageError, match=r"--subscribers 2: cyclonedds holds at most 1 reader\(s\) per process"):
        build(agent_info=old, mw="cyclonedds", subscribers="2", subscribers_as="threads")


def test_a_slow_subscriber_is_never_the_echoer():
    with pytest.raises(UsageError, match="--slow-subscriber 5ms: in latency mode needs --subscribers 2 or more"):
        build(agent_info=DDS, mw="cyclonedds", slow_subscriber="5ms")
    opts = build(agent_info=DDS, mw="cyclonedds", mode="latency", subscribers="2", slow_subscriber="5ms")
    assert opts.points()[0].get("slow-subscriber") == 5_000_000
    # one reader: it is the slow one
    assert build(mode="rate", rate="10", slow_subscriber="1ms").points()[0].get("slow-subscriber") == 1_000_000


def test_congestion_is_checked_against_the_vocabulary_and_the_middleware():
    with pytest.raises(UsageError, match="--congestion sometimes: choose from block, drop"):
        build(agent_info=DDS, mw="zenoh", qos={"congestion": "sometimes"})
    with pytest.raises(UsageError, match="--congestion drop: not supported by cyclonedds"):
        build(agent_info=DDS, mw="cyclonedds", qos={"congestion": "drop"})
    assert build(agent_info=DDS, mw="zenoh", qos={"congestion": "drop"}).given("congestion") == ("drop",)
