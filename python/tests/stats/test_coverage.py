"""Do the headline intervals keep their confidence? A seeded simulation per
cell (cells.py: long-range dependence, slow regimes, a launch-level offset,
heavy tails): RUNS runs of a point, each LAUNCHES launches of SAMPLES
samples (a short launch: 0.5 s at 20 000 samples/s), and the share of runs
whose launch-level interval (mwperf.stats.launches) holds the true p50,
p90, p99 and p99.9 (every percentile a launch of that length reports with
BEYOND samples beyond it), at the level it prints.

The same runs judged by today's method, one launch of TODAY_SAMPLES (2.5 s)
and its own within-launch interval (within_launch.py, the agent's Batches),
must fail in every cell: the test can fail. The t interval on the launches'
log values, the other candidate, is printed beside: it undercovers the tail
and leaves [min, max] of what was measured in a third of the runs or more.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from mwperf.stats.launches import BEYOND, launch_interval, launches_for, supports
from stats.cells import CELLS, percentiles, series, truth
from stats.within_launch import interval as within_launch

RUNS = 300
LAUNCHES = launches_for(0.95)
SAMPLES = 10000
TODAY_RUNS, TODAY_SAMPLES = 100, 50000
QUANTILES = (0.5, 0.9, 0.99, 0.999)
#: What an interval must keep where it is given, and how often it must be given.
COVERAGE, GIVEN = 0.93, 0.90


def _t_on_logs(values: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    logs = np.log(values)
    n = values.shape[1]
    half = stats.t.ppf(0.5 + level / 2, n - 1) * logs.std(axis=1, ddof=1) / math.sqrt(n)
    return np.exp(logs.mean(axis=1) - half), np.exp(logs.mean(axis=1) + half)


def _launch_level(cell: str, rng: np.random.Generator) -> dict[float, dict]:
    values = percentiles(series(cell, rng, RUNS * LAUNCHES, SAMPLES), QUANTILES).reshape(RUNS, LAUNCHES, -1)
    out = {}
    for j, q in enumerate(QUANTILES):
        true = truth(cell, q)
        intervals = [launch_interval(run) for run in values[:, :, j]]
        given = [iv for iv in intervals if iv.lo is not None]
        inside = all(min(run) <= iv.lo <= iv.hi <= max(run) for run, iv in zip(values[:, :, j], intervals) if iv.lo)
        levels = {round(iv.level, 4) for iv in given}
        t_lo, t_hi = _t_on_logs(values[:, :, j], max(levels))
        out[q] = {"coverage": sum(iv.lo <= true <= iv.hi for iv in given) / max(1, len(given)),
                  "given": len(given) / RUNS, "level": max(levels), "inside": inside,
                  "width": float(np.mean([(iv.hi - iv.lo) / true for iv in given])),
                  "t": float(np.mean((t_lo <= true) & (true <= t_hi))),
                  "t_outside": float(np.mean((t_lo < values[:, :, j].min(1)) | (t_hi > values[:, :, j].max(1))))}
    return out


def _today(cell: str, rng: np.random.Generator) -> dict[float, dict]:
    x = series(cell, rng, TODAY_RUNS, TODAY_SAMPLES)
    ordered = np.sort(x, axis=1)
    out = {}
    for q in QUANTILES:
        true = truth(cell, q)
        lo, hi, given = within_launch(x, q, ordered=ordered)
        out[q] = {"coverage": float(np.mean((lo <= true) & (true <= hi), where=given)) if given.any() else 0.0,
                  "given": float(given.mean())}
    return out


def _keeps(result: dict[float, dict]) -> bool:
    return all(r["coverage"] >= COVERAGE and r["given"] >= GIVEN for r in result.values())


@pytest.mark.parametrize("cell", list(CELLS))
def test_launch_intervals_keep_their_confidence_where_one_launchs_do_not(cell):
    assert all(supports(SAMPLES, q) for q in QUANTILES) and not supports(SAMPLES, 0.9999)  # p99.99: 1 beyond
    seed = 20260 + list(CELLS).index(cell)
    new = _launch_level(cell, np.random.default_rng(seed))
    old = _today(cell, np.random.default_rng(seed + 100))
    print(f"\n{cell}: {RUNS} runs; launches: {LAUNCHES} x {SAMPLES} samples (>= {BEYOND} beyond each percentile); "
          f"today: {TODAY_RUNS} runs of 1 x {TODAY_SAMPLES}")
    for q in QUANTILES:
        n, o = new[q], old[q]
        print(f"  p{100 * q:g}: launches {n['coverage']:.3f} given {n['given']:.2f} at {n['level']:.3f} "
              f"(width {n['width']:.3f}) | t on logs {n['t']:.3f}, outside [min, max] {n['t_outside']:.2f} | "
              f"today {o['coverage']:.3f} given {o['given']:.2f}")
    for q, r in new.items():
        assert r["inside"], f"p{100 * q:g}: an interval outside [min, max] of the launches"
        assert r["level"] >= 0.95
    assert _keeps(new), new
    assert not _keeps(old), old  # the standard can fail: today's method does not meet it here
