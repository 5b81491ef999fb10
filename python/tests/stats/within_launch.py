"""Today's method, re-implemented over arrays for the simulations to hold it
to the same standard: one launch's own interval of a quantile, as the
agent's Batches gives it (agent/src/core/batches.cpp: Woodruff's interval
from batch means of the indicator 1{x <= q}, blocked until the lag-1
autocorrelation is insignificant, widened by what remains, refused above
0.5; Satterthwaite's degrees of freedom; a Korn & Graubard Clopper-Pearson
interval; a tail quantile borrows the design effect of the ones ten and a
hundred times less extreme). Two simplifications: the CDF is read at the
estimate itself, not at its coarse histogram position, and batches close
every TICK samples (a 25 ms tick at 20 000 samples/s). On the agent's own
cells it gives the coverage agent/tests/core/test_coverage.cpp prints
(iid 0.98 / 0.96 / 0.97 for p50 / p99 / p99.9, ar100 0.95 / 1.0 / none,
ar1000 0.95 / 0.98 / none; there: 0.96 / 0.97 / 0.98, 0.96 / 1.0 / none,
0.95 / 0.98 / none)."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

MIN_BATCHES, MAX_BATCHES, TICK = 10, 128, 500


def _levels(c: np.ndarray, s: np.ndarray) -> list[tuple]:
    """Per grouping of 1, 2, 4, ... neighbouring batches: (ratio, se, df, lag-1 r, batches), one value a row."""
    k = c.shape[1]
    out, g = [], 1
    while (k + g - 1) // g >= MIN_BATCHES:
        starts = np.arange(0, k, g)
        gc, gs = np.add.reduceat(c, starts, axis=1), np.add.reduceat(s, starts, axis=1)
        kk = gc.shape[1]
        ratio = gc.sum(1) / gs.sum(1)
        d = gc - ratio[:, None] * gs
        sum2, sum4 = (d * d).sum(1), (d ** 4).sum(1)
        lag = (d[:, 1:] * d[:, :-1]).sum(1)
        se = np.sqrt(kk / (kk - 1) * sum2) / gs.sum(1)
        safe = np.where(sum2 > 0, sum2, 1)
        r = np.where(sum2 > 0, lag / safe, 0) + 1 / kk
        kurtosis = np.where(sum2 > 0, kk * sum4 / (safe * safe), 3)
        df = np.where(kurtosis > 1, np.minimum(kk - 1, 2 * kk / np.maximum(kurtosis - 1, 1e-12)), kk - 1)
        out.append((ratio, se, np.maximum(1, df), r, kk))
        g *= 2
    return out


def _batch_mean(c: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, ...]:
    levels = _levels(c, s)
    use = np.full(c.shape[0], len(levels) - 1)
    blocked = np.zeros(c.shape[0], bool)
    for i in range(len(levels) - 1, -1, -1):  # the finest grouping from which on no lag-1 r is significant
        blocked |= levels[i][3] >= 2 / math.sqrt(levels[i][4])
        use = np.where(blocked, use, i)
    ratio, se, df, r = (np.choose(use, [lv[j] for lv in levels]) for j in range(4))
    kept = np.clip(r, 0, 0.99)
    return ratio, se * np.sqrt((1 + kept) / (1 - kept)), df, r <= 0.5


def interval(x: np.ndarray, quantile: float, confidence: float = 0.95,
             ordered: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi, given) of ``quantile`` for each row of ``x`` (one launch a row, in arrival order;
    ``ordered``: the rows sorted, when the caller has them)."""
    rows, n = x.shape
    size = TICK
    while math.ceil(n / size) >= MAX_BATCHES:
        size *= 2
    if n % size:
        raise ValueError("the simulation's launches are whole batches")
    ordered = np.sort(x, axis=1) if ordered is None else ordered
    weights = np.full((rows, n // size), float(size))

    def cdf_at(ppm: int):
        rank = max(1, (n * ppm + 999999) // 1000000)
        below = (x.reshape(rows, n // size, size) <= ordered[:, rank - 1][:, None, None]).sum(2).astype(float)
        return _batch_mean(below, weights)

    def effective(ratio, se):
        v = ratio * (1 - ratio)
        return np.where((v > 0) & (se > 0), np.minimum(n, v / np.where(se > 0, se * se, 1)), n)

    ppm = round(quantile * 1e6)
    ratio, se, df, given = cdf_at(ppm)
    neff = effective(ratio, se)
    less = 1000000 - 10 * (1000000 - ppm)
    while ppm >= 990000 and less >= 900000:
        pr, pse, pdf, pgiven = cdf_at(less)
        given &= pgiven
        partner = effective(pr, pse)
        df = np.where(partner < neff, pdf, df)
        neff = np.minimum(neff, partner)
        less = 1000000 - 10 * (1000000 - less)
    alpha, p = 1 - confidence, ppm / 1e6
    shrunk = neff * (stats.norm.ppf(1 - alpha / 2) / stats.t.ppf(1 - alpha / 2, df)) ** 2
    given &= (shrunk * (1 - p) >= 1) & (shrunk * p >= 1)
    k = shrunk * p
    with np.errstate(invalid="ignore"):
        p_lo = np.where(k <= 0, 0, stats.beta.ppf(alpha / 2, k, shrunk - k + 1))
        p_hi = np.where(k >= shrunk, 1, stats.beta.ppf(1 - alpha / 2, k + 1, shrunk - k))
    r_lo = np.ceil(n * np.nan_to_num(p_lo)).astype(np.int64)
    r_hi = np.ceil(n * np.nan_to_num(p_hi, nan=1.0)).astype(np.int64)
    given &= (r_lo > 1) & (r_hi < n)
    at = np.arange(rows)
    return ordered[at, np.clip(r_lo, 1, n) - 1], ordered[at, np.clip(r_hi, 1, n) - 1], given
