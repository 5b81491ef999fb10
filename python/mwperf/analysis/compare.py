"""``mwperf compare DIR_A DIR_B [...]``: the same points of several runs side
by side, with ratios, a significance verdict and CI regression gates.

Points match on their configuration (middleware, mode, size, rate, transport,
QoS); repetitions of a point are its samples. Each later run is compared with
the first (the baseline).

Significance of a latency difference (p50):

* five or more repetitions on each side: two-sided Mann–Whitney U test on
  the repetitions' p50 values (normal approximation with tie correction),
  alpha 0.05;
* otherwise, when both points kept their latency samples (DIR/samples, up to
  16384 a point, evenly strided over the run): the same test on the samples.
  Latency samples of one run are not independent (a slow second slows many),
  so with many samples small shifts come out significant: the gates also
  need the difference to exceed their percentage;
* otherwise (imported points) the distribution-free 95 % confidence
  intervals of the two p50s: disjoint intervals differ significantly,
  overlapping ones do not;
* fewer than MIN_SAMPLES latency samples on a side, or no interval: the
  difference is not tested ("too few samples").

Gates: ``--fail-if-slower PCT`` fails (exit 1) when a point's p50 latency is
more than PCT % above the baseline's and the difference is significant;
``--fail-if-lossier PCT`` when its loss rate is more than PCT percentage points
above. Runs whose points were measured under different CPU placements or wait
strategies, or with agents of different build types, are refused unless
``--force``: their numbers do not measure the same thing.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from mwperf.errors import UsageError
from mwperf.results.labels import qos_label
from mwperf.results.rundir import RESULTS_JSONL, RunDir, read_records, read_samples

__all__ = ["mann_whitney_u", "compare_runs", "MIN_SAMPLES", "MIN_REPETITIONS"]

MIN_SAMPLES = 100
MIN_REPETITIONS = 5
ALPHA = 0.05


def mann_whitney_u(a: list[float], b: list[float]) -> tuple[float, float]:
    """(U of ``a``, two-sided p-value) by the normal approximation with tie correction."""
    n1, n2 = len(a), len(b)
    ranked = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(ranked)
    ties = 0.0
    i = 0
    while i < len(ranked):
        j = i
        while j + 1 < len(ranked) and ranked[j + 1][0] == ranked[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        t = j - i + 1
        ties += t ** 3 - t
        i = j + 1
    r1 = sum(r for r, (_, side) in zip(ranks, ranked) if side == 0)
    u1 = r1 - n1 * (n1 + 1) / 2
    n = n1 + n2
    mu = n1 * n2 / 2
    var = n1 * n2 / 12 * ((n + 1) - ties / (n * (n - 1))) if n > 1 else 0.0
    if var <= 0:
        return u1, 1.0
    z = (abs(u1 - mu) - 0.5) / math.sqrt(var)  # continuity correction
    p = math.erfc(max(z, 0.0) / math.sqrt(2))
    return u1, min(1.0, p)


def _key(r: dict) -> tuple:
    return (r["mw"], r["mode"], r["size"], r.get("rate_hz"), qos_label(r))


def _label(key: tuple) -> str:
    mw, mode, size, rate, qos = key
    text = f"{mw} {mode} {size} B"
    if rate is not None:
        text += f" {rate:g} Hz"
    return f"{text} ({qos})" if qos else text


@dataclass
class Run:
    path: Path
    points: dict[tuple, list[dict]]
    build_type: str | None


def _load(directory: str) -> Run:
    path = Path(directory)
    if not (path / RESULTS_JSONL).is_file():
        raise UsageError("compare", directory, f"no {RESULTS_JSONL} there")
    points: dict[tuple, list[dict]] = {}
    for r in read_records(path):
        if r.get("status") == "ok" and all(k in r for k in ("mw", "mode", "size")):
            points.setdefault(_key(r), []).append(r)
    doc = RunDir(path).read_run_json() or {}
    return Run(path, points, (doc.get("agent") or {}).get("build_type"))


def _setup(records: list[dict]) -> set[tuple]:
    return {((r.get("cpu") or {}).get("placement"), (r.get("cpu") or {}).get("pub"), (r.get("cpu") or {}).get("sub"),
             r.get("wait")) for r in records}


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
    la, lb = a[0].get("latency_us") or {}, b[0].get("latency_us") or {}
    if (la.get("count") or 0) < MIN_SAMPLES or (lb.get("count") or 0) < MIN_SAMPLES:
        return "too few samples"
    sa, sb = read_samples(dir_a, a[0]), read_samples(dir_b, b[0])
    if sa and sb and len(sa) >= MIN_SAMPLES and len(sb) >= MIN_SAMPLES:
        _, p = mann_whitney_u(sa, sb)
        return f"{'significant' if p < ALPHA else 'not significant'} (U test on {len(sa)}+{len(sb)} samples, p={p:.3g})"
    ca, cb = la.get("p50_ci"), lb.get("p50_ci")
    if not ca or not cb:
        return "too few samples"
    disjoint = ca[1] < cb[0] or cb[1] < ca[0]
    return "significant (95 % CIs apart)" if disjoint else "not significant (95 % CIs overlap)"


def _median(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(b: float | None, a: float | None) -> float | None:
    return None if a in (None, 0) or b is None else b / a


def compare_runs(dirs: list[str], out: TextIO, *, fail_if_slower: float | None = None,
                 fail_if_lossier: float | None = None, force: bool = False) -> int:
    if len(dirs) < 2:
        raise UsageError("compare", None, "give two run directories or more (the first is the baseline)")
    runs = [_load(d) for d in dirs]
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
                problems.append(f"{_label(key)}: CPU placement / wait {sorted(sa, key=str)} vs {sorted(sb, key=str)}")
        if problems and not force:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise UsageError("compare", f"{base.path} {other.path}",
                             f"not comparable: {problems[0]}{more}; --force compares anyway")
        out.write(f"== {other.path} vs {base.path} (baseline){' [forced: ' + problems[0] + ']' if problems else ''}\n")
        header = ["point", "p50 A (us)", "p50 B (us)", "B/A", "p50 difference", "S/s A", "S/s B", "B/A", "loss A", "loss B"]
        rows = [header]
        for key in common:
            a, b = base.points[key], other.points[key]
            la, lb = _median([_p50(r) for r in a]), _median([_p50(r) for r in b])
            ta, tb = _median([r.get("samples_per_s") for r in a]), _median([r.get("samples_per_s") for r in b])
            lossa, lossb = _median([r.get("loss_rate") for r in a]), _median([r.get("loss_rate") for r in b])
            verdict = _verdict(a, b, base.path, other.path)
            lat_ratio = _ratio(lb, la)
            rows.append([_label(key), _fmt(la), _fmt(lb), _fmt(lat_ratio, 2), verdict, _fmt(ta, 0), _fmt(tb, 0),
                         _fmt(_ratio(tb, ta), 2), _fmt(None if lossa is None else 100 * lossa, 2) + "%",
                         _fmt(None if lossb is None else 100 * lossb, 2) + "%"])
            if (fail_if_slower is not None and lat_ratio is not None and verdict.startswith("significant")
                    and lat_ratio > 1 + fail_if_slower / 100):
                failures.append(f"{_label(key)}: p50 {_fmt(lb)} us vs {_fmt(la)} us (+{(lat_ratio - 1) * 100:.1f} %)")
            if (fail_if_lossier is not None and lossa is not None and lossb is not None
                    and (lossb - lossa) * 100 > fail_if_lossier):
                failures.append(f"{_label(key)}: loss {100 * lossb:.2f} % vs {100 * lossa:.2f} %")
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        for row in rows:
            out.write("  ".join(cell.ljust(w) if i in (0, 4) else cell.rjust(w)
                                for i, (cell, w) in enumerate(zip(row, widths))).rstrip() + "\n")
        only = len(base.points) - len(common)
        if only:
            out.write(f"({only} baseline point(s) not in {other.path})\n")
        out.write("\n")
    for failure in failures:
        out.write(f"REGRESSION: {failure}\n")
    return 1 if failures else 0
