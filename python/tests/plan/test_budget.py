"""Every plan is checked against a point limit and an estimated duration before it starts (issue 45.8): a
discovery plan of 998,001 points passed --dry-run and started. A sweep, a run's lists, a discovery plan (and a
sweep's discovery matrices), a max-rate search and a lab's plan on its pairs: over 10,000 points or an estimate
over 24 h, one line with the count and the estimate, exit 2, nothing made; --max-points and --max-duration (or
$MWPERF_MAX_POINTS, $MWPERF_MAX_DURATION) allow it."""

from __future__ import annotations

import time

import pytest
import yaml

from conftest import described
from mwperf.cli.main import main
from mwperf.errors import PlanError
from mwperf.plan.budget import check_budget, format_hours
from mwperf.plan.sweep_plan import expand, parse_plan


@pytest.fixture
def agent(monkeypatch, fake_agent):
    monkeypatch.delenv("MWPERF_MAX_POINTS", raising=False)
    monkeypatch.delenv("MWPERF_MAX_DURATION", raising=False)
    return str(fake_agent)


def _refused(capsys, argv: list[str]) -> str:
    started = time.monotonic()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "refused before it starts" in err, err
    assert time.monotonic() - started < 10  # counted, not expanded
    return err


def test_a_discovery_plan_of_a_million_points_is_refused_at_once(tmp_path, capsys, agent):
    plan = tmp_path / "huge.yaml"
    plan.write_text(yaml.safe_dump({"mode": "discovery", "mw": ["cyclonedds", "fastdds", "zenoh"],
                                    "participants": list(range(2, 1001)), "topics": list(range(1, 334))}))
    for extra in (["--dry-run"], ["--out", str(tmp_path / "run")]):
        err = _refused(capsys, ["sweep", str(plan), "--agent", agent, *extra])
        assert err.startswith(f"mwperf: error: {plan}: 998001 discovery points, about 1157d") and \
            "more than 10000 discovery points and longer than 1d00h" in err, err
    assert not (tmp_path / "run").exists()


def test_a_sweep_estimated_over_a_day_is_refused_unless_allowed(tmp_path, capsys, agent):
    plan = tmp_path / "long.yaml"
    plan.write_text("mw: udp\nmode: latency\nsize: [32, 64, 128]\nduration: 10h\nwarmup: 0s\nlaunches: 1\n")
    err = _refused(capsys, ["sweep", str(plan), "--agent", agent, "--dry-run"])
    assert err.startswith(f"mwperf: error: {plan}: 3 points, about 1d06h at the least: longer than 1d00h"), err
    assert main(["sweep", str(plan), "--agent", agent, "--dry-run", "--max-duration", "31h"]) == 0
    assert capsys.readouterr().out.endswith("3 points\n")


def test_the_limits_from_the_environment(tmp_path, capsys, agent, monkeypatch):
    plan = tmp_path / "p.yaml"
    plan.write_text("mw: udp\nmode: latency\nsize: [32, 64, 128]\nduration: 1h\nwarmup: 0s\nlaunches: 1\n")
    monkeypatch.setenv("MWPERF_MAX_DURATION", "2h")
    err = _refused(capsys, ["sweep", str(plan), "--agent", agent, "--dry-run"])
    assert "3 points, about 3h00m at the least: longer than 2h00m" in err
    monkeypatch.setenv("MWPERF_MAX_DURATION", "soon")
    assert main(["sweep", str(plan), "--agent", agent, "--dry-run"]) == 2
    assert capsys.readouterr().err.startswith("mwperf: error: MWPERF_MAX_DURATION soon: ")


def test_a_run_over_the_limits_makes_nothing(tmp_path, capsys, agent):
    out = tmp_path / "run"
    err = _refused(capsys, ["run", "--mw", "udp", "--size", "32,64,128", "--duration", "10h", "--launches", "1",
                            "--agent", agent, "--out", str(out)])
    assert err.startswith("mwperf: error: run: 3 points (launches), about 1d06h at the least: longer than 1d00h")
    assert not out.exists()
    sizes = ",".join(str(32 + i) for i in range(2001))
    err = _refused(capsys, ["run", "--mw", "udp", "--size", sizes, "--duration", "1ms", "--warmup", "0",
                            "--launches", "6", "--agent", agent, "--out", str(out)])
    assert "run: 12006 points (launches)" in err and "more than 10000 points (launches)" in err, err
    assert not out.exists()


def test_a_run_of_discovery_points_and_a_max_rate_search_over_the_limits(tmp_path, capsys, agent):
    err = _refused(capsys, ["run", "--mode", "discovery", "--mw", "udp", "--participants", "2",
                            "--topics", ",".join(str(t) for t in range(1, 1001)), "--agent", agent,
                            "--out", str(tmp_path / "d"), "--max-points", "999"])
    assert err.startswith("mwperf: error: run --mode discovery: 1000 discovery points"), err
    err = _refused(capsys, ["max-rate", "--mw", "udp", "--size", "32,64", "--duration", "1h", "--loss", "1%",
                            "--agent", agent, "--dry-run"])
    assert err.startswith("mwperf: error: max-rate: ") and " probes, about " in err and " at most: longer " in err


def test_the_check_counts_what_expand_makes(tmp_path):
    """Ground truth: the estimate is each launch's warm-up and duration plus 0.2 s, the count the launches."""
    plan = parse_plan("mw: udp\nmode: latency\nsize: [32, 64]\nduration: 2s\nwarmup: 1s\nlaunches: 3\n", "p.yaml")
    jobs = expand(plan, out=tmp_path, agent=None, agent_info=described(only=("udp",)), cpu_count=2, note=None)
    assert len(jobs) == 6
    with pytest.raises(PlanError, match=r"^p.yaml: 6 points, about 7s at the least: more than 5 points"):
        check_budget("p.yaml", len(jobs), sum(j.point.planned_s + 0.2 for j in jobs), max_points=5)
    with pytest.raises(PlanError, match=r"longer than 6s"):  # 2 points x 3 s + 6 x 0.2 s = 7.2 s
        expand(plan, out=tmp_path, agent=None, agent_info=described(only=("udp",)), cpu_count=2, note=None,
               max_duration_ns=6_000_000_000)


def test_hours_as_said():
    assert [format_hours(s) for s in (40, 750, 18420, 273600)] == ["40s", "12m30s", "5h07m", "3d04h"]
    check_budget("p", 10, 10.0, max_points=10, max_duration_ns=10 * 10**9)  # at the limits: allowed
