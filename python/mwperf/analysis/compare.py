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
the launches show; otherwise, or with fewer than two launches a side, it
says "cannot decide: N+M launches, need K+K" and compare exits 3 (when no
gate failed): it never passes what it could not test. With a gate, a
baseline point the other run lacks (not measured, failed, or its record
unusable) fails it too. Runs whose points were measured under different CPU placements or wait
strategies, or with agents of different build types, are refused unless
``--force``: their numbers do not measure the same thing. Each row names
what else its two points were measured through differently
(:func:`mwperf.results.fairness.unlike`: zero-copy loan vs copy, shared
memory vs network, busy-poll vs blocking wait, sync vs async publishing,
middleware versions, socket buffer sizes).
"""

from __future__ import annotations

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
from mwperf.results.launches import spread, spread_text
from mwperf.results.rundir import RESULTS_JSONL, RunDir, read_records
from mwperf.table import snapshot

__all__ = ["compare_runs", "point_key", "point_label", "scenario_of", "placement_of"]


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


def _load(directory: str, warn: Callable[[str], None]) -> Run:
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


def _median(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _fmt(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(b: float | None, a: float | None) -> float | None:
    return None if a in (None, 0) or b is None else b / a


def compare_runs(dirs: list[str], out: TextIO, *, fail_if_slower: float | None = None,
                 fail_if_lossier: float | None = None, force: bool = False, err: TextIO | None = None,
                 history: Callable[[tuple, set], list[list[dict]]] | None = None) -> int:
    """Each run after the first against the first; the tables to ``out``,
    unusable records named on ``err`` (default stderr). ``history``: a
    point's stored runs (its launches, a list a run) but those of the run ids
    given, whose launch-to-launch spread the gates pool with the runs' own.
    Exit code: 1 when a gate fails, else 3 when one cannot decide, else 0."""
    from mwperf.analysis.verdicts import NAMES, UNDECIDED_EXIT, difference_text, lossier, slower, stored_spread
    from mwperf.stats.gates import REGRESSION

    if len(dirs) < 2:
        raise UsageError("compare", None, "give two run directories or more (the first is the baseline)")
    err = err or sys.stderr
    runs = [_load(d, lambda m: err.write(f"mwperf: warning: {m}\n")) for d in dirs]
    base = runs[0]
    failures: list[str] = []
    undecided: list[str] = []
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
            rows.append([point_label(key), _fmt(la), _fmt(lb), _fmt(_ratio(lb, la), 2), difference_text(a, b),
                         spread_text(spread(a)),
                         spread_text(spread(b)), _fmt(ta, 0), _fmt(tb, 0),
                         _fmt(_ratio(tb, ta), 2), _fmt(None if lossa is None else 100 * lossa, 2) + "%",
                         _fmt(None if lossb is None else 100 * lossb, 2) + "%",
                         "; ".join(dict.fromkeys(d for ra in a for rb in b for d in unlike(ra, rb))) or "-"])
            stored = history(key, {r.get("run_id") for r in a + b}) if history is not None else []
            gated = [slower(a, b, fail_if_slower, stored_spread(stored, True)) if fail_if_slower is not None else None,
                     lossier(a, b, fail_if_lossier, stored_spread(stored, False)) if fail_if_lossier is not None
                     else None]
            for g in filter(None, gated):
                if g.decision.verdict in NAMES:
                    (failures if g.decision.verdict == REGRESSION else undecided).append(
                        f"{NAMES[g.decision.verdict]}: {point_label(key)}: {g.said}")
        out.write(table_text(header, rows, left=(0, 4, 12)))
        out.write("(p50 difference: B vs A and its 90 % interval, a t test on the launches' log p50; spread: between "
                  "launches / within a launch, as shares of p50, and the launches)\n")
        missing = [k for k in base.points if k not in other.points]
        if missing:
            out.write(f"({len(missing)} baseline point(s) not in {other.path})\n")
        if fail_if_slower is not None or fail_if_lossier is not None:
            failures += [f"REGRESSION: {point_label(k)}: no usable ok point in {other.path} (not measured, failed or "
                         "unreadable)" for k in missing]
        out.write("\n")
    for line in failures + undecided:
        out.write(f"{line}\n")
    return 1 if failures else UNDECIDED_EXIT if undecided else 0
