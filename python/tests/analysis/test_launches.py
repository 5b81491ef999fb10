"""Launch-to-launch spread (issue 21, item 2): repetitions are launches of
their own; compare and its gate test on the spread between launches, never on one
launch's interval; the report shows the spread. Synthetic records, seeded:
the gate must fail on a shift larger than the launches' spread and must not
fail on one the spread explains, though each launch's own interval is
narrow (with so few launches it cannot decide: exit 3, not a pass)."""

import io
import json
import random
import statistics

import pytest

from analysis.test_compare import point, run_dir
from conftest import typed_all, written
from mwperf.analysis.verdicts import slower
from mwperf.export.compare import compare_runs
from mwperf.cli.main import main
from mwperf.export.launches import launch_sections
from mwperf.model.launches import spread
from mwperf.model.schema import validate_record


def launches(median: float, sigma: float, rng: random.Random, n: int = 3, within: float = 0.01) -> list[dict]:
    """``n`` launches whose p50 is log-normal around ``median`` (sigma: between launches),
    each with a narrow interval of its own (``within``: its half-width over p50)."""
    out = []
    for i in range(n):
        v = median * rng.lognormvariate(0, sigma)
        out.append(point(v, [v * (1 - within), v * (1 + within)], repetition=i, index=i))
    return out


def test_a_shift_beyond_the_launches_spread_fails_the_gate(tmp_path):
    rng = random.Random(7)
    a = run_dir(tmp_path, "a", launches(30.0, 0.02, rng))
    b = run_dir(tmp_path, "b", launches(36.0, 0.02, rng))
    out = io.StringIO()
    assert compare_runs([a, b], out, fail_if_slower=5) == 1
    text = out.getvalue()
    assert "(3+3 launches)" in text and "REGRESSION: udp latency 64 B" in text and "3+3 launches" in text


def test_a_shift_the_launches_spread_explains_is_no_regression(tmp_path):
    rng = random.Random(1)
    ra, rb = launches(30.0, 0.3, rng), launches(33.0, 0.3, rng)
    pa, pb = [r["latency_us"]["p50"] for r in ra], [r["latency_us"]["p50"] for r in rb]
    # what the test is about: B's median is >10 % slower, and the first launches' own intervals
    # are far apart (the old within-launch verdict: "significant (95 % CIs apart)", a failed gate)
    assert statistics.median(pb) / statistics.median(pa) > 1.10
    assert ra[0]["latency_us"]["p50_ci"][1] < rb[0]["latency_us"]["p50_ci"][0]
    assert slower(typed_all(ra), typed_all(rb), 5).decision.lower < 0  # the launches cannot tell B from A
    a, b = run_dir(tmp_path, "a", ra), run_dir(tmp_path, "b", rb)
    out = io.StringIO()
    assert compare_runs([a, b], out, fail_if_slower=5) == 3
    text = out.getvalue()
    assert "cannot decide: 3+3 launches, need " in text and "REGRESSION" not in text
    s = spread(typed_all(ra))
    assert s.launches == 3 and s.between > 10 * s.within  # the launch is what varies


def test_one_launch_against_repetitions_cannot_decide(tmp_path):
    rng = random.Random(3)
    a = run_dir(tmp_path, "a", [point(30.0, [29.9, 30.1])])
    b = run_dir(tmp_path, "b", launches(40.0, 0.01, rng, n=4))
    out = io.StringIO()
    assert compare_runs([a, b], out, fail_if_slower=5) == 3  # A's launch shows no spread of A's
    assert "cannot decide: 1+4 launches, need 2+2" in out.getvalue()


def test_spread_numbers():
    records = [point(v, [v - 1, v + 1], repetition=i, index=i) for i, v in enumerate([10.0, 12.0, 14.0])]
    s = spread(typed_all(records))
    assert s.between == pytest.approx(2 / 12) and s.median_us == 12.0
    assert s.within == pytest.approx(1 / 12) and s.ratio == pytest.approx(2.0)
    assert spread(typed_all(records[:1])).between is None


