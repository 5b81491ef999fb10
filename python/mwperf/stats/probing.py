"""max-rate's next-probe rule: a probabilistic bisection over the limit.

The limit ``L`` of a cell is the rate up to which a probe meets the
criterion; a probe's verdict is noisy (the machine's capacity varies from
probe to probe; a probe can fail for a reason that has nothing to do with its
rate). The model: a probe at rate ``r`` meets the criterion with probability

    SPURIOUS + (1 - TRANSIENT - SPURIOUS) * Phi((ln L - ln r) / sigma)

with ``sigma`` (the probes' spread) unknown, one of ``NOISE`` (equally likely
a priori), and ``ln L`` uniform over the bounds searched, on a grid of
``SPACING``. Every probe multiplies the posterior by its likelihood; the
next probe is the posterior median of the limit (the first: the start
rate), so near the boundary the search re-probes where one verdict, noisy or
transient, left it uncertain. It ends when the answer, the posterior's
``ANSWER`` quantile (the rate the limit lies above with 95 % confidence), is
within ``step`` of the median, or after ``most`` probes. A failed probe moves
the posterior by as much as its chance of being transient allows, so one
neither caps nor inflates the answer (python/tests/stats/test_probing.py:
with 5 % probe noise, or a 5 % chance of a transient failure a probe, the
answer lies within [L / 1.1, L] in at least 90 % of searches).

Everything here is a function of the probes so far (rate, met), so a search
resumes from its records.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Sequence

import numpy as np

__all__ = ["NOISE", "TRANSIENT", "SPURIOUS", "ANSWER", "SPACING", "posterior", "quantile", "next_probe", "answer",
           "settled", "rounded"]

NOISE = (0.01, 0.02, 0.03, 0.05, 0.08, 0.12)
TRANSIENT, SPURIOUS = 0.05, 0.01
ANSWER = 0.05
SPACING = 0.005
#: A probe's rate, in this many significant digits.
DIGITS = 4

Probe = tuple[float, bool]


def rounded(rate: float) -> float:
    return float(f"{rate:.{DIGITS}g}")


@lru_cache(maxsize=8)
def _grid(low: float, high: float) -> np.ndarray:
    return np.arange(math.log(low), math.log(high) + SPACING / 2, SPACING)


@lru_cache(maxsize=64)
def _log_posterior(probes: tuple[Probe, ...], bounds: tuple[float, float]) -> np.ndarray:
    """ln of the unnormalised posterior over (limit grid, NOISE), from the probes in order (a prefix is cached)."""
    from scipy.special import ndtr

    grid = _grid(*bounds)
    if not probes:
        return np.zeros((len(grid), len(NOISE)))
    rate, met = probes[-1]
    p = SPURIOUS + (1 - TRANSIENT - SPURIOUS) * ndtr((grid[:, None] - math.log(rate)) / np.asarray(NOISE)[None, :])
    return _log_posterior(probes[:-1], bounds) + np.log(p if met else 1 - p)


def posterior(probes: Sequence[Probe], bounds: tuple[float, float]) -> tuple[np.ndarray, np.ndarray]:
    """(ln rates, their posterior probabilities) of the limit after the probes."""
    lp = _log_posterior(tuple((float(r), bool(m)) for r, m in probes), (float(bounds[0]), float(bounds[1])))
    weights = np.exp(lp - lp.max()).sum(axis=1)
    return _grid(*bounds), weights / weights.sum()


def quantile(grid: np.ndarray, weights: np.ndarray, q: float) -> float:
    """The posterior's ``q`` quantile of the limit (Hz)."""
    at = int(np.searchsorted(np.cumsum(weights), q))
    return math.exp(grid[min(len(grid) - 1, at)])


def settled(probes: Sequence[Probe], bounds: tuple[float, float], step: float) -> bool:
    """Whether a probe met the criterion and the answer is within ``step`` of
    the posterior median, or the limit lies beyond a bound that two probes
    there said so of."""
    if not probes:
        return False
    low, high = bounds
    grid, weights = posterior(probes, bounds)
    median = quantile(grid, weights, 0.5)
    if median >= high / (1 + step) and sum(met and rate >= high for rate, met in probes) >= 2:
        return True
    if median <= low * (1 + step) and sum(not met and rate <= low for rate, met in probes) >= 2:
        return True
    return any(met for _, met in probes) and median / quantile(grid, weights, ANSWER) <= 1 + step


def next_probe(probes: Sequence[Probe], bounds: tuple[float, float], step: float, start: float,
               most: int) -> float | None:
    """The rate to probe next; None when the search is over (settled, or ``most`` probes made)."""
    low, high = bounds
    if not probes:
        return rounded(min(max(start, low), high))
    if len(probes) >= most or settled(probes, bounds, step):
        return None
    grid, weights = posterior(probes, bounds)
    median = quantile(grid, weights, 0.5)
    if median >= high / (1 + step):  # near a bound: the bound itself, which says whether the limit is beyond it
        return high
    return low if median <= low * (1 + step) else rounded(median)


def answer(probes: Sequence[Probe], bounds: tuple[float, float], step: float) -> tuple[float | None, float, float,
                                                                                      str | None]:
    """(the answer, the posterior's 5 % and 95 % quantiles, a note): the
    answer None when the criterion is not met even near the lowest rate; the
    note says when the answer sits at a bound or the search did not settle."""
    low, high = bounds
    grid, weights = posterior(probes, bounds)
    lo, median, hi = (quantile(grid, weights, q) for q in (ANSWER, 0.5, 1 - ANSWER))
    note = None
    if not settled(probes, bounds, step):
        note = f"not settled within {len(probes)} probes: the limit lies in [{rounded(lo):g}, {rounded(hi):g}] Hz"
    if median >= high / (1 + step) and any(met and rate >= high for rate, met in probes):
        return high, lo, hi, f"met at the highest rate searched ({high:g} Hz): the maximum is at least that"
    if median <= low * (1 + step) and any(not met and rate <= low for rate, met in probes):
        return None, lo, hi, f"not met at the lowest rate searched ({low:g} Hz)"
    if not any(met for _, met in probes):
        return None, lo, hi, f"not met at any rate probed (the lowest: {min(rate for rate, _ in probes):g} Hz)"
    return rounded(lo), lo, hi, note
