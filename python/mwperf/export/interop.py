"""The cross-vendor matrix: a publisher of one RTPS middleware against the
subscriber (and the echo) of another (``peer_mw``), as two tables in the
:class:`~mwperf.export.sections.Section` form: p50 latency and loss, one row
per publisher, one column per subscriber. The diagonal is the points of one
middleware on both sides measured alongside (same mode, size, rate, QoS,
transport and placement). A table appears only for points with a
cross-vendor cell; a failed cell says so (its reason is in the result
tables)."""

from __future__ import annotations

import statistics

from mwperf.export.derived import stat
from mwperf.export.sections import Row, Section
from mwperf.results.labels import field
from mwperf.units import format_rate_hz, format_size

__all__ = ["interop"]


def _group(r: dict) -> tuple:
    """What a matrix holds constant (not the receive path: each side takes its middleware's own)."""
    cpu = r.get("cpu") or {}
    return (r["mode"], r["size"], r.get("rate_hz") or 0, r.get("reliability"), field(r, "qos.history"),
            field(r, "qos.durability"), r.get("transport"), cpu.get("pub"), cpu.get("sub"), r.get("wait"),
            r.get("subscribers"))


def _cell(records: list[dict], value) -> str:
    ok = [v for r in records if r.get("status") == "ok" and (v := value(r)) is not None]
    if not ok:
        return "failed" if records else "-"
    return f"{statistics.median(ok):.1f}"


def _loss_pct(r: dict):
    rate = r.get("loss_rate")
    return None if rate is None else 100.0 * rate


def interop(records: list[dict]) -> list[Section]:
    """p50 (us) and loss (%) matrices, publisher x subscriber, for every group of
    points holding a cross-vendor one (medians over repetitions)."""
    mine = [r for r in records if r.get("source") is None]
    cells: dict[tuple, dict[tuple[str, str], list[dict]]] = {}
    for r in mine:
        cells.setdefault(_group(r), {}).setdefault((r["mw"], r.get("peer_mw") or r["mw"]), []).append(r)
    sections: list[Section] = []
    for group in sorted(cells, key=str):
        pairs = cells[group]
        if all(pub == sub for pub, sub in pairs):
            continue
        names = sorted({n for pair in pairs for n in pair})
        # the diagonal only where its middleware also meets another (not every other point of the run)
        names = [n for n in names if any(p != s and n in (p, s) for p, s in pairs)]
        mode, size, rate = group[0], group[1], group[2]
        at = f"{mode}, {format_size(size)}" + (f", {format_rate_hz(rate)}" if rate else "")
        qos = ", ".join(str(v) for v in group[3:7] if v)
        what = {"latency": "RTT/2", "rate": "one-way"}.get(mode, "the publisher's pings' RTT/2")
        for title, value in ((f"p50 latency (us, {what})", lambda r: stat(r, "p50")), ("lost (%)", _loss_pct)):
            section = Section("interop", mode, f"Cross-vendor {title}: {at}; rows publish, columns subscribe"
                                               f"{' and echo' if mode == 'latency' else ''} (each on its own "
                                               f"receive path)",
                              ["pub \\ sub", *names], qos=qos, left=(0,))
            for pub in names:
                section.rows.append(Row([pub, *(_cell(pairs.get((pub, sub), []), value) for sub in names)]))
            sections.append(section)
    return sections
