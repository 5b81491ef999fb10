"""``mwperf compare DIR_A DIR_B [...]``: the same points of several runs side
by side, with ratios, a significance verdict and CI regression gates.

Points match on what identifies them (middleware, mode, size, rate, the QoS
label, and every other option of the agent's table that says what was
measured); the records of a point in a run are its launches (each its agents
started for it; a plan's repetitions). Each later run is compared with the
first (the baseline). Each side's spread is shown as between-launch /
within-launch (the launches' p50 standard deviation over their mean / the
median half-width of their p50 intervals, as fractions of p50) and the
number of launches.

The difference of the p50 latency B vs A is shown with its 90 % interval:
a t test on the launches' log p50 with the variance pooled over both sides
(:mod:`mwperf.stats.gates`); never a test on the samples of one launch,
whose correlated samples make any shift between two launches look
significant.

Gates (:mod:`mwperf.analysis.verdicts`) decide on the launches, a point at a
time: ``--fail-if-slower PCT`` fails (exit 1) where B's p50 is more than PCT %
above A's at 95 % confidence (the one-sided lower bound of B/A above
1 + PCT/100), or where B measured no latency at all and A did;
``--fail-if-lossier PCT`` where B's loss rate is more than PCT percentage
points above A's at 95 %. A gate passes a point only where it could have
caught a change four times its allowance nine times in ten at the spread
the launches show (pooled with the point's stored history, where given);
otherwise, or with fewer than two launches a side, it says "cannot decide:
N+M launches, need K+K" and the exit code is 3 (when no gate failed): it
never passes what it could not test. With a gate, a baseline point the other
run lacks (not measured, failed, or its record unusable) fails it too.
Runs whose points were measured under different CPU placements or wait
strategies, or with agents of different build types, are refused unless
``--force``: their numbers do not measure the same thing. Each row names
what else its two points were measured through differently
(:func:`mwperf.model.fairness.unlike`: zero-copy loan vs copy, shared
memory vs network, busy-poll vs blocking wait, sync vs async publishing,
middleware versions, socket buffer sizes, the link: loopback vs a shaped
namespace pair or two hosts).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from mwperf.analysis.verdicts import NAMES, UNDECIDED_EXIT, Gated, difference_text, lossier, slower, stored_spread
from mwperf.analysis.versions import config_differences, library
from mwperf.errors import UsageError
from mwperf.model.fairness import unlike
from mwperf.model.labels import PointId, point_id
from mwperf.model.launches import spread
from mwperf.model.sections import Launches
from mwperf.model.record import Record
from mwperf.results.rundir import RunDir, read_records, records_file_problem
from mwperf.stats.gates import REGRESSION

__all__ = ["compare", "Comparison", "Pairing", "Compared", "History"]

#: A point's stored runs but those of the run ids given (its launches, a list a run): ``compare --db``.
History = Callable[[PointId, set], list[list[Record]]]


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


def _median(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _ratio(b: float | None, a: float | None) -> float | None:
    return None if a is None or a == 0 or b is None else b / a


@dataclass
class Compared:
    """One point of both runs: medians over its launches, the p50 difference, how far launches spread, the gates."""

    key: PointId
    p50: tuple[float | None, float | None]
    p50_ratio: float | None
    difference: str  # B vs A on the launches' log p50, with its 90 % interval
    spread: tuple[Launches | None, Launches | None]
    samples_per_s: tuple[float | None, float | None]
    loss_rate: tuple[float | None, float | None]
    unlike: list[str]  # what the two points were measured through differently
    gated: list[Gated] = field(default_factory=list)  # the gates' decisions on it

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
    undecided: list[str] = field(default_factory=list)  # each gate that could not decide, named

    @property
    def exit_code(self) -> int:
        return 1 if self.failures else UNDECIDED_EXIT if self.undecided else 0


def _compared(key: PointId, a: list[Record], b: list[Record], fail_if_slower: float | None,
              fail_if_lossier: float | None, stored: list[list[Record]], versions: bool = False) -> Compared:
    la, lb = _median([_p50(r) for r in a]), _median([_p50(r) for r in b])
    gated = [slower(a, b, fail_if_slower, stored_spread(stored, True)) if fail_if_slower is not None else None,
             lossier(a, b, fail_if_lossier, stored_spread(stored, False)) if fail_if_lossier is not None else None]
    return Compared(key, (la, lb), _ratio(lb, la), difference_text(a, b), (spread(a), spread(b)),
                    (_median([r.samples_per_s for r in a]), _median([r.samples_per_s for r in b])),
                    (_median([r.loss_rate for r in a]), _median([r.loss_rate for r in b])),
                    list(dict.fromkeys(d for ra in a for rb in b
                                       for d in [*unlike(ra, rb), *(config_differences(ra, rb) if versions else [])])),
                    [g for g in gated if g is not None])


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
            history: History | None = None, versions: list[str] | None = None) -> Comparison:
    """Each run after the first against the first; unusable records named through ``warn``;
    ``history``: the points' stored runs, whose launch-to-launch spread the gates pool.
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
        points = []
        for k in common:
            a, b = base.points[k], other.points[k]
            stored = history(k, {r.run_id for r in a + b}) if history is not None else []
            points.append(_compared(k, a, b, fail_if_slower, fail_if_lossier, stored, versions is not None))
        missing = [k for k in base.points if k not in other.points]
        result.pairings.append(Pairing(base.path, other.path, problems[0] if problems else None, points, missing))
        for c in points:
            for g in c.gated:
                if g.decision.verdict in NAMES:
                    (result.failures if g.decision.verdict == REGRESSION else result.undecided).append(
                        f"{NAMES[g.decision.verdict]}: {c.key.label}: {g.said}")
        if fail_if_slower is not None or fail_if_lossier is not None:
            result.failures += [f"REGRESSION: {k.label}: no usable ok point in {other.path} (not measured, failed "
                                "or unreadable)" for k in missing]
    return result
