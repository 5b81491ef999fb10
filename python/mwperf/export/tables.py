"""Perftest-style result tables: one section per middleware, QoS/transport
and mode (``== cyclonedds latency (reliable, keep-last:10, udp) (...) ==``).

The rows are built once (:func:`build_sections`) and rendered either as
aligned text (:func:`render_text`) or Markdown (:func:`render_markdown`).
A failed point is a row holding its size (and rate) and ``FAILED: reason``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, TextIO

from mwperf.display import printable
from mwperf.export.exporter import Exporter
from mwperf.export.floor import Anchors, floor_tables
from mwperf.export.headline_text import compact_headline
from mwperf.export.interop import interop
from mwperf.export.max_rate import max_rate_sections
from mwperf.export.ranking import headline_sections, ranked
from mwperf.export.scenario import plain, scenario_sections
from mwperf.export.sections import Row, Section, section_key
from mwperf.export.summaries import ranges, summaries
from mwperf.export.terminal import table_text
from mwperf.model.labels import qos_label, subscribers_label
from mwperf.model.launches import as_points, launches_note
from mwperf.model.record import Record
from mwperf.results.rundir import RunDir
from mwperf.units import format_rate_hz

__all__ = ["Row", "Section", "Tables", "build_sections", "floor_sections", "render_text", "render_markdown", "render",
           "point_summary"]

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
    "burst": "bursts of Demand samples; latency in us, one-way, of every, the first and the last sample of a burst",
}
_MODE_ORDER = {"latency": 0, "throughput": 1, "rate": 2, "burst": 3}


def _us(value) -> str:
    return _fixed(value, 1)


def _int(value) -> str:
    return "-" if value is None else _fixed(value, 0) if abs(value) >= _HUGE else str(int(value))


#: Beyond this a number is shown in three digits and an exponent, not in
#: hundreds of digits (a record may carry any finite number).
_HUGE = 1e12


def _fixed(value, digits: int) -> str:
    return "-" if value is None else f"{value:.{digits}f}" if abs(value) < _HUGE else f"{value:.3g}"


#: The samples a percentile needs: q needs n >= 1 / (1 - q).
_NEEDS = {"p50": 2, "p90": 10, "p99": 100, "p9999": 10_000, "p999999": 1_000_000}


def _pct(record: Record, key: str, stat: str = "latency_us") -> str:
    """A percentile, or NOT_MEASURED when there were samples but too few for
    it (also in records written before the agent left such values out)."""
    value = record.stat(key, stat)
    count = record.stat("count", stat)
    if isinstance(count, int) and count > 0 and (value is None or count < _NEEDS[key]):
        return NOT_MEASURED
    return _us(value)


def _latency_row(r: Record) -> list[str]:
    return ([str(r.size)] + [_us(r.stat(k)) for k in ("mean", "std", "min", "max")]
            + [_pct(r, k) for k in ("p50", "p90", "p99", "p9999", "p999999")] + [_int(r.stat("count"))])


def _throughput_row(r: Record) -> list[str]:
    loss_pct = None if r.loss_rate is None else r.loss_rate * 100
    return [str(r.size), _int(r.received), _fixed(r.samples_per_s, 0),
            _fixed(r.mbps, 1), _int(r.lost), _fixed(loss_pct, 2),
            _pct(r, "p50"), _pct(r, "p99")]


def _rate_row(r: Record) -> list[str]:
    return [str(r.size), format_rate_hz(r.rate_hz), _fixed(r.mbps, 2),
            _int(r.lost), _int(r.sent), _fixed(r.loss_rate, 4),
            _fixed(r.loop_rate, 4), _us(r.stat("mean")), _us(r.stat("max"))]


BURST_PUB_HEADERS = ["Size", "Demand", "Samples", "Samples/sec", "Mbit/sec", "Samples lost", "Samples rejected",
                     "CPU (%)", "Memory (MiB)"]
BURST_SUB_HEADERS = BURST_PUB_HEADERS + ["Lat 50% (us)", "First 50% (us)", "Last 50% (us)", "Last 99% (us)"]


def _mib(kb) -> str:
    return "-" if kb is None else f"{kb / 1024:.1f}"


def _burst_pub_row(r: Record) -> list[str]:
    """As Connext Micro's publisher throughput table: what was written.
    Loss and rejection are the subscriber's to know."""
    rate = r.pub_rate
    mbit = None if rate is None else rate * r.size * 8 / 1e6
    return [str(r.size), _int(r.demand), _int(r.sent), _fixed(rate, 2), _fixed(mbit, 2), "-", "-",
            _fixed(r.cpu_pct.pub, 1), _mib(r.rss_kb.pub)]


