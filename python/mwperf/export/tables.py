"""Perftest-style result tables: one section per middleware, QoS/transport
and mode (``== cyclonedds latency (reliable, keep-last:10, udp) (...) ==``).

The rows are built once (:func:`build_sections`) and rendered either as
aligned text (:func:`render_text`) or Markdown (:func:`render_markdown`).
A failed point is a row holding its size (and rate) and ``FAILED: reason``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, TextIO

from mwperf.export.exporter import Exporter
from mwperf.results.labels import qos_key, qos_label
from mwperf.results.rundir import RunDir
from mwperf.units import format_rate_hz

__all__ = ["Row", "Section", "Tables", "build_sections", "render_text", "render_markdown", "render", "point_summary"]

LATENCY_HEADERS = ["Size", "Ave (us)", "Std (us)", "Min (us)", "Max (us)", "50% (us)", "90% (us)",
                   "99% (us)", "99.99% (us)", "99.9999% (us)", "Samples"]
#: A percentile its sample count cannot support (p99.99 needs 10^4 samples):
#: not measured, shown so, never as the maximum in disguise.
NOT_MEASURED = "—"
THROUGHPUT_HEADERS = ["Size", "Packets", "Packets/s (ave)", "Mbps (ave)", "Lost", "Lost (%)",
                      "Lat 50% (us)", "Lat 99% (us)"]
RATE_HEADERS = ["Size", "Hz", "Speed(Mbps)", "loss-pkt", "send-pkt", "loss-rate", "loop-rate",
                "latency(ave)", "latency(max)"]

_MODE_NOTE = {
    "latency": "latency in us, one-way = RTT/2",
    "throughput": "latency under load in us, RTT/2 of the interleaved pings",
    "rate": "latency in us, one-way from the intended send time",
}
_MODE_ORDER = {"latency": 0, "throughput": 1, "rate": 2}


@dataclass
class Row:
    cells: list[str]
    failure: str | None = None  # "FAILED: reason" rows keep only their leading cells


@dataclass
class Section:
    mw: str
    mode: str
    title: str
    headers: list[str]
    rows: list[Row] = field(default_factory=list)
    qos: str = ""  # the QoS part of the title, e.g. "reliable, keep-last:10, udp"


def _us(value) -> str:
    return "-" if value is None else f"{value:.1f}"


def _int(value) -> str:
    return "-" if value is None else str(int(value))


def _fixed(value, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _stat(record: dict, key: str, stat: str = "latency_us"):
    stats = record.get(stat)
    return stats.get(key) if isinstance(stats, dict) else None


#: The samples a percentile needs: q needs n >= 1 / (1 - q).
_NEEDS = {"p50": 2, "p90": 10, "p99": 100, "p9999": 10_000, "p999999": 1_000_000}


def _pct(record: dict, key: str, stat: str = "latency_us") -> str:
    """A percentile, or NOT_MEASURED when there were samples but too few for
    it (also in records written before the agent left such values out)."""
    value = _stat(record, key, stat)
    count = _stat(record, "count", stat)
    if isinstance(count, int) and count > 0 and (value is None or count < _NEEDS[key]):
        return NOT_MEASURED
    return _us(value)


def _latency_row(r: dict) -> list[str]:
    return ([str(r["size"])] + [_us(_stat(r, k)) for k in ("mean", "std", "min", "max")]
            + [_pct(r, k) for k in ("p50", "p90", "p99", "p9999", "p999999")] + [_int(_stat(r, "count"))])


def _throughput_row(r: dict) -> list[str]:
    loss_pct = None if r.get("loss_rate") is None else r["loss_rate"] * 100
    return [str(r["size"]), _int(r.get("received")), _fixed(r.get("samples_per_s"), 0),
            _fixed(r.get("mbps"), 1), _int(r.get("lost")), _fixed(loss_pct, 2),
            _pct(r, "p50"), _pct(r, "p99")]


def _rate_row(r: dict) -> list[str]:
    return [str(r["size"]), format_rate_hz(r.get("rate_hz")), _fixed(r.get("mbps"), 2),
            _int(r.get("lost")), _int(r.get("sent")), _fixed(r.get("loss_rate"), 4),
            _fixed(r.get("loop_rate"), 4), _us(_stat(r, "mean")), _us(_stat(r, "max"))]


_BUILDERS = {
    "latency": (LATENCY_HEADERS, _latency_row, 1),
    "throughput": (THROUGHPUT_HEADERS, _throughput_row, 1),
    "rate": (RATE_HEADERS, _rate_row, 2),
}


def _title(mw: str, mode: str, records: list[dict]) -> str:
    parts = [_MODE_NOTE.get(mode, "")]
    cpus = {(r.get("cpu") or {}).get("placement") for r in records}
    pins = {((r.get("cpu") or {}).get("pub"), (r.get("cpu") or {}).get("sub")) for r in records}
    if len(cpus) == 1 and len(pins) == 1:
        placement = cpus.pop()
        pub, sub = pins.pop()
        parts.append(placement if pub is None or sub is None else f"{placement} {pub},{sub}")
    waits = {r.get("wait") for r in records}
    if len(waits) == 1 and None not in waits:
        parts.append(f"wait {waits.pop()}")
    tools = {(r.get("source") or {}).get("tool") for r in records} - {None}
    if tools:
        parts.append(f"imported from {', '.join(sorted(tools))}")
    qos = qos_label(records[0]) if records else ""
    return f"{mw} {mode}{f' ({qos})' if qos else ''} ({'; '.join(p for p in parts if p)})"


def build_sections(records: Iterable[dict]) -> list[Section]:
    """Group records by (mw, QoS/transport, mode), keeping the order of the run."""
    records = list(records)
    mw_order: dict[str, int] = {}
    qos_order: dict[tuple, int] = {}
    groups: dict[tuple, list[dict]] = {}
    for record in records:
        mw_order.setdefault(record["mw"], len(mw_order))
        # Sections also part by CPU placement and wait strategy (a sweep may vary them).
        cpu = record.get("cpu") or {}
        qos = (*qos_key(record), cpu.get("pub"), cpu.get("sub"), record.get("wait"))
        qos_order.setdefault((record["mw"], qos), len(qos_order))
        groups.setdefault((record["mw"], qos, record["mode"]), []).append(record)
    sections = []
    for key in sorted(groups, key=lambda k: (mw_order[k[0]], qos_order[(k[0], k[1])], _MODE_ORDER.get(k[2], 9),
                                              k[2])):
        mw, _, mode = key
        members = sorted(groups[key], key=lambda r: (r["size"], r.get("rate_hz") or 0, r.get("point", 0)))
        headers, row_of, lead = _BUILDERS.get(mode, _BUILDERS["latency"])
        section = Section(mw, mode, _title(mw, mode, members), list(headers), qos=qos_label(members[0]))
        for record in members:
            cells = row_of(record)
            if record.get("status") != "ok":
                reason = " ".join(str(record.get("error") or "unknown error").split())
                section.rows.append(Row(cells[:lead] + [""] * (len(cells) - lead), f"FAILED: {reason}"))
            else:
                section.rows.append(Row(cells))
        sections.append(section)
    return sections


def _render_text_section(section: Section) -> list[str]:
    widths = [len(h) for h in section.headers]
    for row in section.rows:
        cells = row.cells if row.failure is None else [c for c in row.cells if c]
        for i, cell in enumerate(cells):
            widths[i] = max(widths[i], len(cell))
    lines = [f"== {section.title} =="]
    lines.append("  ".join(h.rjust(w) for h, w in zip(section.headers, widths)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    for row in section.rows:
        if row.failure is None:
            lines.append("  ".join(c.rjust(w) for c, w in zip(row.cells, widths)))
        else:
            lead = [c.rjust(w) for c, w in zip(row.cells, widths) if c]
            lines.append("  ".join(lead + [row.failure]))
    return lines


def render_text(sections: list[Section]) -> str:
    blocks = ["\n".join(_render_text_section(s)) for s in sections]
    return "\n\n".join(blocks) + ("\n" if blocks else "")


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown(sections: list[Section]) -> str:
    blocks = []
    for section in sections:
        lines = [f"### {_md_escape(section.title)}", ""]
        lines.append("| " + " | ".join(section.headers) + " |")
        lines.append("|" + "|".join("---:" for _ in section.headers) + "|")
        for row in section.rows:
            if row.failure is None:
                cells = row.cells
            else:
                lead = [c for c in row.cells if c]
                cells = lead + [_md_escape(row.failure)] + [""] * (len(row.cells) - len(lead) - 1)
            lines.append("| " + " | ".join(cells) + " |")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + ("\n" if blocks else "")


def render(records: Iterable[dict], fmt: str = "text") -> str:
    sections = build_sections(records)
    return render_markdown(sections) if fmt == "md" else render_text(sections)


def point_summary(record: dict) -> str:
    """The tail of a progress line: 'ok p50 4.1 us' or 'FAILED: reason'."""
    if record.get("status") != "ok":
        return f"FAILED: {record.get('error') or 'unknown error'}"
    mode = record.get("mode")
    if mode == "latency":
        return f"ok p50 {_us(_stat(record, 'p50'))} us, p99 {_us(_stat(record, 'p99'))} us"
    loss = "-" if record.get("loss_rate") is None else f"{record['loss_rate'] * 100:.2f}%"
    if mode == "throughput":
        return (f"ok {_fixed(record.get('samples_per_s'), 0)} pkt/s, {_fixed(record.get('mbps'), 1)} Mbps,"
                f" lost {loss}")
    return (f"ok loop {_fixed(record.get('loop_rate'), 4)}, lost {loss},"
            f" latency ave {_us(_stat(record, 'mean'))} us")


class Tables(Exporter):
    """The tables on a stream (the terminal), as aligned text or Markdown."""

    def __init__(self, fmt: str, out: TextIO):
        self.name = fmt  # text or md
        self.out = out

    def write(self, records: list[dict], rundir: RunDir) -> list[Path]:
        self.out.write(render(records, self.name))
        return []
