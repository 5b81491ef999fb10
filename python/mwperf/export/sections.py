"""What every table is made of: a :class:`Section` (a title, headers and
:class:`Row` s) and the key that parts records into sections. The result
tables (:mod:`mwperf.export.tables`) and the tables across points
(:mod:`mwperf.export.summaries`) both build them."""

from __future__ import annotations

from dataclasses import dataclass, field

from mwperf.model.labels import qos_key
from mwperf.model.record import Record

__all__ = ["Row", "Section", "section_key"]


@dataclass
class Row:
    cells: list[str]
    failure: str | None = None  # "FAILED: reason" rows keep only their leading cells
    note: str | None = None  # said under the table (a latency censored at the ping timeout)


@dataclass
class Section:
    mw: str
    mode: str
    title: str
    headers: list[str]
    rows: list[Row] = field(default_factory=list)
    qos: str = ""  # the QoS part of the title, e.g. "reliable, keep-last:10, udp"
    source: str | None = None  # an imported point's table title (source.section)
    left: tuple[int, ...] = ()  # columns of text, aligned left


def section_key(record: Record) -> tuple:
    """What parts sections beyond middleware and mode: QoS and transport, CPU
    placement and wait strategy (a sweep may vary them), the number of
    subscribers and whether they are processes or threads, and the titled
    table of an imported point."""
    return (*qos_key(record), record.cpu.pub, record.cpu.sub, record.wait, record.subscribers,
            record.source_section, record.subscribers_as)
