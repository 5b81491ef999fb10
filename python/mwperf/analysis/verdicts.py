"""A point's launches (its records) as the gates see them: the values of
each launch (:mod:`mwperf.stats.gates` decides on them) and the words of a
decision.

A record is one launch. Its p50 counts when the launch measured one from
enough samples (:func:`mwperf.stats.launches.supports`); its loss rate when
it has one. A side that measured no latency at all where the baseline did
(every sample lost, or a point that only looks ok) is a regression, never a
pass; imported tables (no launches of their own) are one launch each.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from mwperf.model.record import Record
from mwperf.stats.gates import CANNOT_DECIDE, CATCH, HOLDS, MIN_A_SIDE, REGRESSION, Decision, Spread, pooled, shift
from mwperf.stats.launches import BEYOND, supports

__all__ = ["UNDECIDED_EXIT", "NAMES", "Gated", "latency_values", "loss_values", "slower", "lossier",
           "difference_text", "stored_spread"]

#: The exit code of a gate that could not decide (beside 0 pass, 1 failed, 2 bad input, 130 interrupted).
UNDECIDED_EXIT = 3
#: The resolution of a p50: the agent's histogram reads a percentile within 0.1 %.
P50_RESOLUTION = 0.001
#: The fewest samples a launch's p50 is judged from (:func:`mwperf.stats.launches.supports`).
_FEWEST = math.ceil(BEYOND / 0.5)
#: What the verdicts are called in compare's lines.
NAMES = {REGRESSION: "REGRESSION", CANNOT_DECIDE: "CANNOT DECIDE"}


@dataclass(frozen=True)
class Gated:
    """A gate's decision on one point and what to say about it."""

    decision: Decision
    said: str


def latency_values(records: list[Record]) -> list[float]:
    """The launches' log p50 (those that measured one from enough samples)."""
    out = []
    for r in records:
        stats = r.latency_us
        if stats is not None and stats.p50 is not None and stats.p50 > 0 and (
                stats.count is None or supports(stats.count, 0.5)):
            out.append(math.log(stats.p50))
    return out


def _p50(record: Record) -> float | None:
    stats = record.latency_us
    return None if stats is None else stats.p50


def loss_values(records: list[Record]) -> list[float]:
    return [float(r.loss_rate) for r in records if r.loss_rate is not None]


def _history(prior: Spread | None) -> str:
    return "" if prior is None else f" (spread pooled with the store's history of the point: {prior.df} df)"


def _pct(change: float) -> str:
    return f"{100 * math.expm1(change):+.1f} %"


def _words(d: Decision, what: str, show: Callable[[float], str], allowed: str, worse: str, catch: float) -> str:
    """A gate's decision on a point in words (``show``: a change as the reader reads it)."""
    na, nb = d.launches
    if d.change is None or d.lower is None or d.resolution is None:
        return d.why
    change = f"{what} {show(d.change)}"
    if d.verdict == REGRESSION:
        return f"{change} (at least {show(d.lower)} at 95 %, more than the {allowed} allowed), {na}+{nb} launches"
    if d.verdict == HOLDS:
        return f"{change}: not more than {allowed} {worse}, {na}+{nb} launches"
    return (f"{d.why} ({change}; at their spread these launches would catch {show(d.resolution)}, a {allowed} gate "
            f"must catch {show(catch)})")


def slower(a: list[Record], b: list[Record], pct: float, prior: Spread | None = None) -> Gated | None:
    """``--fail-if-slower PCT`` on one point (None: neither side measured latency)."""
    va, vb = latency_values(a), latency_values(b)
    if not va and not vb:
        measured = sum(1 for r in a + b if _p50(r) is not None)
        if not measured:
            return None  # neither side measures latency (throughput points): nothing for this gate
        return Gated(Decision(CANNOT_DECIDE, launches=(0, 0), need=MIN_A_SIDE),
                     f"cannot decide: none of the {measured} launches has a p50 from {_FEWEST} samples or more")
    if va and not vb:
        said = "no latency measured in B (every sample lost?)" if not any(_p50(r) is not None for r in b) else \
            f"B's launches have no p50 from {_FEWEST} samples or more"
        return Gated(Decision(REGRESSION, launches=(len(va), 0)), f"{said} where A has {len(va)} launch(es) of it")
    catch = math.log1p(CATCH * pct / 100)
    d = shift(va, vb, math.log1p(pct / 100), catch, prior=prior, floor=P50_RESOLUTION)
    return Gated(d, _words(d, "p50", _pct, f"{pct:g} %", "slower", catch) + _history(prior))


def lossier(a: list[Record], b: list[Record], pct: float, prior: Spread | None = None) -> Gated | None:
    """``--fail-if-lossier PCT`` (percentage points) on one point (None: neither side has a loss rate)."""
    va, vb = loss_values(a), loss_values(b)
    if not va and not vb:
        return None
    d = shift(va, vb, pct / 100, CATCH * pct / 100, prior=prior)
    return Gated(d, _words(d, "loss", lambda v: f"{100 * v:+.2f} points", f"{pct:g} points", "lossier",
                           CATCH * pct / 100) + _history(prior))


def stored_spread(runs: list[list[Record]], latency: bool) -> Spread | None:
    """The launch-to-launch spread of a point over its stored runs (their launches, a list a run):
    of the log p50 (``latency``) or of the loss rate."""
    return pooled([latency_values(rs) if latency else loss_values(rs) for rs in runs])


def difference_text(a: list[Record], b: list[Record]) -> str:
    """The p50 difference B vs A with its 90 % interval (the launches' pooled t), for the table."""
    va, vb = latency_values(a), latency_values(b)
    if not va or not vb:
        return "no latency" if not va and not vb else f"no latency in {'A' if not va else 'B'}"
    d = shift(va, vb, 0.0, math.inf, floor=P50_RESOLUTION)
    if d.change is None or d.lower is None or d.upper is None:
        return f"{_pct(sum(vb) / len(vb) - sum(va) / len(va))} ({len(va)}+{len(vb)} launches: no interval)"
    return f"{_pct(d.change)} [{_pct(d.lower)}, {_pct(d.upper)}] ({len(va)}+{len(vb)} launches)"

