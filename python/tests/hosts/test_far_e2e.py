"""From this x86-64 controller to an aarch64 board, with nothing installed there: `mwperf run --hosts` as the
ordinary user robot on the tests' far hosts (far_hosts.py: Debian userlands without the middleware packages
or this checkout; the aarch64 one under qemu), with the real bundles (`mwperf bundle`, built once into
bundles/ when missing). The first run copies each bundle, the second finds it (the records' phases say so);
a udp and a cyclonedds point, and Fast DDS on one architecture against Cyclone DDS on the other, all
samples counted. Timing under emulation means nothing: none is asserted."""

import time

import pytest

from far_fixtures import mwperf
from mwperf.results.rundir import read_records
from mwperf.model.schema import validate_record

# side by side: the lab is namespaces of its own, no timing is asserted (test_place.py)
pytestmark = [pytest.mark.side_by_side, pytest.mark.e2e, pytest.mark.xdist_group("far-hosts")]


def _run(lab, tmp_path, name: str, *args: str) -> tuple:
    x86, arm = lab.hosts["x86_64"], lab.hosts["aarch64"]
    out = tmp_path / name
    started = time.monotonic()
    done = mwperf(lab, "run", "--hosts", f"pub={x86.target()},sub={arm.target()}", "--remote-dir",
                  "/home/robot/far-e2e", "--mode", "rate", "--rate", "100", "--size", "1k", "--duration", "500ms",
                  "--warmup", "100ms", "--no-floor", "--db", "none", "--out", str(out), *args, timeout=600)
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stderr[-3000:]
    records = [r.json for r in read_records(out)]
    for record in records:
        validate_record(record)
        assert record["status"] == "ok", record["error"]
        assert record["received"] + record["lost"] == record["sent"] and record["received"] > 0
        assert (record["hosts"]["pub"]["arch"], record["hosts"]["sub"]["arch"]) == ("x86_64", "aarch64")
        assert record["clock"]["same_clock"] is False and record["clock"]["uncertainty_us"] >= 0
        assert set(record["clock"]["sync"]) == {"pub", "sub"} and "phc2sys" in record["clock"]["sync"]["sub"]
    return done, records, elapsed


def test_x86_64_to_aarch64_with_nothing_installed_then_from_the_cache(lab, bundles, tmp_path):
    lab.hosts["aarch64"].run("rm -rf /home/robot/far-e2e", user="robot")
    lab.hosts["x86_64"].run("rm -rf /home/robot/far-e2e", user="robot")
    done, records, first = _run(lab, tmp_path, "first", "--mw", "udp,cyclonedds")
    assert [r["mw"] for r in records] == ["udp", "cyclonedds"]
    phases = records[0]["phases"]["bundle"]
    assert phases["pub"].startswith("copied ") and phases["sub"].startswith("copied "), phases
    assert all(r["phases"]["bundle"] == phases for r in records)
    sub = records[0]["hosts"]["sub"]["bundle"]
    assert sub["arch"] == "aarch64" and sub["agent"].startswith("/home/robot/far-e2e/")
    print(f"first run {first:.1f} s; bundle {phases}")

    done, records, second = _run(lab, tmp_path, "second", "--mw", "udp")
    assert records[0]["phases"]["bundle"] == {"pub": "cached", "sub": "cached"}
    assert " copied " not in done.stderr
    print(f"second run {second:.1f} s")


def test_fast_dds_on_x86_64_to_cyclone_dds_on_aarch64(lab, bundles, tmp_path):
    """Fast DDS publishes on the x86-64 host, Cyclone DDS subscribes on the aarch64 one. (Fast DDS's own agents
    on the emulated aarch64 host do not match even each other on that one host: qemu-user's, not --hosts'.)"""
    done, records, _ = _run(lab, tmp_path, "cross", "--mw", "fastdds", "--peer-mw", "cyclonedds")
    assert [(r["mw"], r["peer_mw"]) for r in records] == [("fastdds", "cyclonedds")]
    versions = records[0]["adapter"]["versions"]
    assert versions, records[0]["adapter"]


def test_options_are_checked_against_the_agent_each_host_runs(lab, bundles, tmp_path):
    """This controller's agent has zenoh; the aarch64 bundle has not (its description says why): refused naming
    that host, before anything is copied."""
    arm = lab.hosts["aarch64"]
    done = mwperf(lab, "run", "--hosts", f"pub={lab.hosts['x86_64'].target()},sub={arm.target()}", "--remote-dir",
                  "far-zenoh", "--mw", "zenoh", "--no-floor", "--out", str(tmp_path / "run"))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert done.stderr.startswith(f"mwperf: error: --hosts {arm.target()}: its aarch64 bundle's agent: --mw zenoh")
    assert arm.run("ls -A /home/robot/far-zenoh", user="robot").stdout == ""