def _burst_sub_row(r: Record) -> list[str]:
    return [str(r.size), _int(r.demand), _int(r.received), _fixed(r.samples_per_s, 2),
            _fixed(r.mbps, 2), _int(r.lost), _int(r.rejected),
            _fixed(r.cpu_pct.sub, 1), _mib(r.rss_kb.sub),
            _pct(r, "p50"), _pct(r, "p50", "burst_first_us"), _pct(r, "p50", "burst_last_us"),
            _pct(r, "p99", "burst_last_us")]


#: mode -> [(table name, headers, row builder, leading cells a failed row keeps)]
_BUILDERS = {
    "latency": [("", LATENCY_HEADERS, _latency_row, 1)],
    "throughput": [("", THROUGHPUT_HEADERS, _throughput_row, 1)],
    "rate": [("", RATE_HEADERS, _rate_row, 2)],
    "burst": [("publisher", BURST_PUB_HEADERS, _burst_pub_row, 2),
              ("subscriber", BURST_SUB_HEADERS, _burst_sub_row, 2)],
}


def _title(mw: str, mode: str, records: list[Record], part: str = "") -> str:
    parts = [_MODE_NOTE.get(mode, "")]
    pins = records[0].cpu.pins
    if len({(r.cpu.placement, r.cpu.pub, r.cpu.sub) for r in records}) == 1 and pins:
        parts.append(pins)
    waits = {r.wait for r in records}
    if len(waits) == 1 and None not in waits:
        parts.append(f"wait {waits.pop()}")
    fan = {r.subscribers for r in records}
    if fan != {1}:
        hows = {r.subscribers_as for r in records if r.subscribers > 1}
        parts.append(subscribers_label(fan, hows.pop() if len(hows) == 1 else "processes"))
    tools = {r.source.tool for r in records if r.source is not None}
    if tools:
        parts.append(f"imported from {', '.join(sorted(tools))}")
    sections = sorted({r.source_section for r in records if r.source_section is not None})
    if sections:
        parts.append(f"table '{'; '.join(sections)}'")
    qos = qos_label(records[0]) if records else ""
    name = f"{mw} {mode}{f' {part}' if part else ''}"
    if records and records[0].host_pair is not None:
        name += f" on {records[0].host_pair}"
    return f"{name}{f' ({qos})' if qos else ''} ({'; '.join(p for p in parts if p)})"


def build_sections(records: Iterable[Record], anchors: Anchors | None = None) -> list[Section]:
    """Group records by (mw, QoS/transport, ..., mode), keeping the order of the run, a point of
    several launches a row of its headline (:func:`mwperf.model.launches.as_points`: the launches'
    medians, their intervals in the row's note); with ``anchors``, the columns they add (x floor,
    % memcpy, % iperf3)."""
    anchors = anchors or Anchors()
    records = as_points(list(records))
    mw_order: dict[str, int] = {}
    qos_order: dict[tuple, int] = {}
    pair_order: dict[str | None, int] = {}
    groups: dict[tuple, list[Record]] = {}
    for record in records:
        name = record.pair_name  # a cross-vendor pair is a table of its own
        mw_order.setdefault(name, len(mw_order))
        qos = section_key(record)
        qos_order.setdefault((name, qos), len(qos_order))
        pair_order.setdefault(record.host_pair, len(pair_order))  # sweep --inventory: a table per pair of hosts
        groups.setdefault((name, qos, record.mode, record.host_pair), []).append(record)
    sections = []
    for key in sorted(groups, key=lambda k: (pair_order[k[3]], mw_order[k[0]], qos_order[(k[0], k[1])],
                                              _MODE_ORDER.get(k[2], 9), k[2])):
        mw, _, mode, _ = key
        members = sorted(groups[key], key=lambda r: (r.size, r.rate_hz or 0, r.demand or 0, r.point))
        for part, headers, row_of, lead in _BUILDERS.get(mode, _BUILDERS["latency"]):
            section = Section(mw, mode, _title(mw, mode, members, part), list(headers) + anchors.headers(mode),
                              qos=qos_label(members[0]), source=members[0].source_section)
            for record in members:
                cells = row_of(record) + anchors.cells(record, mode)
                if not record.ok:
                    reason = " ".join(str(record.error or "unknown error").split())
                    section.rows.append(Row(cells[:lead] + [""] * (len(cells) - lead), f"FAILED: {reason}"))
                else:
                    notes = [n for n in (censored(record), launches_note(record)) if n]
                    section.rows.append(Row(cells, note="; ".join(notes) or None))
            sections.append(section)
    return sections


