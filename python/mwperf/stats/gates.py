"""The gates' decision rules, on launches: each decides, or says it cannot.

**A shift between two sides** (``compare --fail-if-slower``: the launches'
log p50, the allowance ``log(1 + PCT/100)``; ``--fail-if-lossier``: their
loss rates, the allowance ``PCT/100``): a t test with the variance pooled
over both sides' launches (and over the store's history of the point, where
given: ``prior``), one-sided at ``ALPHA``:

* **regression** when the lower confidence bound of B - A is above the
  allowance (B is worse by more than it allows, at 95 %): with no change it
  fires at most ``ALPHA`` of the time, less the larger the allowance;
* **holds** when it is not, and the gate could have caught a regression of
  ``catch`` (four times the allowance: 20 % for --fail-if-slower 5) nine
  times in ten (``POWER``) at the spread the launches show: its
  *resolution*, the allowance plus ``(t(1-ALPHA) + t(POWER)) x`` the
  standard error, is within ``catch``;
* **cannot decide** otherwise: fewer than ``MIN_A_SIDE`` launches a side (one
  a side with a stored spread), or a spread too wide for the launches there
  are; ``need`` says how many launches a side would do, judged by the spread.

**A limit on one side** (``check``): the launches' values against a budget's
limit through one-sided order-statistic bounds of their median
(:func:`mwperf.stats.launches.bound_rank`): **holds** when the bound on the
worse side meets the limit, **violated** when the bound on the better side
does not, **cannot decide** when the bounds straddle the limit or there are
fewer launches than a bound needs (5 at 95 %). Either wrong verdict has at
most ``1 - confidence`` chance when the median sits at the limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Sequence

from mwperf.stats.launches import CONFIDENCE, bound_rank

__all__ = ["ALPHA", "POWER", "CATCH", "MIN_A_SIDE", "REGRESSION", "HOLDS", "VIOLATED", "CANNOT_DECIDE", "Spread",
           "pooled", "Decision", "shift", "Limited", "against_limit"]

ALPHA = 0.05
POWER = 0.9
#: A gate decides only where it would catch a change this many times its allowance (POWER of the time).
CATCH = 4.0
MIN_A_SIDE = 2
#: The most launches a side ``need`` names; beyond it, "more than" this.
MOST = 10000
REGRESSION, HOLDS, VIOLATED, CANNOT_DECIDE = "regression", "holds", "violated", "cannot decide"


@dataclass(frozen=True)
class Spread:
    """A stored launch-to-launch spread: a standard deviation with its degrees of freedom."""

    sd: float
    df: int


def pooled(groups: Sequence[Sequence[float]]) -> Spread | None:
    """The spread within groups (a point's launches of each stored run), pooled over
    the groups of two values or more; None where none has two."""
    ss, df = 0.0, 0
    for group in groups:
        xs = _finite(group)
        if len(xs) >= 2:
            mean = sum(xs) / len(xs)
            ss += sum((v - mean) ** 2 for v in xs)
            df += len(xs) - 1
    return Spread(math.sqrt(ss / df), df) if df else None


@dataclass(frozen=True)
class Decision:
    verdict: str
    change: float | None = None  # mean(b) - mean(a)
    lower: float | None = None  # one-sided lower bound of change at 1 - ALPHA
    upper: float | None = None  # and the upper one
    resolution: float | None = None  # the change caught POWER of the time
    launches: tuple[int, int] = (0, 0)
    need: int | None = None  # launches a side that would decide (judged by the spread); MOST + 1: more than MOST
    sd: float | None = None
    df: int = 0
    why: str = ""


@lru_cache(maxsize=4096)
def _t(q: float, df: float) -> float:
    from scipy.stats import t

    return float(t.ppf(q, df))


def _need(sd: float, df: int, allowance: float, catch: float, prior_df: int, start: int) -> int:
    """The launches a side (both sides alike) whose resolution reaches ``catch`` at spread ``sd``
    (estimated with ``df`` degrees of freedom: at its 80 % upper bound, so that the launches
    named decide most of the time, not half of it)."""
    if sd == 0:
        return start
    from scipy.stats import chi2

    sd *= math.sqrt(df / float(chi2.ppf(0.2, df)))
    room = catch - allowance
    if room <= 0:
        return MOST + 1

    def fine(n: int) -> bool:
        df = 2 * n - 2 + prior_df
        return df >= 1 and (_t(1 - ALPHA, df) + _t(POWER, df)) * sd * math.sqrt(2 / n) <= room

    if not fine(MOST):
        return MOST + 1
    lo, hi = start - 1, MOST  # fine(hi); the resolution shrinks as n grows
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if mid >= 1 and fine(mid) else (mid, hi)
    return max(hi, start)


def _finite(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def shift(a: Sequence[float], b: Sequence[float], allowance: float, catch: float, prior: Spread | None = None,
          floor: float = 0.0) -> Decision:
    """Whether B is worse than A by more than ``allowance`` (module doc): ``a``
    and ``b`` one value a launch, larger worse (log latencies, loss rates);
    ``floor``: the least standard deviation the values can have (their resolution)."""
    a, b = _finite(a), _finite(b)
    na, nb = len(a), len(b)
    least = 1 if prior is not None and prior.df > 0 else MIN_A_SIDE
    if min(na, nb) < least:
        return Decision(CANNOT_DECIDE, launches=(na, nb), need=least,
                        why=f"cannot decide: {na}+{nb} launches, need {least}+{least}")
    ma, mb = sum(a) / na, sum(b) / nb
    ss = sum((v - ma) ** 2 for v in a) + sum((v - mb) ** 2 for v in b)
    df = na + nb - 2
    if prior is not None and prior.df > 0:
        ss += prior.df * prior.sd ** 2
        df += prior.df
    sd = max(math.sqrt(ss / df), floor)
    se = sd * math.sqrt(1 / na + 1 / nb)
    change = mb - ma
    t1 = _t(1 - ALPHA, df)
    lower, upper = change - t1 * se, change + t1 * se
    resolution = allowance + (t1 + _t(POWER, df)) * se
    decided = Decision(HOLDS, change, lower, upper, resolution, (na, nb), sd=sd, df=df,
                       why="not worse by more than allowed")
    if lower > allowance:
        return replace(decided, verdict=REGRESSION, why="worse by more than allowed")
    if resolution <= catch:
        return decided
    need = _need(sd, df, allowance, catch, prior.df if prior is not None else 0, max(na, nb) + 1)
    said = f"more than {MOST} a side" if need > MOST else f"{need}+{need}"
    return replace(decided, verdict=CANNOT_DECIDE, need=need, why=f"cannot decide: {na}+{nb} launches, need {said}")


@dataclass(frozen=True)
class Limited:
    """A limit's verdict on the launches: the bounds of their median (worse and better side) and the launches needed."""

    verdict: str
    worse: float | None = None
    better: float | None = None
    launches: int = 0
    need: int | None = None
    why: str = ""


_OPS = {"<=": lambda v, x: v <= x, "<": lambda v, x: v < x, ">=": lambda v, x: v >= x, ">": lambda v, x: v > x}


def against_limit(values: Sequence[float], op: str, limit: float, confidence: float = CONFIDENCE) -> Limited:
    """A limit ``op limit`` (``<=``, ``<``, ``>=``, ``>``) on the launches'
    values (module doc)."""
    xs = sorted(_finite(values))
    n = len(xs)
    k = bound_rank(n, confidence)
    if k is None:
        need = next(m for m in range(n + 1, n + 64) if bound_rank(m, confidence) is not None)
        return Limited(CANNOT_DECIDE, launches=n, need=need, why=f"cannot decide: {n} launches, need {need}")
    upper, lower = xs[k - 1], xs[n - k]
    worse, better = (upper, lower) if op in ("<=", "<") else (lower, upper)
    meets = _OPS[op]
    if meets(worse, limit):
        return Limited(HOLDS, worse, better, n)
    if not meets(better, limit):
        return Limited(VIOLATED, worse, better, n)
    held = sum(1 for v in xs if meets(v, limit))
    return Limited(CANNOT_DECIDE, worse, better, n,
                   why=f"cannot decide: {held} of {n} launches meet it (more launches may decide it)")
