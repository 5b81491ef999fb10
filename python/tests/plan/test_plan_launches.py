"""A point's launches (mwperf.plan.launches): six by default (the suite's
conftest sets $MWPERF_LAUNCHES=1; these tests take it away), interleaved
across the points (a round of every point's launch after another), each an
equal share of the point's duration, warm-up and sample count; a plan's
``launches`` (``repetitions``, its older name) and ``max_launches``, run's
--launches and --max-launches; bad values one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import described, written
from mwperf.cli.main import main
from mwperf.errors import PlanError, UsageError
from mwperf.plan.launches import DEFAULT_LAUNCHES, default_launches
from mwperf.plan.sweep_plan import expand, parse_plan

AGENT = described()


@pytest.fixture
def six(monkeypatch):
    monkeypatch.delenv("MWPERF_LAUNCHES", raising=False)


def points_of(text):
    return expand(parse_plan(text, "p.yaml"), out=Path("results/x"), agent=None, agent_info=AGENT, cpu_count=2)


def test_six_launches_by_default_interleaved_each_a_sixth_of_the_point(six):
    assert default_launches() == DEFAULT_LAUNCHES == 6
    points = points_of("mw: udp\nmode: latency\nsize: [32, 64]\nduration: 3s\nwarmup: 600ms\n")
    assert [(p.point.size, p.repetition, p.repetitions) for p in points] == [
        (size, r, 6) for r in range(6) for size in (32, 64)]
    assert [p.point.index for p in points] == list(range(12))
    assert {p.point.get("duration") for p in points} == {500_000_000}  # 3 s in six
    assert {p.point.get("warmup") for p in points} == {100_000_000}
    assert len({p.point_hash for p in points}) == 12


def test_a_plans_launches_and_the_adaptive_stops_most(six):
    three = points_of("mw: udp\nmode: latency\nsize: 32\nduration: 3s\nlaunches: 3\n")
    assert [p.repetition for p in three] == [0, 1, 2] and {p.point.get("duration") for p in three} == {1_000_000_000}
    # with a precision and up to 6 launches, each launch is a sixth: the point takes its duration at most
    most = points_of("mw: udp\nmode: latency\nsize: 32\nduration: 3s\nlaunches: 3\nmax_launches: 6\nprecision: 5%\n")
    assert len(most) == 3 and {p.point.get("duration") for p in most} == {500_000_000}
    assert len(points_of("mw: udp\nmode: latency\nsize: 32\nrepetitions: 2\n")) == 2  # the older name


@pytest.mark.parametrize("text, named, reason", [
    ("mw: udp\nlaunches: 0\n", "launches: 0", "must be a whole number from 1"),
    ("mw: udp\nlaunches: 2\nrepetitions: 2\n", "repetitions: 2", "one key: keep one"),
    ("mw: udp\nlaunches: 4\nmax_launches: 3\n", "max_launches: 3", "fewer than the launches (4)"),
])
def test_bad_launches_in_a_plan(text, named, reason, six):
    with pytest.raises(PlanError) as err:
        parse_plan(text, "p.yaml")
    assert named in str(err.value) and reason in str(err.value)


def test_the_default_from_the_environment(monkeypatch):
    monkeypatch.setenv("MWPERF_LAUNCHES", "4")
    assert default_launches() == 4 and len(points_of("mw: udp\nmode: latency\nsize: 32\n")) == 4
    monkeypatch.setenv("MWPERF_LAUNCHES", "many")
    with pytest.raises(UsageError) as err:
        default_launches()
    assert "MWPERF_LAUNCHES many" in str(err.value)


def test_run_launches_a_point_six_times_interleaved(six, tmp_path, monkeypatch, fake_agent, capsys):
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    out = tmp_path / "run"
    assert main(["run", "--mw", "udp", "--mode", "latency", "--size", "32,64", "--duration", "600ms",
                 "--warmup", "0", "--cpu", "0,1", "--no-floor", "--db", "none", "--out", str(out)]) == 0
    records = written(out)
    assert [(r["size"], r["repetition"]) for r in records] == [(size, r) for r in range(6) for size in (32, 64)]
    assert {r["duration_s"] for r in records} == {0.1}
    assert [r["launches"] is None for r in records[:2]] == [True, True]  # a point's first launch: nothing yet
    head = records[-1]["launches"]["headline"]
    assert head["level"] == pytest.approx(1 - 2 / 2 ** 6) and head["p50_us"]["launches"] == 6
    assert main(["run", "--mw", "udp", "--launches", "0", "--out", str(tmp_path / "x")]) == 2
    assert "--launches 0: must be a whole number from 1 to 1000" in capsys.readouterr().err
    assert main(["run", "--mw", "udp", "--launches", "4", "--max-launches", "2", "--out", str(tmp_path / "x")]) == 2
    assert "--max-launches 2: fewer than the launches (4)" in capsys.readouterr().err


@pytest.mark.parametrize("spread, launches", [(0.1, 4), (0.0, 2)])
def test_the_adaptive_stop_adds_launches_while_the_interval_is_wider_than_asked(
        spread, launches, six, tmp_path, monkeypatch, fake_agent, capsys):
    """Launches 10 % apart cannot give +-1 %: the stop adds launches up to the most (4), and says what the
    point would need; launches alike reach it at once (2)."""
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    monkeypatch.setenv("FAKE_AGENT_SPREAD", str(spread))
    monkeypatch.setenv("FAKE_AGENT_SPREAD_FILE", str(tmp_path / "launches"))
    out = tmp_path / "run"
    assert main(["run", "--mw", "udp", "--mode", "latency", "--size", "32", "--duration", "400ms", "--warmup", "0",
                 "--launches", "2", "--max-launches", "4", "--precision", "1%", "--cpu", "0,1", "--no-floor",
                 "--db", "none", "--out", str(out)]) == 0
    records = written(out)
    assert [r["repetition"] for r in records] == list(range(launches))
    assert {r["duration_s"] for r in records} == {0.1}  # a quarter of the point's 400 ms: it may take 4
    head = records[-1]["launches"]["headline"]
    text = capsys.readouterr().out
    if spread:
        assert head["reached"] is False and head["more_launches"] > 0 and head["precision"] == 0.01
        assert "launches: 0/1 points within ±1 %" in text and "would need" in text
    else:
        assert head["reached"] is True and "launches: 1/1 points within ±1 %" in text


def test_sweep_launches_overrides_the_plans_and_resume_follows_it(six, tmp_path, monkeypatch, fake_agent, capsys):
    """``sweep --launches N`` (the CI example: the quick plan at the default six): N launches a point
    instead of the plan's; a sweep cut short resumes at N, not at the plan's or the default."""
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    plan = tmp_path / "p.yaml"
    plan.write_text("mw: udp\nmode: latency\nsize: [32, 64]\nduration: 400ms\nwarmup: 0s\nlaunches: 3\ncpu: '0,1'\n")
    out = tmp_path / "run"
    assert main(["sweep", str(plan), "--launches", "2", "--no-floor", "--db", "none", "--out", str(out)]) == 0
    launched = [(32, 0), (64, 0), (32, 1), (64, 1)]
    records = written(out)
    assert [(r["size"], r["repetition"]) for r in records] == launched and {r["duration_s"] for r in records} == {0.2}
    lines = (out / "results.jsonl").read_text().splitlines(keepends=True)
    (out / "results.jsonl").write_text("".join(lines[:2]))
    assert main(["sweep", "--resume", str(out), "--no-floor", "--db", "none"]) == 0
    assert [(r["size"], r["repetition"]) for r in written(out)] == launched
    capsys.readouterr()
    assert main(["sweep", "--resume", str(out), "--launches", "3"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert main(["sweep", str(plan), "--dry-run", "--launches", "4"]) == 0
    assert capsys.readouterr().out.endswith("\n2 points, 8 launches\n")
    assert main(["sweep", str(plan), "--dry-run", "--launches", "0"]) == 2
    assert "--launches: 0: must be a whole number from 1 to 1000" in capsys.readouterr().err


def test_each_launchs_line_and_the_table_show_the_points_headline_from_its_launches(
        six, tmp_path, monkeypatch, fake_agent, capsys):
    """A launch is too short for its own stop to look: its progress line says where the point stands
    on its launches (their interval, what the precision would need), never "no look"; the table's
    row is the point's headline with its intervals under it."""
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    monkeypatch.setenv("FAKE_AGENT_SPREAD", "0.1")
    monkeypatch.setenv("FAKE_AGENT_SPREAD_FILE", str(tmp_path / "launches"))
    out = tmp_path / "run"
    assert main(["run", "--mw", "udp", "--mode", "latency", "--size", "32", "--duration", "600ms", "--warmup", "0",
                 "--precision", "1%", "--cpu", "0,1", "--no-floor", "--db", "none", "--verbose", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if "udp latency 32 B" in line and " ok " in line]
    assert len(lines) == 6 and "point:" not in lines[0]
    assert "point: 2 launches, 50.0 %: p50 [" in lines[1]
    assert "point: 6 launches, 96.9 %: p50 [" in lines[-1] and "±1 % needs" in lines[-1] and "more launches" in lines[-1]
    assert not any("no look" in line for line in lines), lines
    assert "6 launches, 96.9 %: p50 [" in captured.out  # the table row's note (--verbose: every table)
