import json
from pathlib import Path

import pytest

from mwperf.agent import FALLBACK_ADAPTERS, AdapterInfo
from mwperf.options import CpuPlacement, UsageError, build_run_options, default_cpu, parse_cpu


def build(**overrides):
    args = dict(mw="udp", mode=None, size=None, rate=None, duration=None, warmup=None, cpu=None, wait=None,
                latency_count=None, out="results/x", point_timeout=None, agent=None,
                adapters=FALLBACK_ADAPTERS, cpu_count=4)
    args.update(overrides)
    return build_run_options(**args)


def test_defaults():
    opts = build()
    assert opts.mws == ("udp",)
    assert opts.modes == ("latency",)
    assert opts.sizes == (1024,)
    assert opts.duration_ns == 5_000_000_000
    assert opts.warmup_ns == 1_000_000_000
    assert opts.cpu == CpuPlacement(0, 1)
    assert opts.wait == "block"
    assert opts.latency_count == 10000
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
    assert opts.mws == ("udp",) and opts.sizes == (1024,)


def test_size_limits_come_from_the_adapters():
    adapters = {"shm": AdapterInfo("shm", "1", 4096, "shm", "reliable")}
    with pytest.raises(UsageError, match="--size 8k: shm carries at most 4096 bytes per message"):
        build(mw="shm", size="8k", adapters=adapters)
    assert build(mw="shm", size="4k", adapters=adapters).sizes == (4096,)


def test_size_limit_boundaries():
    assert build(size="65507").sizes == (65507,)
    assert build(size="32").sizes == (32,)
    assert build(mw="tcp", size="16MiB").sizes == (16 * 1048576,)


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
    assert data["rates_hz"] == [1000.0]
    assert data["cpu"] == {"pub": None, "sub": None, "placement": "unpinned"}
    assert data["out"] == "results/x"
    assert "adapters" not in data


def test_zero_warmup_allowed():
    assert build(warmup="0").warmup_ns == 0
    assert build(point_timeout="0").point_timeout_ns == 0
