"""A point over time: its p50, p99, loss and CPU in every stored run, and the
change points in each of them (``mwperf history``, the report's history
section).

**Series.** A point is what ``compare`` matches points on
(:func:`mwperf.model.labels.point_id`: middleware, mode, size, rate,
QoS, demand, subscribers, imported section). Runs on different hosts, or
under different placements (CPU placement and cores, wait strategy, and
where the two sides ran: one host, two namespaces, two hosts over ssh), are
different series: their numbers do not measure the same thing. Asked
(``any_host``, ``any_placement``), they are one. Repetitions of a point in
one run count as one value, their median (as in ``compare``).

**Change points** come from Apache Otava (``otava.analysis.compute_change_points``,
the split/merge e-divisive of Hunter, Fleming et al., ICPE 2023): a change
is kept when a two-sided Student t-test between the segments on either side
gives p below ``max_pvalue`` and the means differ by more than
``min_change`` (relative). It is deterministic (no permutation test: the same
history gives the same answer) and works from a handful of runs. Each change
point says at which run the new level starts, the means before and after,
the relative change and its p-value.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from mwperf.model.labels import PointId, point_id
from mwperf.model.record import Record

__all__ = ["METRICS", "RunValue", "ChangePoint", "Series", "series_id", "build_series", "find_change_points",
           "placement_label", "DEFAULT_PVALUE", "DEFAULT_MIN_CHANGE"]

DEFAULT_PVALUE = 0.001
#: A run-to-run difference below this (relative) is noise on a VM, not a change.
DEFAULT_MIN_CHANGE = 0.10

#: name -> (heading, unit, value of a record)
METRICS: dict[str, tuple[str, str, Callable[[Record], Any]]] = {
    "p50": ("p50", "us", lambda r: r.stat("p50")),
    "p99": ("p99", "us", lambda r: r.stat("p99")),
    "loss": ("loss", "%", lambda r: None if r.loss_rate is None else 100.0 * r.loss_rate),
    "cpu.pub": ("CPU pub", "%", lambda r: r.cpu_pct.pub),
    "cpu.sub": ("CPU sub", "%", lambda r: r.cpu_pct.sub),
}


@dataclass
class RunValue:
    """One run's values of a point."""

    run_key: str
    run_id: str | None
    time: str | None
    values: dict[str, float | None]
    repetitions: int
    provenance: dict[str, Any]


@dataclass
class ChangePoint:
    metric: str
    index: int  # the run (0-based in the series) where the new level starts
    before: float
    after: float
    change: float  # relative: after / before - 1 (inf when before is 0)
    pvalue: float

    def text(self) -> str:
        """``p50 50.3 -> 80.3 us, +60% (p=2e-09)``."""
        heading, unit, _ = METRICS[self.metric]
        relative = "" if self.change == float("inf") else f", {self.change:+.0%}"
        return f"{heading} {self.before:.4g} -> {self.after:.4g} {unit}{relative} (p={self.pvalue:.1g})"


@dataclass
class Series:
    key: PointId
    host: str | None
    placement: tuple | None
    runs: list[RunValue] = field(default_factory=list)
    changes: list[ChangePoint] = field(default_factory=list)

    @property
    def label(self) -> str:
        return self.key.label

    @property
    def where(self) -> str:
        """``host h1 | cross-core 0,1, block, local``."""
        return f"host {self.host or 'any'} | {placement_label(self.placement)}"


def placement_label(placement: tuple | None) -> str:
    """``cross-core 0,1, block, local``; 'any placement' for None."""
    if placement is None:
        return "any placement"
    where, pub, sub, wait, link = placement
    cores = "" if pub is None and sub is None else f" {pub},{sub}"
    return f"{where or 'unknown'}{cores}, {wait or '?'}, {link}"


def _host(record: Record, hostname: str | None) -> str | None:
    link = record.link
    if record.host_pair is not None:  # a lab's pair of hosts, as its inventory names them
        return record.host_pair
    if link is not None and link.kind == "ssh":  # the two hosts that measured, not the controller's
        return f"{link.pub}->{link.sub}"
    return hostname or "unknown"


def _provenance(entry, record: Record) -> dict:
    run = entry.run or {}
    link = record.link
    return {"run": entry.run_id, "source": entry.source, "host": entry.hostname, "kernel": run.get("kernel"),
            "cpu_model": run.get("cpu_model"), "governor": run.get("governor"),
            "mwperf": f"{run.get('mwperf_version') or '?'} {((run.get('git') or {}).get('sha') or '')[:10]}".strip(),
            "agent": (run.get("agent") or {}).get("build_type"),
            "adapter": f"{record.adapter.name or record.mw} {record.adapter.version or ''}".strip(),
            "link": None if link is None else link.profile or link.kind}


def series_id(record: Record, hostname: str | None, *, any_host: bool = False,
              any_placement: bool = False) -> tuple:
    """(point id, host, placement): which series a record belongs to."""
    host = None if any_host else _host(record, hostname)
    placement = None if any_placement else (*record.placement, record.where)
    return point_id(record), host, placement


def build_series(entries: Iterable, *, any_host: bool = False, any_placement: bool = False) -> list[Series]:
    """The series of stored points (objects with ``record``, ``run_key``,
    ``run_id``, ``hostname``, ``source``, ``run``: :class:`mwperf.store.query.Stored`),
    each run's values in time order. Failed points are left out."""
    grouped: dict[tuple, dict[str, list]] = {}
    for entry in entries:
        r = entry.record
        if not r.ok:
            continue
        runs = grouped.setdefault(series_id(r, entry.hostname, any_host=any_host, any_placement=any_placement), {})
        runs.setdefault(entry.run_key, []).append(entry)
    out = []
    for (key, host, placement), runs in grouped.items():
        series = Series(key, host, placement)
        for run_key, mine in runs.items():
            records = [e.record for e in mine]
            values = {}
            for name, (_, _, value) in METRICS.items():
                got = [v for v in map(value, records) if isinstance(v, (int, float))]
                values[name] = statistics.median(got) if got else None
            series.runs.append(RunValue(run_key, mine[0].run_id, min(r.time or "" for r in records) or None,
                                        values, len(records), _provenance(mine[0], records[0])))
        series.runs.sort(key=lambda v: (v.time or "", v.run_key))
        out.append(series)
    return sorted(out, key=lambda s: (s.label, str(s.host), placement_label(s.placement)))


def find_change_points(series: Series, *, max_pvalue: float = DEFAULT_PVALUE,
                       min_change: float = DEFAULT_MIN_CHANGE) -> list[ChangePoint]:
    """The change points of every metric of ``series`` (also kept in ``series.changes``)."""
    from otava.analysis import compute_change_points

    found: list[ChangePoint] = []
    for name in METRICS:
        where = [i for i, run in enumerate(series.runs) if run.values[name] is not None]
        values = [float(series.runs[i].values[name] or 0.0) for i in where]
        if len(values) < 3 or len(set(values)) == 1:
            continue
        points, _ = compute_change_points(values, window_len=50, max_pvalue=max_pvalue, min_magnitude=min_change)
        for cp in points:
            before, after = float(cp.stats.mean_1), float(cp.stats.mean_2)
            change = after / before - 1 if before else (0.0 if after == before else float("inf"))
            found.append(ChangePoint(name, where[cp.index], before, after, change, float(cp.stats.pvalue)))
    series.changes = sorted(found, key=lambda c: (c.index, list(METRICS).index(c.metric)))
    return series.changes
