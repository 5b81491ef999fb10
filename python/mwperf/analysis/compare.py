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
(:func:`mwperf.results.fairness.unlike`: zero-copy loan vs copy, shared
memory vs network, busy-poll vs blocking wait, sync vs async publishing,
middleware versions, socket buffer sizes).
"""

from __future__ import annotations

import math
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, TextIO

from mwperf.errors import UsageError
from mwperf.export.derived import source_section, subscribers, subscribers_as
from mwperf.export.terminal import table_text
from mwperf.results.fairness import unlike
from mwperf.results.labels import field, qos_label
from mwperf.results.launches import log_p50s, spread, spread_text
from mwperf.results.rundir import RESULTS_JSONL, RunDir, read_records, read_samples
from mwperf.table import snapshot

__all__ = ["mann_whitney_u", "bootstrap_ratio_ci", "between_launches_p", "compare_runs", "point_key", "point_label",
           "scenario_of", "placement_of", "load_run", "Run",
           "MIN_SAMPLES", "MIN_REPETITIONS"]

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


#: The point's options a key names by themselves; the table's other options
#: that identify what was measured (latency-count, burst-gap, ...) follow, where not at their default.
_NAMED = ("mw", "mode", "size", "rate", "demand", "subscribers", "subscribers-as")


def _others(r: dict) -> tuple:
    out = []
    for row in snapshot().rows:
        if row.point_key and row.group == "point" and row.name not in _NAMED:
            value = row.from_record(field(r, row.record))
            if value is not None and value != row.default:
                out.append(f"{row.name} {row.shown(value)}")
    return tuple(out)


def scenario_of(r: dict) -> tuple | None:
    """A scenario's flow: (scenario, its digest, flow, together or alone); None for a plain point."""
    s = r.get("scenario")
    if not isinstance(s, dict):
        return None
    return s.get("name"), s.get("hash"), s.get("flow"), "together" if s.get("together") else "alone"


def point_key(r: dict) -> tuple:
    """What a point is, across runs: the key compare matches points on (and
    ``mwperf history`` follows a point over time by); a scenario's flow is
    its scenario's (name and digest), the flow and whether it ran alone."""
    return (r["mw"], r["mode"], r["size"], r["rate_hz"], qos_label(r), r["demand"], subscribers(r),
            source_section(r), subscribers_as(r) if subscribers(r) > 1 else "processes", scenario_of(r), _others(r))


def point_label(key: tuple) -> str:
    """A point key as a reader sees it: ``udp latency 64 B (best-effort, udp)``,
    a scenario's flow ``... [robot-mobile: imu together]``."""
    mw, mode, size, rate, qos, demand, fan, section, how, scenario, others = key
    text = f"{mw} {mode} {size} B"
    if rate is not None:
        text += f" {rate:g} Hz"
    if demand is not None:
        text += f" demand {demand}"
    if fan != 1:
        text += f" x{fan} subscribers" + (" as threads" if how == "threads" else "")
    extra = "; ".join(p for p in (qos, *others, section) if p)
    text = f"{text} ({extra})" if extra else text
    return text if scenario is None else f"{text} [{scenario[0]}: {scenario[2]} {scenario[3]}]"


@dataclass
class Run:
    path: Path
    points: dict[tuple, list[dict]]
    build_type: str | None


def load_run(directory: str, warn: Callable[[str], None]) -> Run:
    path = Path(directory)
    if not (path / RESULTS_JSONL).is_file():
        raise UsageError("compare", directory, f"no {RESULTS_JSONL} there")
    points: dict[tuple, list[dict]] = {}
    for r in read_records(path, warn=warn):
        if r.get("status") == "ok" and all(k in r for k in ("mw", "mode", "size")):
            points.setdefault(point_key(r), []).append(r)
    doc = RunDir(path).read_run_json() or {}
    return Run(path, points, (doc.get("agent") or {}).get("build_type"))


def placement_of(r: dict) -> tuple:
    """Where and how a point ran (CPU placement, the cores, the wait strategy):
    points that differ in it do not measure the same thing."""
    cpu = r.get("cpu") or {}
    return cpu.get("placement"), cpu.get("pub"), cpu.get("sub"), r.get("wait")


def _setup(records: list[dict]) -> set[tuple]:
    return {placement_of(r) for r in records}


def _p50(r: dict) -> float | None:
    return (r.get("latency_us") or {}).get("p50")


def _verdict(a: list[dict], b: list[dict], dir_a: Path, dir_b: Path) -> str:
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
    la, lb = a[0].get("latency_us") or {}, b[0].get("latency_us") or {}
    if any(c is not None and c < MIN_SAMPLES for c in (la.get("count"), lb.get("count"))):
        return "too few samples"
    sa, sb = read_samples(dir_a, a[0]), read_samples(dir_b, b[0])
    if sa and sb and len(sa) >= MIN_SAMPLES and len(sb) >= MIN_SAMPLES:
        _, p = mann_whitney_u(sa, sb)
        return f"{'significant' if p < ALPHA else 'not significant'} (U test on {len(sa)}+{len(sb)} samples, p={p:.3g})"
    ca, cb = la.get("p50_ci"), lb.get("p50_ci")
    if not ca or not cb:
        return UNTESTED if la.get("count") is None or lb.get("count") is None else "too few samples"
    disjoint = ca[1] < cb[0] or cb[1] < ca[0]
    return "significant (95 % CIs apart)" if disjoint else "not significant (95 % CIs overlap)"


