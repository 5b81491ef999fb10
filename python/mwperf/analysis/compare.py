"""``mwperf compare DIR_A DIR_B [...]``: the same points of several runs side
by side, with ratios, a significance verdict and CI regression gates.

Points match on what identifies them (middleware, mode, size, rate, the QoS
label, and every other option of the agent's table that says what was
measured); repetitions of a point are its samples. Each later run is compared with
the first (the baseline).

Every repetition is a launch of its own (its agents started for it), and
launches differ more than one launch's interval says (``results/launches.py``);
so where repetitions exist the launch is the unit tested, never the samples
of one launch. Each side's spread is shown as between-launch / within-launch
(the launches' p50 standard deviation over their mean / the median half-width
of their p50 intervals, as fractions of p50) and the number of launches.

Significance of a latency difference (p50):

* five or more repetitions on each side: two-sided Mann–Whitney U test on
  the repetitions' p50 values (scipy, normal approximation with tie and
  continuity corrections), alpha 0.05; the ratio B/A then carries its 95 %
  bootstrap interval (percentile method over the repetitions);
* fewer, but repetitions on a side (three launches or more in all, two on a
  side at least): a two-sided t test on the launches' log p50 with the
  variance pooled over both sides (scipy; the U test cannot reach 0.05 with
  fewer than four a side), alpha 0.05;
* otherwise, when both points kept their latency samples (DIR/samples, up to
  16384 a point, evenly strided over the run): the same test on the samples.
  Latency samples of one run are not independent (a slow second slows many),
  so with many samples small shifts come out significant: the gates also
  need the difference to exceed their percentage;
* otherwise (imported points) the distribution-free 95 % confidence
  intervals of the two p50s: disjoint intervals differ significantly,
  overlapping ones do not;
* fewer than MIN_SAMPLES latency samples on a side: the difference is not
  tested ("too few samples");
* no sample count, no samples and no interval (a Perftest or ddsperf table
  gives only its percentiles): "untested".

Gates: ``--fail-if-slower PCT`` fails (exit 1) when a point's p50 latency is
more than PCT % above the baseline's and the difference is significant, or
cannot be tested at all ("untested": imported numbers are gated on their
ratio); ``--fail-if-lossier PCT`` when its loss rate is more than PCT
percentage points above. With a gate, a baseline point the other run lacks
(not measured, failed, or its record unusable) fails it too: a gate never
passes on what it did not see. Runs whose points were measured under different CPU placements or wait
strategies, or with agents of different build types, are refused unless
``--force``: their numbers do not measure the same thing. Each row names
what else its two points were measured through differently
(:func:`mwperf.model.fairness.unlike`: zero-copy loan vs copy, shared
memory vs network, busy-poll vs blocking wait, sync vs async publishing,
middleware versions, socket buffer sizes).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mwperf.analysis.versions import config_differences, library
from mwperf.errors import UsageError
from mwperf.model.fairness import unlike
from mwperf.model.labels import PointId, point_id
from mwperf.model.launches import log_p50s, spread
from mwperf.model.sections import Launches
from mwperf.model.record import Record
from mwperf.results.rundir import RunDir, read_records, read_samples, records_file_problem

__all__ = ["mann_whitney_u", "bootstrap_ratio_ci", "between_launches_p", "compare", "Comparison", "Pairing",
           "Compared", "MIN_SAMPLES", "MIN_REPETITIONS", "UNTESTED"]

MIN_SAMPLES = 100
MIN_REPETITIONS = 5
ALPHA = 0.05
#: The verdict on numbers that carry nothing to test a difference with (imported tables).
UNTESTED = "untested (no sample count, samples or intervals)"


def mann_whitney_u(a: list[float], b: list[float]) -> tuple[float, float]:
    """(U of ``a``, two-sided p-value): scipy's Mann–Whitney U test, normal
    approximation with tie and continuity corrections (as many samples as
    compare has are past the exact method's reach)."""
    from scipy.stats import mannwhitneyu

    if not a or not b:
        return 0.0, 1.0
    result = mannwhitneyu(a, b, alternative="two-sided", method="asymptotic", use_continuity=True)
    p = float(result.pvalue)
    return float(result.statistic), 1.0 if math.isnan(p) else min(1.0, p)


def bootstrap_ratio_ci(a: list[float], b: list[float], confidence: float = 0.95) -> tuple[float, float] | None:
    """Bootstrap confidence interval (BCa, scipy) of median(b) / median(a)
    over independent repetitions; None when either side has fewer than
    MIN_REPETITIONS or the interval cannot be computed."""
    if len(a) < MIN_REPETITIONS or len(b) < MIN_REPETITIONS or not all(v > 0 for v in a):
        return None
    import numpy as np
    from scipy.stats import bootstrap

    def ratio(x, y, axis=-1):
        return np.median(y, axis=axis) / np.median(x, axis=axis)

    result = bootstrap((np.asarray(a, float), np.asarray(b, float)), ratio, confidence_level=confidence,
                       n_resamples=2000, method="percentile", vectorized=True, paired=False,
                       rng=np.random.default_rng(20240601))
    lo, hi = float(result.confidence_interval.low), float(result.confidence_interval.high)
    return None if math.isnan(lo) or math.isnan(hi) else (lo, hi)


@dataclass
class Run:
    path: Path
    points: dict[PointId, list[Record]]
    build_type: str | None


def _load(directory: str, warn: Callable[[str], object]) -> Run:
    path = Path(directory)
    problem = records_file_problem(path)
    if problem:
        raise UsageError("compare", directory, problem)
    points: dict[PointId, list[Record]] = {}
    for r in read_records(path, warn=warn):
        if r.ok:
            points.setdefault(point_id(r), []).append(r)
    doc = RunDir(path).read_run_json() or {}
    return Run(path, points, (doc.get("agent") or {}).get("build_type"))


def _setup(records: list[Record]) -> set[tuple]:
    return {r.placement for r in records}


def _p50(r: Record) -> float | None:
    return r.stat("p50")


def _verdict(a: list[Record], b: list[Record], dir_a: Path, dir_b: Path) -> str:
    """'significant' / 'not significant' / 'too few samples' for the p50 latency."""
    pa = [v for v in map(_p50, a) if v is not None]
    pb = [v for v in map(_p50, b) if v is not None]
    if not pa or not pb:
        return "no latency"
    if len(pa) >= MIN_REPETITIONS and len(pb) >= MIN_REPETITIONS:
        _, p = mann_whitney_u(pa, pb)
        return f"{'significant' if p < ALPHA else 'not significant'} (U test p={p:.3f})"
    if max(len(pa), len(pb)) >= 2 and len(pa) + len(pb) >= 3:  # repetitions: the launch is the unit
        p = between_launches_p(a, b)
        return (f"{'significant' if p < ALPHA else 'not significant'} (between launches: t test on log p50, "
                f"{len(pa)}+{len(pb)} launches, p={p:.3g})")
    la, lb = a[0].latency_us, b[0].latency_us
    ca_n, cb_n = (None if la is None else la.count), (None if lb is None else lb.count)
    if any(c is not None and c < MIN_SAMPLES for c in (ca_n, cb_n)):
        return "too few samples"
    sa, sb = read_samples(dir_a, a[0]), read_samples(dir_b, b[0])
    if sa and sb and len(sa) >= MIN_SAMPLES and len(sb) >= MIN_SAMPLES:
        _, p = mann_whitney_u(sa, sb)
        return f"{'significant' if p < ALPHA else 'not significant'} (U test on {len(sa)}+{len(sb)} samples, p={p:.3g})"
    ca, cb = (None if la is None else la.p50_ci), (None if lb is None else lb.p50_ci)
    if not ca or not cb:
        return UNTESTED if ca_n is None or cb_n is None else "too few samples"
    disjoint = ca[1] < cb[0] or cb[1] < ca[0]
    return "significant (95 % CIs apart)" if disjoint else "not significant (95 % CIs overlap)"


def between_launches_p(a: list[Record], b: list[Record]) -> float:
    """Two-sided p of a t test on the launches' log p50 (variance pooled over
    both sides: a side of one launch borrows the other's spread)."""
    from scipy.stats import ttest_ind

    la, lb = log_p50s(a), log_p50s(b)
    if statistics.pvariance(la + lb) == 0 or (statistics.pvariance(la) == 0 and statistics.pvariance(lb) == 0):
        return 1.0 if statistics.fmean(la) == statistics.fmean(lb) else 0.0  # no spread to weigh a difference by
    p = float(ttest_ind(la, lb, equal_var=True).pvalue)
    return 1.0 if math.isnan(p) else p


def _median(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _ratio(b: float | None, a: float | None) -> float | None:
    return None if a is None or a == 0 or b is None else b / a


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


@dataclass
class Compared:
    """One point of both runs: medians over its repetitions, the verdict on its p50, how far launches spread."""

    key: PointId
    p50: tuple[float | None, float | None]
    p50_ratio: float | None
    p50_ratio_ci: tuple[float, float] | None  # over repetitions: the ratio's 95 % bootstrap interval
    verdict: str
    spread: tuple[Launches | None, Launches | None]
    samples_per_s: tuple[float | None, float | None]
    loss_rate: tuple[float | None, float | None]
    unlike: list[str]  # what the two points were measured through differently

    @property
    def samples_per_s_ratio(self) -> float | None:
        return _ratio(self.samples_per_s[1], self.samples_per_s[0])


@dataclass
class Pairing:
    """A run (B) against the baseline (A): the points they share, and the baseline's the run lacks."""

    base: Path
    other: Path
    forced: str | None  # what makes them not comparable, compared anyway (--force)
    points: list[Compared]
    missing: list[PointId]


@dataclass
class Comparison:
    pairings: list[Pairing] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)  # each gate that failed, named

    @property
    def exit_code(self) -> int:
        return 1 if self.failures else 0


def _compared(key: PointId, a: list[Record], b: list[Record], base: Path, other: Path,
              versions: bool = False) -> Compared:
    pa, pb = [v for v in map(_p50, a) if v is not None], [v for v in map(_p50, b) if v is not None]
    la, lb = _median([_p50(r) for r in a]), _median([_p50(r) for r in b])
    return Compared(key, (la, lb), _ratio(lb, la), bootstrap_ratio_ci(pa, pb), _verdict(a, b, base, other),
                    (spread(a), spread(b)),
                    (_median([r.samples_per_s for r in a]), _median([r.samples_per_s for r in b])),
                    (_median([r.loss_rate for r in a]), _median([r.loss_rate for r in b])),
                    list(dict.fromkeys(d for ra in a for rb in b
                                       for d in [*unlike(ra, rb), *(config_differences(ra, rb) if versions else [])])))


def _gates(c: Compared, fail_if_slower: float | None, fail_if_lossier: float | None) -> list[str]:
    out = []
    (la, lb), (lossa, lossb), ratio = c.p50, c.loss_rate, c.p50_ratio
    if (fail_if_slower is not None and ratio is not None and c.verdict.startswith(("significant", "untested"))
            and ratio > 1 + fail_if_slower / 100):
        out.append(f"{c.key.label}: p50 {_fmt(lb)} us vs {_fmt(la)} us (+{(ratio - 1) * 100:.1f} %)"
                   + (", untested" if c.verdict == UNTESTED else ""))
    if (fail_if_lossier is not None and lossa is not None and lossb is not None
            and (lossb - lossa) * 100 > fail_if_lossier):
        out.append(f"{c.key.label}: loss {100 * lossb:.2f} % vs {100 * lossa:.2f} %")
    return out


def _version_runs(dirs: list[str], names: list[str], warn: Callable[[str], object]) -> list[Run]:
    """``--versions OLD,NEW[,...]``: each build's points as a run of its own, keyed
    alike (the builds' names joined): all from one run directory, or the first's
    from the first directory and the others' from the second."""
    if len(names) < 2 or len(set(names)) != len(names):
        raise UsageError("compare", "--versions", "name two builds of one middleware or more, each once (old,new)")
    if not 1 <= len(dirs) <= 2:
        raise UsageError("compare", " ".join(dirs),
                         "--versions takes one run directory, or two (the old build's, the new's)")
    loaded = [_load(d, warn) for d in dirs]
    runs: list[Run] = []
    libraries: list[list[str]] = []
    for i, name in enumerate(names):
        run = loaded[min(i, len(loaded) - 1)]
        points = {key._replace(mw="/".join(names)): records for key, records in run.points.items() if key.mw == name}
        if not points:
            raise UsageError("compare", name, f"no ok point of it in {run.path}")
        libs = sorted({(library(r) or ("none",))[0] for records in points.values() for r in records})
        if libraries and libs != libraries[0]:
            raise UsageError("compare", ",".join(names), f"not builds of one middleware ({names[0]} runs on "
                             f"{', '.join(libraries[0])}, {name} on {', '.join(libs)})")
        libraries.append(libs)
        runs.append(Run(run.path, points, run.build_type))
    return runs


def compare(dirs: list[str], *, fail_if_slower: float | None = None, fail_if_lossier: float | None = None,
            force: bool = False, warn: Callable[[str], object] = lambda message: None,
            versions: list[str] | None = None) -> Comparison:
    """Each run after the first against the first; unusable records named through ``warn``.
    ``versions``: builds of one middleware instead, each against the first (:func:`_version_runs`),
    each pairing naming the settings whose defaults differ between them."""
    if versions is None and len(dirs) < 2:
        raise UsageError("compare", None, "give two run directories or more (the first is the baseline)")
    runs = _version_runs(dirs, versions, warn) if versions is not None else [_load(d, warn) for d in dirs]
    base = runs[0]
    result = Comparison()
    for other in runs[1:]:
        common = [k for k in base.points if k in other.points]
        if not common:
            raise UsageError("compare", f"{base.path} {other.path}", "no point in common (middleware, mode, size, QoS)")
        problems = []
        if base.build_type and other.build_type and base.build_type != other.build_type:
            problems.append(f"agent build {base.build_type} vs {other.build_type}")
        for key in common:
            sa, sb = _setup(base.points[key]), _setup(other.points[key])
            if sa != sb:
                problems.append(f"{key.label}: CPU placement / wait {sorted(sa, key=str)} vs {sorted(sb, key=str)}")
        if problems and not force:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise UsageError("compare", f"{base.path} {other.path}",
                             f"not comparable: {problems[0]}{more}; --force compares anyway")
        points = [_compared(k, base.points[k], other.points[k], base.path, other.path, versions is not None)
                  for k in common]
        missing = [k for k in base.points if k not in other.points]
        result.pairings.append(Pairing(base.path, other.path, problems[0] if problems else None, points, missing))
        for c in points:
            result.failures += _gates(c, fail_if_slower, fail_if_lossier)
        if fail_if_slower is not None or fail_if_lossier is not None:
            result.failures += [f"{k.label}: no usable ok point in {other.path} (not measured, failed or unreadable)"
                                for k in missing]
    return result
