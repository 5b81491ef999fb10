"""History: series as compare keys points, hosts and placements apart, change
points where a seeded series has them and nowhere else."""

import copy
import json

import numpy as np
import pytest

from conftest import FIXTURES, typed
from mwperf.analysis.history import build_series, find_change_points, placement_label
from mwperf.store.query import Stored


def template():
    return json.loads((FIXTURES / "results.jsonl").read_text().splitlines()[0])  # udp latency 64 B, cross-core


def entry(i, p50, *, host="h1", loss=0.0, cores=(0, 1), repetition=None, run=None, status="ok"):
    r = copy.deepcopy(template())
    r["time"] = f"2026-11-{1 + i:02d}T12:00:00Z"
    r["latency_us"]["p50"] = p50
    r["loss_rate"] = loss
    r["cpu"].update(pub=cores[0], sub=cores[1], placement="same-core" if cores[0] == cores[1] else "cross-core")
    r["repetition"] = repetition
    r["status"] = status
    key = run or f"run{i}"
    return Stored(typed(r), key, key, host, f"/results/{key}", {"kernel": "6.1", "mwperf_version": "0.1.0"})


def test_a_seeded_step_is_found_where_it_is_and_noise_gives_none():
    rng = np.random.default_rng(7)
    found_at, false = [], 0
    for _ in range(20):
        noise = 50 * (1 + rng.normal(0, 0.03, 12))
        step = [entry(i, float(v + (20 if i >= 6 else 0))) for i, v in enumerate(noise)]
        (series,) = build_series(step)
        found_at += [c.index for c in find_change_points(series) if c.metric == "p50"]
        (flat,) = build_series([entry(i, float(v)) for i, v in enumerate(noise)])
        false += len(find_change_points(flat))
    assert found_at == [6] * 20  # run 7, every time
    assert false == 0


def test_the_change_point_says_before_after_and_significance():
    values = [50, 51, 49, 50, 52, 50, 80, 81, 79, 80, 82, 80]
    (series,) = build_series([entry(i, float(v), loss=0.0 if i < 6 else 0.2) for i, v in enumerate(values)])
    p50, loss = find_change_points(series)
    assert (p50.metric, p50.index) == ("p50", 6)
    assert p50.before == pytest.approx(50.333, abs=1e-3) and p50.after == pytest.approx(80.333, abs=1e-3)
    assert p50.change == pytest.approx(80.333 / 50.333 - 1, abs=1e-4) and p50.pvalue < 1e-6
    assert (loss.metric, loss.index, loss.before, loss.after) == ("loss", 6, 0.0, 20.0)


def test_hosts_and_placements_are_series_of_their_own_unless_asked():
    entries = [entry(i, 50.0, host="h1") for i in range(3)] + [entry(3 + i, 90.0, host="h2") for i in range(3)]
    entries += [entry(6 + i, 20.0, host="h1", cores=(0, 0)) for i in range(3)]
    series = build_series(entries)
    assert sorted((s.host, placement_label(s.placement), len(s.runs)) for s in series) == [
        ("h1", "cross-core 0,1, block, local", 3), ("h1", "same-core 0,0, block, local", 3),
        ("h2", "cross-core 0,1, block, local", 3)]
    assert {len(s.runs) for s in build_series(entries, any_host=True)} == {6, 3}
    (one,) = build_series(entries, any_host=True, any_placement=True)
    assert [r.values["p50"] for r in one.runs] == [50.0] * 3 + [90.0] * 3 + [20.0] * 3


def test_repetitions_of_a_run_are_one_value_their_median_and_failed_points_none():
    entries = [entry(0, v, repetition=k, run="r") for k, v in enumerate([10.0, 30.0, 20.0])]
    failed = entry(1, 99.0, status="failed")
    (series,) = build_series(entries + [failed])
    (run,) = series.runs
    assert (run.values["p50"], run.repetitions, run.provenance["kernel"]) == (20.0, 3, "6.1")
