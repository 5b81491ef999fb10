"""A scenario's tables and figure, from its flows' records (results.jsonl:
each flow's record, together and alone, carries its ``scenario`` section):
per scenario point, each flow's p50, p99 and loss alone and together with
the ratio (together / alone: the number that says whether one stream hurts
another), "x floor" beside them, and the point's totals, added up here from
its flows' records (never stored)."""

from __future__ import annotations

from dataclasses import dataclass, field

from mwperf.export.figure_parts import Figure, plotly
from mwperf.export.floor import X_FLOOR, Anchors
from mwperf.export.sections import Row, Section
from mwperf.display import printable
from mwperf.model.sections import Scenario
from mwperf.model.record import Record

__all__ = ["ScenarioPoint", "scenario_points", "scenario_sections", "interference_figure", "scenario_figures",
           "flow_rows", "totals", "plain", "flows_summary", "HEADERS"]

HEADERS = ["flow", "size", "rate", "N:M", "p50 alone (us)", "p50 together (us)", "p50 x", "p99 alone (us)",
           "p99 together (us)", "p99 x", "loss alone", "loss together", "sent", "received", "lost",
           "cpu all processes (s)"]
FLOOR_HEADERS = [f"alone {X_FLOOR}", f"together {X_FLOOR}"]


@dataclass
class ScenarioPoint:
    """One scenario point of a run: its flows' records together and alone, by flow name, in the run's order."""

    name: str
    mw: str
    label: str
    flows: int
    together: dict[str, Record] = field(default_factory=dict)
    alone: dict[str, Record] = field(default_factory=dict)

    @property
    def names(self) -> list[str]:
        return list(dict.fromkeys([*self.together, *self.alone]))


def plain(records: list[Record]) -> list[Record]:
    """The records that are points of their own (not a scenario's flows)."""
    return [r for r in records if r.scenario is None]


def _flow(r: Record) -> Scenario:
    assert r.scenario is not None, "a scenario point's records are its flows'"
    return r.scenario


def scenario_points(records: list[Record]) -> list[ScenarioPoint]:
    """Every scenario point the records hold (by run, scenario, its digest and point), in their order; a flow
    measured twice the same way keeps its last record."""
    points: dict[tuple, ScenarioPoint] = {}
    for r in records:
        s = r.scenario
        if s is None:
            continue
        key = (r.run_id, s.name, s.hash, s.point)
        point = points.setdefault(key, ScenarioPoint(s.name, r.mw, s.label, s.flows))
        (point.together if s.together else point.alone)[s.flow] = r
    return list(points.values())


def totals(point: ScenarioPoint) -> dict:
    """The point's totals, its flows measured together added up: sent, received, lost, Mbit/s, CPU of every
    process (None where a flow lacks it), and the flows that failed."""
    records = list(point.together.values())

    def add(values):
        return sum(values) if values and all(isinstance(v, (int, float)) for v in values) else None

    return {"flows": len(records), "sent": add([r.sent for r in records]),
            "received": add([r.received for r in records]), "lost": add([r.lost for r in records]),
            "mbps": add([r.mbps for r in records]), "cpu_s": add([_flow(r).cpu_s for r in records]),
            "failed": [name for name, r in point.together.items() if not r.ok]}


def _us(value) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def _ratio(together, alone) -> str:
    if not isinstance(together, (int, float)) or not isinstance(alone, (int, float)) or alone <= 0:
        return "-"
    return f"{together / alone:.2f}"


def _loss(record: Record | None) -> str:
    if record is None:
        return "-"
    if not record.ok:
        return "failed"
    rate = record.loss_rate
    return "-" if rate is None else f"{100 * rate:.2f} %"


def _pct(record: Record | None, key: str) -> float | None:
    return None if record is None else record.stat(key)


def _num(value, digits: int = 2) -> str:
    return "-" if not isinstance(value, (int, float)) else f"{value:.{digits}f}"


def _rate(record: Record) -> str:
    if record.rate_hz:
        return f"{record.rate_hz:g} Hz"
    return f"x{record.demand}" if record.demand else "-"


def _n(count) -> str:
    """A count, '-' when there is none (a failed flow's subscriber gave no result)."""
    return "-" if count is None else str(count)


