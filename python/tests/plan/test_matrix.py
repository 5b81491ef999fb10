"""A plan's matrices (``also:``): the quick plan's secured points, ``mw: built``
as the built middlewares that honour a matrix's options, and a bad matrix
refused in one line naming it, exit 2 (each bad matrix's message: test_sweep_plan.py's BAD)."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import described
from mwperf.plan.sweep_plan import count_points, expand, load_plan, parse_plan

PLANS = Path(__file__).resolve().parents[3] / "plans"
AGENT = described()
SECURABLE = {name for name, info in AGENT.adapters.items() if info.honours("security")}


def points_of(text, agent_info=AGENT):
    return expand(parse_plan(text, "p.yaml"), out=Path("results/x"), agent=None, agent_info=agent_info, cpu_count=2)


def test_the_quick_plan_has_one_secured_point_per_securable_middleware():
    assert SECURABLE == {"cyclonedds", "cyclonedds11", "fastdds"}  # the recorded agent (fixtures/agent-list.jsonl)
    points = expand(load_plan(PLANS / "quick.yaml"), out=Path("r"), agent=None, agent_info=AGENT, cpu_count=2)
    secured = {(p.point.mw, p.point.mode, p.point.size, p.point.get("transport"))
               for p in points if p.point.get("security") == "encrypt"}
    assert secured == {(mw, "latency", 1024, "udp") for mw in SECURABLE}
    clear = {p.point.mw for p in points if p.point.get("security") == "none" and p.point.get("transport") == "udp"}
    assert clear == SECURABLE  # the ratio's other side, on the same transport
    assert {p.point.mw for p in points} == set(AGENT.adapters)  # the main matrix, every built middleware
    # without those middlewares the secured matrix has fewer points, and the plan still expands
    fewer = described(only=set(AGENT.adapters) - {"cyclonedds11"})
    again = expand(load_plan(PLANS / "quick.yaml"), out=Path("r"), agent=None, agent_info=fewer, cpu_count=2)
    assert {p.point.mw for p in again if p.point.get("security") == "encrypt"} == SECURABLE - {"cyclonedds11"}


def test_also_matrices_stand_alone_and_count():
    text = ("mw: [udp, tcp]\nsize: [32, 1k]\nlaunches: 2\n"
            "also:\n  - {mw: built, security: [none, encrypt], size: 1k}\n  - {mw: udp, size: 32}\n")
    plan = parse_plan(text, "p.yaml")
    points = points_of(text)
    distinct = [p for p in points if not p.repetition]
    # the main matrix's 4; 3 middlewares x 2 levels; udp 32 B is the main matrix's point again: run once
    assert len(distinct) == 4 + 6
    assert count_points(plan) == (4 + 2 + 1) * 2  # counted before expansion: `built` as one middleware
    assert {(p.point.mw, p.point.size) for p in distinct if p.point.get("security") is None} == {
        (mw, size) for mw in ("udp", "tcp") for size in (32, 1024)}
    assert all(p.point.size == 1024 and p.point.mw in SECURABLE for p in distinct if p.point.get("security"))
    assert len({p.point_hash for p in points}) == len(points) == 20


@pytest.mark.parametrize("matrix, expected", [
    ("{mw: udp, security: encrypt}", "also[0].security: encrypt: not supported by udp"),
    ("{mode: discovery, mw: cyclonedds, participants: 0}", "also[0].participants: 0:"),
])
def test_a_bad_matrix_exits_2_in_one_line(tmp_path, matrix, expected):
    plan = tmp_path / "bad.yaml"
    plan.write_text(f"mw: udp\nalso:\n  - {matrix}\n")
    done = subprocess.run([sys.executable, "-m", "mwperf", "sweep", str(plan), "--dry-run"], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr
    assert done.stderr.startswith(f"mwperf: error: {plan}: {expected}")


def test_the_quick_plan_has_one_discovery_point_per_middleware_after_its_others():
    plan = load_plan(PLANS / "quick.yaml")
    (found,) = plan.discovery
    assert found.where == "also[1]" and dict(found.options) == {
        "mw": "cyclonedds,fastdds,zenoh,ros2,iceoryx,ros1", "participants": "5", "topics": "1",
        "discovery": "unicast", "timeout": "10s"}
    assert len(plan.also) == 1 and count_points(plan) == (12 + 2) * 3  # `built` as one middleware; no participants
    expand(plan, out=Path("r"), agent=None, agent_info=AGENT, cpu_count=2)  # accepted, validated whole


def test_discovery_matrices_stand_apart_from_the_others():
    plan = parse_plan("mw: udp\nalso:\n  - {mw: tcp}\n  - mode: discovery\n    mw: [cyclonedds, fastdds]\n"
                      "    participants: [2, 5]\n    participants_as: threads\n", "p.yaml")
    assert [m.where for m in plan.also] == ["also[0]"] and [m.where for m in plan.discovery] == ["also[1]"]
    assert dict(plan.discovery[0].options) == {"mw": "cyclonedds,fastdds", "participants": "2,5",
                                               "participants_as": "threads"}
    assert {p.point.mw for p in points_of(plan.text)} == {"udp", "tcp"}
