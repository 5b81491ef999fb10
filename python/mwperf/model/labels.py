"""How a record is named to a reader: its QoS label, the QoS that tells
points apart (tables, plots and ``compare`` group and match by it), and the
options that identify a point, all from the agent's option table
(:mod:`mwperf.table`: each QoS option's label part, in the table's order)."""

from __future__ import annotations

from typing import Any

from mwperf.table import snapshot

__all__ = ["qos_key", "qos_label", "field", "identity"]


def field(record: dict, path: str) -> Any:
    """``record``'s field ``path`` (``qos.history``), None when missing."""
    value: Any = record
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


def qos_key(record: dict) -> tuple:
    """What tells sections apart: each label part of the QoS options (a
    middleware's default, such as volatile or unkeyed, says nothing, so a
    failed point that only knows what was requested joins the section of its
    ok neighbours)."""
    return tuple(row.label_part(row.from_record(field(record, row.record))) for row in snapshot().label_rows)


def qos_label(record: dict) -> str:
    """The parts in the table's order: ``reliable, keep-last:10, transient-local, keyed 100000, async, batch,
    congestion drop, listener, shm``."""
    return ", ".join(part for part in qos_key(record) if part)


def identity(record: dict) -> tuple:
    """Every option that identifies the point and says what was measured
    (the table's point and QoS options, by their record fields): two records
    of one identity measured the same thing."""
    return tuple(field(record, row.record) for row in snapshot().rows
                 if row.point_key and row.group in ("point", "qos"))