def _failures(name: str, together: Record | None, alone: Record | None) -> str | None:
    said = [f"{how}: {' '.join(str(r.error or 'unknown error').split())}"
            for how, r in (("together", together), ("alone", alone)) if r is not None and not r.ok]
    return "; ".join(said) or None


def flow_rows(point: ScenarioPoint, anchors: Anchors | None = None) -> tuple[list[str], list[Row]]:
    """One row per flow ('-' where it was not measured alone), then the totals of the flows together."""
    floor = anchors is not None and bool(anchors.index)
    rows = []
    for name in point.names:
        rec, solo = point.together.get(name), point.alone.get(name)
        first = rec or solo
        assert first is not None, "a flow of the point was measured together or alone"
        s = _flow(first)
        cells = [name, str(first.size), _rate(first), f"{s.publishers}:{first.subscribers}",
                 _us(_pct(solo, "p50")), _us(_pct(rec, "p50")), _ratio(_pct(rec, "p50"), _pct(solo, "p50")),
                 _us(_pct(solo, "p99")), _us(_pct(rec, "p99")), _ratio(_pct(rec, "p99"), _pct(solo, "p99")),
                 _loss(solo), _loss(rec), *(_n(v) for v in _counts(rec)),
                 _num(None if rec is None else _flow(rec).cpu_s)]
        if anchors is not None and floor:
            cells += [anchors.cells(r, "rate")[0] if r is not None else "-" for r in (solo, rec)]
        rows.append(Row(cells, note=_failures(name, rec, solo)))
    total = totals(point)
    rows.append(Row(["(all)"] + [""] * 11 + [str(total[k]) if total[k] is not None else "-"
                                             for k in ("sent", "received", "lost")]
                    + [_num(total["cpu_s"])] + ([""] * 2 if floor else [])))
    return HEADERS + (FLOOR_HEADERS if floor else []), rows


def _title(point: ScenarioPoint) -> str:
    total = totals(point)
    failed = f"; failed: {', '.join(total['failed'])}" if total["failed"] else ""
    label = f"{point.label}, " if point.label else ""
    flows = "1 flow" if point.flows == 1 else f"{point.flows} flows"
    return f"scenario {point.name} on {point.mw} ({label}{flows} at once{failed}; x = together / alone)"


def _counts(r: Record | None) -> tuple[int | None, int | None, int | None]:
    return (None, None, None) if r is None else (r.sent, r.received, r.lost)


def scenario_sections(records: list[Record], anchors: Anchors | None = None) -> list[Section]:
    """One table per scenario point (none without scenario records)."""
    sections = []
    for point in scenario_points(records):
        headers, rows = flow_rows(point, anchors)
        sections.append(Section(point.mw, "scenario", _title(point), headers, rows, left=(0,)))
    return sections


def interference_figure(point: ScenarioPoint, number: int = 0) -> Figure:
    """Each flow's p50 and p99 alone and together (log scale): the bars that grow together are the flows hurt."""
    go, _ = plotly()

    flows = point.names
    fig = go.Figure()
    for key in ("p50", "p99"):
        fig.add_bar(name=f"{key} alone", x=flows, y=[_pct(point.alone.get(f), key) for f in flows])
        fig.add_bar(name=f"{key} together", x=flows, y=[_pct(point.together.get(f), key) for f in flows])
    title = f"{point.name} on {point.mw}{f' ({point.label})' if point.label else ''}: each flow alone and together"
    fig.update_layout(barmode="group", yaxis_type="log", yaxis_title="one-way latency (us)", height=400, title=title)
    return Figure("scenario", f"scenario-{number}", title, fig)


def scenario_figures(records: list[Record]) -> list[Figure]:
    return [interference_figure(point, i) for i, point in enumerate(scenario_points(records))]


def flows_summary(records: list[Record]) -> str:
    """The tail of a scenario step's progress line: 'ok 7 flows' or which failed and why."""
    failed = [r for r in records if not r.ok]
    if not failed:
        return f"ok {len(records)} flows"
    said = "; ".join(f"{None if r.scenario is None else r.scenario.flow}: {r.error or 'unknown error'}" for r in failed)
    return printable(f"FAILED {len(failed)} of {len(records)} flows ({said})")