def floor_sections(floor: dict | None) -> list[Section]:
    """The run's floor (DIR/floor.json) as tables, one per placement and wait."""
    return [Section("", "floor", t["title"], t["headers"], [Row(r) for r in t["rows"]] or _failed_floor(t))
            for t in floor_tables(floor)]


def _failed_floor(table: dict) -> list[Row]:
    """A floor not measured: one row saying why."""
    if not table["failure"]:
        return []
    return [Row(["all"] + [""] * (len(table["headers"]) - 1), f"FAILED: {table['failure']}")]


def censored(record: Record) -> str | None:
    """What a latency measured with pings does not show: the pings whose pong
    did not come back within the timeout (their round trips are not in it)."""
    lost = record.ping_lost
    if not lost:
        return None
    late = record.late_pongs or 0
    return (f"{lost} ping(s) without a pong within {record.ping_timeout_s or 1:g} s"
            f"{f' ({late} came back later)' if late else ''}: the latency is censored there, those round trips "
            "are not in it")


def _render_text_section(section: Section) -> list[str]:
    """The title, the table (a failed row shows FAILED after its leading
    cells), then each failure's reason on a line of its own."""
    rows, reasons = [], []
    for row in section.rows:
        if row.note:
            reasons.append(f"  {' '.join(row.cells[:section_lead(section)])}: {row.note}")
        if row.failure is None:
            rows.append(row.cells)
        else:
            lead = [c for c in row.cells if c]
            rows.append(lead + ["FAILED"] + [""] * (len(row.cells) - len(lead) - 1))
            reasons.append(f"  {' '.join(lead)}: {row.failure}")
    return [f"== {section.title} ==", table_text(section.headers, rows, left=section.left).rstrip("\n"), *reasons]


def section_lead(section: Section) -> int:
    """The cells that name a row (size, and rate where it has one)."""
    return 2 if section.mode in ("rate", "burst") else 1


def render_text(sections: list[Section]) -> str:
    blocks = ["\n".join(_render_text_section(s)) for s in sections]
    return "\n\n".join(blocks) + ("\n" if blocks else "")


#: What Markdown would read as markup in a cell: an HTML tag, comment or autolink (``<`` before a letter,
#: ``/``, ``!`` or ``?``), an entity (``&`` before a letter or ``#``), a link (``](``, ``][``, ``]:``), code,
#: a cell's end, a backslash escape; and line breaks (a row is one line).
_MD_SPECIAL = re.compile(r"<(?=[A-Za-z/!?])|&(?=[A-Za-z#])|\](?=[(\[:])|[`|]|\\(?=[!-/:-@\[-`{-~])|\r\n|[\r\n]")


def _md_escape(text: str) -> str:
    """A text from a run directory as Markdown shows it, never as markup: no raw HTML, no link, one line."""
    return _MD_SPECIAL.sub(lambda m: " " if m.group() in ("\r\n", "\r", "\n") else "\\" + m.group(), text)


def render_markdown(sections: list[Section]) -> str:
    blocks = []
    for section in sections:
        lines = [f"### {_md_escape(section.title)}", ""]
        lines.append("| " + " | ".join(map(_md_escape, section.headers)) + " |")
        lines.append("|" + "|".join("---:" for _ in section.headers) + "|")
        for row in section.rows:
            if row.failure is None:
                cells = row.cells
            else:
                lead = [c for c in row.cells if c]
                cells = lead + [row.failure] + [""] * (len(row.cells) - len(lead) - 1)
            lines.append("| " + " | ".join(map(_md_escape, cells)) + " |")
        notes = [f"* {_md_escape(' '.join(r.cells[:section_lead(section)]))}: {_md_escape(r.note)}"
                 for r in section.rows if r.note]
        blocks.append("\n".join(lines + ([""] + notes if notes else [])))
    return "\n\n".join(blocks) + ("\n" if blocks else "")


def render(records: Iterable[Record], fmt: str = "text") -> str:
    sections = build_sections(records)
    return render_markdown(sections) if fmt == "md" else render_text(sections)