def between_launches_p(a: list[dict], b: list[dict]) -> float:
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


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(b: float | None, a: float | None) -> float | None:
    return None if a in (None, 0) or b is None else b / a


def compare_runs(dirs: list[str], out: TextIO, *, fail_if_slower: float | None = None,
                 fail_if_lossier: float | None = None, force: bool = False, err: TextIO | None = None,
                 runs: list[Run] | None = None, extra_unlike: Callable[[dict, dict], list[str]] | None = None) -> int:
    """Each run after the first against the first; the tables to ``out``,
    unusable records named on ``err`` (default stderr). Exit code: 1 when a gate fails.
    ``runs``: already loaded (``mwperf compare --versions``: one build's points each, keyed
    alike); ``extra_unlike``: what else names a pairing's differences."""
    if len(dirs) < 2 and runs is None:
        raise UsageError("compare", None, "give two run directories or more (the first is the baseline)")
    err = err or sys.stderr
    runs = runs or [load_run(d, lambda m: err.write(f"mwperf: warning: {m}\n")) for d in dirs]
    base = runs[0]
    failures: list[str] = []
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
                problems.append(f"{point_label(key)}: CPU placement / wait {sorted(sa, key=str)} vs {sorted(sb, key=str)}")
        if problems and not force:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise UsageError("compare", f"{base.path} {other.path}",
                             f"not comparable: {problems[0]}{more}; --force compares anyway")
        out.write(f"== {other.path} vs {base.path} (baseline){' [forced: ' + problems[0] + ']' if problems else ''}\n")
        header = ["point", "p50 A (us)", "p50 B (us)", "B/A", "p50 difference", "spread A", "spread B", "S/s A",
                  "S/s B", "B/A", "loss A", "loss B", "unlike (A vs B)"]
        rows = []
        for key in common:
            a, b = base.points[key], other.points[key]
            la, lb = _median([_p50(r) for r in a]), _median([_p50(r) for r in b])
            ta, tb = _median([r.get("samples_per_s") for r in a]), _median([r.get("samples_per_s") for r in b])
            lossa, lossb = _median([r.get("loss_rate") for r in a]), _median([r.get("loss_rate") for r in b])
            verdict = _verdict(a, b, base.path, other.path)
            lat_ratio = _ratio(lb, la)
            ratio_text = _fmt(lat_ratio, 2)
            ci = bootstrap_ratio_ci([v for v in map(_p50, a) if v is not None], [v for v in map(_p50, b) if v is not None])
            if ci is not None:  # over repetitions: 95 % bootstrap interval of the ratio
                ratio_text += f" [{ci[0]:.2f}, {ci[1]:.2f}]"
            rows.append([point_label(key), _fmt(la), _fmt(lb), ratio_text, verdict, spread_text(spread(a)),
                         spread_text(spread(b)), _fmt(ta, 0), _fmt(tb, 0),
                         _fmt(_ratio(tb, ta), 2), _fmt(None if lossa is None else 100 * lossa, 2) + "%",
                         _fmt(None if lossb is None else 100 * lossb, 2) + "%",
                         "; ".join(dict.fromkeys(d for ra in a for rb in b for d in
                                                 [*unlike(ra, rb), *(extra_unlike(ra, rb) if extra_unlike else [])]))
                         or "-"])
            if (fail_if_slower is not None and lat_ratio is not None and verdict.startswith(("significant", "untested"))
                    and lat_ratio > 1 + fail_if_slower / 100):
                failures.append(f"{point_label(key)}: p50 {_fmt(lb)} us vs {_fmt(la)} us (+{(lat_ratio - 1) * 100:.1f} %)"
                                + (", untested" if verdict == UNTESTED else ""))
            if (fail_if_lossier is not None and lossa is not None and lossb is not None
                    and (lossb - lossa) * 100 > fail_if_lossier):
                failures.append(f"{point_label(key)}: loss {100 * lossb:.2f} % vs {100 * lossa:.2f} %")
        out.write(table_text(header, rows, left=(0, 4, 12)))
        out.write("(spread: between launches / within a launch, as shares of p50, and the launches)\n")
        missing = [k for k in base.points if k not in other.points]
        if missing:
            out.write(f"({len(missing)} baseline point(s) not in {other.path})\n")
        if fail_if_slower is not None or fail_if_lossier is not None:
            failures += [f"{point_label(k)}: no usable ok point in {other.path} (not measured, failed or unreadable)"
                         for k in missing]
        out.write("\n")
    for failure in failures:
        out.write(f"REGRESSION: {failure}\n")
    return 1 if failures else 0
