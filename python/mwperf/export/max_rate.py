"""``mwperf max-rate``'s answer in the report: a table (per middleware, QoS
and size, the rate the limit lies above at 95 %, the limit's 90 % interval,
the probes it took) and a figure (max rate vs size, a line per
middleware and QoS), from the last probe of each search (``search.done``)."""

from __future__ import annotations

from mwperf.export.figure_parts import SIZE_HOVER, Figure, grid, line, log_switch, palette, panel, series_name
from mwperf.export.sections import Row, Section
from mwperf.model.labels import qos_label
from mwperf.model.sections import Search
from mwperf.model.record import Record
from mwperf.units import format_rate_hz, format_size

__all__ = ["max_rate_sections", "max_rate_figures", "answers", "criterion_text", "HEADERS"]

HEADERS = ["Size", "Max rate (Hz)", "Mbit/s at max", "Limit, 90 % (Hz)", "Probes", "Last probe"]


def criterion_text(search: Search) -> str:
    crit = search.criterion
    text = f"loss <= {100 * float(crit.loss or 0):g}%"
    if crit.p99_us is not None:
        text += f", p99 <= {crit.p99_us:g} us"
    return f"{text}, step {100 * float(search.step or 0):g}%"


def answers(records: list[Record]) -> list[tuple[Record, Search]]:
    """The last probe of every search, with its ``search`` section (it holds the answer)."""
    return [(r, r.search) for r in records if r.search is not None and r.search.done]


def _probes(records: list[Record], last: Record, search: Search) -> int:
    return sum(1 for r in records if r.search is not None and r.search.cell == search.cell and r.run_id == last.run_id)


def _rate(value) -> str:
    return "-" if value is None else format_rate_hz(value)


def max_rate_sections(records: list[Record]) -> list[Section]:
    """One table per middleware, QoS and criterion, a row per size."""
    groups: dict[tuple, list[tuple[Record, Search]]] = {}
    for r, s in answers(records):
        groups.setdefault((r.mw, qos_label(r), criterion_text(s)), []).append((r, s))
    sections = []
    for (mw, qos, crit), members in groups.items():
        section = Section(mw, "max-rate", f"{mw}{f' ({qos})' if qos else ''} max rate ({crit})", list(HEADERS),
                          qos=qos, left=(len(HEADERS) - 1,))
        for r, s in sorted(members, key=lambda m: m[0].size):
            top = s.max_rate_hz
            mbps = None if top is None else top * r.size * 8 / 1e6
            lo, hi = s.bracket
            section.rows.append(Row([format_size(r.size), _rate(top), "-" if mbps is None else f"{mbps:.4g}",
                                     f"[{_rate(lo)}, {_rate(hi)}]", str(_probes(records, r, s)), str(s.why)],
                                    note=s.note))
        sections.append(section)
    return sections


def max_rate_figures(records: list[Record]) -> list[Figure]:
    """Max rate vs message size, a line per middleware and QoS, a panel per criterion."""
    found = [(r, s, s.max_rate_hz) for r, s in answers(records) if s.max_rate_hz is not None]
    if not found:
        return []
    panels = list(dict.fromkeys(criterion_text(s) for _, s, _ in found))
    names = list(dict.fromkeys(series_name(r) for r, _, _ in found))
    colours = palette(names)
    fig, cols = grid(panels, "Highest publish rate meeting the criterion vs message size (mwperf max-rate)",
                     "message size (bytes)", "max rate (Hz)", log_x=True, log_y=True)
    for name in names:
        shown = False
        for i, crit in enumerate(panels):
            at = sorted(((r, top) for r, s, top in found if series_name(r) == name and criterion_text(s) == crit),
                        key=lambda m: m[0].size)
            if not at:
                continue
            fig.add_trace(line([r.size for r, _ in at], [top for _, top in at], name,
                               colours[name], group=name, show=not shown,
                               custom=[[name, top * r.size * 8 / 1e6] for r, top in at],
                               hover=f"%{{customdata[0]}}<br>{SIZE_HOVER}<br>max %{{y:,.4g}} Hz "
                                     "(%{customdata[1]:.4g} Mbit/s)"), **panel(i, cols))
            shown = True
    log_switch(fig, log_y=True)
    return [Figure("max-rate", "max-rate-size", "Max rate vs size", fig)]