def point_summary(record: Record) -> str:
    """The tail of a progress line: 'ok p50 4.1 us' or 'FAILED: reason',
    then what the adaptive stop found and pings lost to the timeout."""
    if not record.ok:
        return printable(f"FAILED: {record.error or 'unknown error'}")
    mode = record.mode
    loss = "-" if record.loss_rate is None else f"{record.loss_rate * 100:.2f}%"
    if mode == "latency":
        text = f"ok p50 {_us(record.stat('p50'))} us, p99 {_us(record.stat('p99'))} us"
    elif mode == "throughput":
        text = f"ok {_fixed(record.samples_per_s, 0)} pkt/s, {_fixed(record.mbps, 1)} Mbps, lost {loss}"
    elif mode == "burst":
        text = (f"ok {_fixed(record.samples_per_s, 0)} samples/s, lost {loss}, rejected "
                f"{_int(record.rejected)}, latency p50 {_us(record.stat('p50'))} us")
    else:
        text = f"ok loop {_fixed(record.loop_rate, 4)}, lost {loss}, latency ave {_us(record.stat('mean'))} us"
    if record.ping_lost:
        text += f"; {record.ping_lost} ping(s) beyond the {record.ping_timeout_s or 1:g} s timeout (censored)"
    if record.samples_error:
        text += "; no samples file (warning at the end)"
    if record.repetition is None:
        return text + adaptive_note(record)
    # a launch of a point: its own stop only where it stopped early; the point's headline so far from its launches
    adaptive = record.adaptive
    note = launches_note(record)
    if not note:  # nothing of the point's yet (its first launch, or its only one): the launch's own, when it looked
        looked = adaptive is not None and (adaptive.converged_after_s is not None or adaptive.needed_s is not None
                                           or not (adaptive.needed_note or "no look").startswith("no look"))
        return text + (adaptive_note(record) if looked else "")
    return (text + (adaptive_note(record) if adaptive is not None and adaptive.converged_after_s is not None else "")
            + f"; point: {note}")


def adaptive_note(record: Record) -> str:
    """'; +-5% after 1.2 s', or, not reached: '; +-5% would need ~42 s' (or why unknown)."""
    adaptive = record.adaptive
    if not record.precision or adaptive is None:
        return ""
    within = f"+-{record.precision * 100:g}%"
    if adaptive.converged_after_s is not None:
        return f"; {within} after {adaptive.converged_after_s:.1f} s"
    if adaptive.needed_s is not None:
        return f"; {within} not reached, would need ~{format_seconds(adaptive.needed_s)}"
    return f"; {within} not reached ({adaptive.needed_note or 'no look'})"


def format_seconds(seconds: float) -> str:
    """42.3 -> '42 s', 3725 -> '1h02m', 0.4 -> '0.4 s'."""
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 600:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes // 60}h{minutes % 60:02d}m" if minutes >= 60 else f"{minutes} min"


class Tables(Exporter):
    """The tables on a stream (the terminal), as aligned text or Markdown.

    ``verbose`` (``mwperf report``, ``run --verbose``): the floor, the result tables, a scenario's (its
    flows alone and together), the tables across points the records support (ROS overhead, fan-out,
    threads, the ranges) and, last, the headline's wide tables. Otherwise what answers first: a
    scenario's tables, the result tables of the points the headline does not rank (burst mode, a
    search's probes), a search's answer and the cross-vendor matrices, then the headline (as text:
    :mod:`mwperf.export.headline_text`'s one screen; Markdown: :mod:`mwperf.export.ranking`'s tables)."""

    def __init__(self, fmt: str, out: TextIO, headline: bool = True, verbose: bool = True):
        self.name = fmt  # text or md
        self.out = out
        self.headline = headline
        self.verbose = verbose

    def write(self, records: list[Record], rundir: RunDir) -> list[Path]:
        anchors = Anchors.of(rundir.path)
        points = plain(records)  # a scenario's flows: the scenario's tables
        if self.verbose:
            sections = (floor_sections(anchors.floor) + build_sections(points, anchors)
                        + scenario_sections(records, anchors) + summaries(points) + ranges(points))
        else:
            unranked = [r for r in points if not ranked(r)]
            sections = (scenario_sections(records, anchors) + build_sections(unranked, anchors)
                        + max_rate_sections(points) + interop(points))
        compact = self.headline and not self.verbose and self.name == "text"  # one screen: the compact headline
        if self.headline and not compact:
            sections += headline_sections(points, anchors)
        self.out.write(printable(render_markdown(sections) if self.name == "md" else render_text(sections)))
        headline = compact_headline(points, anchors) if compact else ""
        if headline:
            self.out.write(("\n" if sections else "") + headline)
        return []
