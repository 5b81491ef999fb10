"""Seeded latency series whose true quantiles are known: the cells of the
coverage simulation (test_coverage.py). Latencies in ns, median ~20 us, one
row a launch, in arrival order; each cell's marginal CDF gives its truth at
the typical launch level (the median of the launch levels, 1).

* ``fgn``: long-range dependence, log-latency 0.5 x fractional Gaussian
  noise of Hurst 0.7 (Davies & Harte's circulant embedding);
* ``regimes``: two levels 25 % apart, switching with probability 1/7000 a
  sample (a mean dwell of 7000 samples), from the stationary share;
* ``offset``: each launch's level drawn with 5 % spread (log-normal);
* ``heavy``: a Pareto tail (alpha 1.5, from 40 us) on 2 % of the samples
  over a log-normal body, and launch levels heavy-tailed too (Student t with
  3 degrees of freedom on the log level, scale 3 %).
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np
import scipy.fft
from scipy import optimize, stats

MEDIAN, SIGMA = 20000.0, 0.5
HURST = 0.7
DWELL, APART = 7000, 1.25
OFFSET = 0.05
TAIL_SHARE, TAIL_FROM, TAIL_ALPHA, BODY_SIGMA = 0.02, 40000.0, 1.5, 0.3
LEVEL_DF, LEVEL_SCALE = 3, 0.03


def fgn(rng: np.random.Generator, count: int, n: int, hurst: float) -> np.ndarray:
    """``count`` independent series of ``n`` samples of unit-variance fractional Gaussian noise."""
    m = 1 << math.ceil(math.log2(n))
    k = np.arange(m + 1, dtype=float)
    gamma = 0.5 * (np.abs(k + 1) ** (2 * hurst) - 2 * k ** (2 * hurst) + np.abs(k - 1) ** (2 * hurst))
    eigen = np.fft.fft(np.concatenate([gamma, gamma[-2:0:-1]])).real
    scale = np.sqrt(np.maximum(eigen, 0) / (2 * m)).astype(np.float32)
    out = np.empty((count, n), np.float32)
    for i in range(0, count, 128):  # one FFT gives two independent series (its real and imaginary parts)
        j = min(count, i + 128)
        pairs = (j - i + 1) // 2
        z = np.empty((pairs, 2 * m), np.complex64)
        z.real, z.imag = rng.standard_normal((2, pairs, 2 * m), dtype=np.float32)
        w = scipy.fft.fft(z * scale, axis=1, overwrite_x=True)
        out[i:j] = np.concatenate([w.real[:, :n], w.imag[:, :n]])[: j - i]
    return out


def _lognormal_cdf(x):
    return stats.norm.cdf(np.log(np.asarray(x) / MEDIAN) / SIGMA)


def _heavy_cdf(x):
    x = np.asarray(x, float)
    tail = np.where(x > TAIL_FROM, 1 - (TAIL_FROM / np.maximum(x, TAIL_FROM)) ** TAIL_ALPHA, 0.0)
    return (1 - TAIL_SHARE) * stats.norm.cdf(np.log(x / MEDIAN) / BODY_SIGMA) + TAIL_SHARE * tail


def _lognormal(rng, count, n, sigma):
    x = rng.standard_normal((count, n), dtype=np.float32)
    x *= sigma
    np.exp(x, out=x)
    x *= MEDIAN
    return x


def _fgn(rng, count, n):
    x = fgn(rng, count, n, HURST)
    x *= SIGMA
    np.exp(x, out=x)
    x *= MEDIAN
    return x


def _regimes(rng, count, n):
    x = _lognormal(rng, count, n, SIGMA)
    flips = rng.random((count, n), dtype=np.float32) < 1 / DWELL
    slow = (np.cumsum(flips, axis=1, dtype=np.int16) + (rng.random(count) < 0.5)[:, None]) % 2 == 1
    x[slow] *= APART
    return x


def _offset(rng, count, n):
    return np.exp(OFFSET * rng.standard_normal((count, 1))).astype(np.float32) * _lognormal(rng, count, n, SIGMA)


def _heavy(rng, count, n):
    x = _lognormal(rng, count, n, BODY_SIGMA)
    tail = rng.random((count, n), dtype=np.float32) < TAIL_SHARE
    x[tail] = TAIL_FROM * rng.random(int(tail.sum())) ** (-1 / TAIL_ALPHA)
    return np.exp(LEVEL_SCALE * rng.standard_t(LEVEL_DF, (count, 1))).astype(np.float32) * x


#: name -> (series generator (rng, launches, samples) -> array, marginal CDF at the typical level)
CELLS: dict[str, tuple[Callable, Callable]] = {
    "fgn": (_fgn, _lognormal_cdf),
    "regimes": (_regimes, lambda x: 0.5 * _lognormal_cdf(x) + 0.5 * _lognormal_cdf(np.asarray(x) / APART)),
    "offset": (_offset, _lognormal_cdf),
    "heavy": (_heavy, _heavy_cdf),
}


def truth(cell: str, quantile: float) -> float:
    """The cell's true quantile (ns), from its CDF."""
    cdf = CELLS[cell][1]
    return optimize.brentq(lambda v: float(cdf(v)) - quantile, 1.0, 1e12, xtol=1e-6, rtol=1e-12)


def series(cell: str, rng: np.random.Generator, launches: int, samples: int) -> np.ndarray:
    return CELLS[cell][0](rng, launches, samples)


def percentiles(x: np.ndarray, quantiles: tuple[float, ...]) -> np.ndarray:
    """Each row's nearest-rank percentiles (the agent's: rank ceil(n q)), one column a quantile."""
    n = x.shape[1]
    ranks = [max(1, (n * round(q * 1e6) + 999999) // 1000000) - 1 for q in quantiles]
    return np.partition(x, sorted(set(ranks)), axis=1)[:, ranks]
