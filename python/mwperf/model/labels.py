"""How a record is named to a reader: its QoS label, the QoS that tells
points apart (tables, plots and ``compare`` group and match by it), the
options that identify a point, all from the agent's option table
(:mod:`mwperf.table`: each QoS option's label part, in the table's order),
and the point's identity across runs (:class:`PointId`: what ``compare``
matches and ``mwperf history`` follows)."""

from __future__ import annotations

from typing import Any, Iterable, NamedTuple

from mwperf.model.record import Record
from mwperf.table import Row, snapshot

__all__ = ["qos_key", "qos_label", "identity", "PointId", "point_id", "subscribers_label", "NAMED"]


def _field(record: Record, row: Row) -> Any:
    """The record's field of an option of the table (None: the option has none)."""
    return None if row.record is None else record.option(row.record)


def qos_key(record: Record) -> tuple[str | None, ...]:
    """What tells sections apart: each label part of the QoS options (a
    middleware's default, such as volatile or unkeyed, says nothing, so a
    failed point that only knows what was requested joins the section of its
    ok neighbours)."""
    return tuple(row.label_part(row.from_record(_field(record, row))) for row in snapshot().label_rows)


def qos_label(record: Record) -> str:
    """The parts in the table's order: ``reliable, keep-last:10, transient-local, keyed 100000, async, batch,
    congestion drop, listener, shm``."""
    return ", ".join(part for part in qos_key(record) if part)


def identity(record: Record) -> tuple[Any, ...]:
    """Every option that identifies the point and says what was measured
    (the table's point and QoS options, by their record fields): two records
    of one identity measured the same thing."""
    return tuple(_field(record, row) for row in snapshot().rows if row.point_key and row.group in ("point", "qos"))


#: The point's options a point id names by themselves; the table's other options
#: that identify what was measured (latency-count, burst-gap, ...) follow, where not at their default.
NAMED = ("mw", "mode", "size", "rate", "demand", "subscribers", "subscribers-as")

#: A scenario's flow: (scenario, its digest, flow, together or alone).
ScenarioFlow = tuple[str, str, str, str]


class PointId(NamedTuple):
    """What a point is, across runs: the key ``compare`` matches points on
    (and ``mwperf history`` follows a point over time by); a scenario's flow is
    its scenario's (name and digest), the flow and whether it ran alone."""

    mw: str
    mode: str
    size: int
    rate_hz: float | None
    qos: str
    demand: int | None
    subscribers: int
    section: str | None
    subscribers_as: str
    scenario: ScenarioFlow | None
    others: tuple[str, ...]
    host_pair: str | None = None  # sweep --inventory: the lab's pair of hosts (pub:sub)

    @property
    def label(self) -> str:
        """As a reader sees it: ``udp latency 64 B (best-effort, udp)``, a
        scenario's flow ``... [robot-mobile: imu together]``."""
        fan = None if self.subscribers == 1 else \
            f"x{self.subscribers} subscribers" + (" as threads" if self.subscribers_as == "threads" else "")
        words = [f"{self.mw} {self.mode} {self.size} B", None if self.rate_hz is None else f"{self.rate_hz:g} Hz",
                 None if self.demand is None else f"demand {self.demand}", fan]
        text = " ".join(w for w in words if w)
        extra = "; ".join(p for p in (self.qos, *self.others, self.section) if p)
        text = f"{text} ({extra})" if extra else text
        s = self.scenario
        text = text if s is None else f"{text} [{s[0]}: {s[2]} {s[3]}]"
        return text if self.host_pair is None else f"{text} on {self.host_pair}"


def _others(record: Record) -> tuple[str, ...]:
    out = []
    for row in snapshot().rows:
        if row.point_key and row.group == "point" and row.name not in NAMED:
            value = row.from_record(_field(record, row))
            if value is not None and value != row.default:
                out.append(f"{row.name} {row.shown(value)}")
    return tuple(out)


def point_id(record: Record) -> PointId:
    """The record's point across runs (see :class:`PointId`)."""
    s = record.scenario
    flow = None if s is None else (s.name, s.hash, s.flow, "together" if s.together else "alone")
    return PointId(record.mw, record.mode, record.size, record.rate_hz, qos_label(record), record.demand,
                   record.subscribers, record.source_section,
                   record.subscribers_as if record.subscribers > 1 else "processes", flow, _others(record),
                   record.host_pair)


def subscribers_label(counts: Iterable[int], how: str) -> str:
    """``4 subscribers``, ``2/4 subscribers as threads``."""
    text = f"{'/'.join(str(n) for n in sorted(counts))} subscribers"
    return f"{text} as threads" if how == "threads" else text