def test_a_headline_short_of_the_precision_always_says_how_many_more_launches():
    """p99 from one launch only (the others too short for it: under 1000 samples): never "cannot tell"."""
    records = [point(v, [v * 0.99, v * 1.01], count=5000 if i == 0 else 500, repetition=i, index=i)
               for i, v in enumerate([12.0, 12.1, 11.9])]
    for r in records:
        r["latency_us"]["p99"] = 3 * r["latency_us"]["p50"]
        r["phases"] = dict(r.get("phases") or {}, total_s=0.5)
    head = spread(typed_all(records), 0.05).headline
    assert head.p99_us is not None and head.p99_us.launches == 1 and head.p50_us.launches == 3
    assert head.reached is False and head.more_launches == 5 and head.more_s == pytest.approx(2.5)
    head = spread(typed_all(records[:1]), 0.05).headline  # one launch: no spread yet, as many as an interval needs
    assert head.reached is False and head.more_launches == 5


def test_compare_and_report_show_the_spread(tmp_path, capsys):
    rng = random.Random(5)
    ra = launches(30.0, 0.1, rng)
    a = run_dir(tmp_path, "a", ra)
    b = run_dir(tmp_path, "b", launches(30.0, 0.1, rng))
    assert main(["compare", a, b]) == 0
    out = capsys.readouterr().out
    s = spread(typed_all(ra))
    assert f"±{100 * s.between:.1f}% / ±1.0% (3)" in out and "spread A" in out
    (section,) = launch_sections(typed_all(ra))
    assert section.rows[0].cells[1] == "3" and section.rows[0].cells[4] == f"±{100 * s.between:.1f}%"
    assert main(["report", a]) == 0
    assert "launch-to-launch spread of the p50 latency" in capsys.readouterr().out


def test_repetitions_are_separate_launches(tmp_path, monkeypatch, fake_agent):
    log = tmp_path / "agents.log"
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    monkeypatch.setenv("FAKE_AGENT_LOG", str(log))
    plan = tmp_path / "p.yaml"
    plan.write_text("mw: udp\nmode: latency\nsize: 64\nduration: 100ms\nwarmup: 0s\ncpu: 0,1\nrepetitions: 3\n")
    assert main(["sweep", str(plan), "--out", str(tmp_path / "run"), "--no-floor", "--db", "none"]) == 0
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    argv_pids = [(" ".join(r["argv"]), r["pid"]) for r in runs if "list" not in r["argv"]]
    pids = [pid for argv, pid in argv_pids if "--role" in argv]
    assert len(pids) == 6 and len(set(pids)) == 6  # a publisher and a subscriber started for each repetition
    records = written(tmp_path / "run")
    for r in records:
        validate_record(r)
    # each launch from the second carries the spread over the point's launches so far, and the headline
    assert [r["launches"] is None for r in records] == [True, False, False]
    last = records[-1]["launches"]
    assert last["launches"] == 3 and last["median_us"] == records[0]["latency_us"]["p50"]
    head = last["headline"]
    assert head["level"] == 0.75 and head["p50_us"]["launches"] == 3  # [min, max] of 3: 1 - 2 / 2^3


def test_the_rows_note_gives_each_intervals_own_level():
    """p99 from two of six launches (the others too short for it) is a 50 % interval, and says so;
    the note's level is not the lowest of the figures' (p99.9's, from fewer launches still)."""
    from mwperf.model.launches import as_points, launches_note

    records = [point(v, [v * 0.99, v * 1.01], count=5000 if i < 2 else 500, repetition=i, index=i)
               for i, v in enumerate([12.0, 12.1, 11.9, 12.2, 11.8, 12.05])]
    for r in records:
        r["latency_us"]["p99"] = 3 * r["latency_us"]["p50"]
        r["run_id"] = "run"
    (row,) = as_points(typed_all(records))
    note = launches_note(row)
    assert note.startswith("6 launches, 96.9 %: p50 [11.8, 12.2] us, p99 [") and "us (50.0 %, 2 launches)" in note


def test_a_point_whose_launches_have_no_p50_still_has_its_headline():
    """Throughput launches whose pings were all lost: no p50 spread, the headline from their rates."""
    from mwperf.model.launches import as_points, launches_note

    records = [point(30.0, [29.7, 30.3], repetition=i, index=i) for i in range(3)]
    for r, rate in zip(records, (1000.0, 1100.0, 1050.0)):
        r["latency_us"], r["samples_per_s"], r["run_id"] = None, rate, "run"
    s = spread(typed_all(records), 0.05)
    assert s.launches == 3 and s.median_us is None and s.headline.samples_per_s.estimate == 1050.0
    (row,) = as_points(typed_all(records))
    assert row.launches is not None and "S/s [1000, 1100]" in launches_note(row)
    for r in records:
        r["launches"] = s.to_json()
        validate_record(r)
