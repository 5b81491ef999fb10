"""The record of one point, typed: what every reader of results works with.

A :class:`Record` is made by the one loader (:func:`mwperf.results.reading.read_records`
for a run directory, :func:`mwperf.store.query.stored_points` for a store; both
check every record and upgrade it to the current version first,
:mod:`mwperf.model.upgrade`) or, as a point is measured, from the record
:func:`mwperf.model.merge.merge_record` made. Its fields are the record's
(``results/schema``); its parts are :mod:`mwperf.model.parts` (what was measured),
:mod:`mwperf.model.provenance` (where and how) and :mod:`mwperf.model.sections`
(what a run adds).

The options' fields come from the agent's option table, as the record's do:
each is in :attr:`Record.options` by its record name (``size``,
``qos.history``), and those the controller reads itself have a property
(:attr:`Record.size`, :attr:`Record.transport`, ...). A new option of the
table is a field here by being a row there.

What every output derives from a record the same way is here too (CPU % of a
side, the publisher's send rate, the section an imported point came from);
how a record is named (its QoS label, its point's identity across runs) is
:mod:`mwperf.model.labels`, what it was measured through :mod:`mwperf.model.fairness`.

:attr:`Record.json` is the record as written (results.jsonl's object), for
what takes every field as it is: results.csv, the frames, the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Generic, Mapping, TypeVar, cast

from mwperf.model.parts import Adaptive, CpuTime, Fanout, JsonObject, Sides, Stats, Subscriber, ThreadGroup
from mwperf.model.provenance import Adapter, Clock, Cpu, Host, Link, Reuse, SamplesFile, Security, Service, Source
from mwperf.model.sections import Launches, Scenario, Search
from mwperf.table import snapshot

__all__ = ["Record", "Option", "option_values", "STATS_FIELDS"]

T = TypeVar("T")

#: The record's statistics objects (each a :class:`~mwperf.model.parts.Stats`).
STATS_FIELDS = ("latency_us", "rtt_us", "send_lag_us", "latency_raw_us", "burst_first_us", "burst_last_us")


def _at(obj: Any, path: str) -> Any:
    """``obj``'s field ``path`` (``qos.history``), None when missing."""
    value = obj
    for part in path.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return value


@lru_cache(maxsize=1)
def _option_paths() -> tuple[tuple[str, str, str], ...]:
    """(record name, parent, name) of every option's record field (``qos.batch``: ``qos``, ``batch``)."""
    out = []
    for row in snapshot().record_rows:
        parent, _, name = row.field.rpartition(".")
        out.append((row.field, parent, name))
    return tuple(out)


def option_values(obj: JsonObject) -> dict[str, Any]:
    """Every option's record field of a record's object, by its record name (``qos.batch``)."""
    out: dict[str, Any] = {}
    for record, parent, name in _option_paths():
        where = obj.get(parent) if parent else obj
        out[record] = where.get(name) if isinstance(where, dict) else None
    return out


class Option(Generic[T]):
    """A record's option field as an attribute of the record (``record.size``): its value in
    :attr:`Record.options`, None where the record has none."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, record: Record, owner: type[Record] | None = None) -> T:
        return cast(T, record.options.get(self.name))


@dataclass(frozen=True, repr=False)
class Record:
    """One point's record (schema version 2). Counts are None where the mode
    does not have them or a side's result is missing; see ``results/schema``
    for every field's meaning."""

    json: JsonObject
    schema_version: int
    run_id: str
    point: int  # the point's index in its run
    time: str
    options: Mapping[str, Any]
    status: str
    error: str | None
    cpu: Cpu
    sent: int | None
    received: int | None
    lost: int | None
    loss_rate: float | None
    duplicates: int | None
    out_of_order: int | None
    foreign: int | None
    samples_per_s: float | None
    mbps: float | None
    loop_rate: float | None
    latency_us: Stats | None
    rtt_us: Stats | None
    send_lag_us: Stats | None
    latency_raw_us: Stats | None
    burst_first_us: Stats | None
    burst_last_us: Stats | None
    scheduled: int | None
    unsent: int | None
    send_timeouts: int | None
    ping_lost: int | None
    late_pongs: int | None
    ping_timeout_s: float | None
    rejected: int | None
    bursts: int | None
    per_subscriber: tuple[Subscriber, ...] | None
    fanout: Fanout | None
    cpu_s: Sides[CpuTime | None]
    cpu_window_s: Sides[float | None]
    cpu_pct: Sides[float | None]
    cpu_window: Sides[str | None]
    cpu_us_per_msg: Sides[float | None]
    threads: Sides[tuple[ThreadGroup, ...] | None]
    rss_kb: Sides[int | None]
    mw_rss_kb: Sides[int | None]
    own_kb: Sides[int | None]
    discovery_ms: float | None
    adapter: Adapter
    source: Source | None
    link: Link | None
    clock: Clock | None
    samples_file: SamplesFile | None
    repetition: int | None
    point_hash: str | None  # the record's ``point_key``: the sweep's hash of the planned point (sweep --resume)
    elapsed_s: float | None
    phases: Mapping[str, Any] | None  # seconds per phase; with --hosts, ``bundle``: how each side's came
    reuse: Reuse | None
    service: Service | None
    security: Security | None
    adaptive: Adaptive | None
    search: Search | None
    launches: Launches | None
    scenario: Scenario | None
    hosts: Sides[Host | None] | None  # with --hosts: each side's host
    host_pair: str | None  # sweep --inventory: the lab's pair of hosts, ``pub:sub`` (the inventory's names)
    samples_error: str | None = None  # why the agent could not write the samples file (--samples-out)
    launch_id: str | None = None  # the launch's own random id (16 hex digits); None in records written before it

    @classmethod
    def from_json(cls, r: JsonObject) -> Record:
        """The record of a checked, current-version object (see the module's text)."""

        def g(key: str) -> Any:
            return r.get(key)

        return cls(
            json=r, schema_version=g("schema_version"), run_id=g("run_id"), point=g("point"), time=g("time"),
            options=option_values(r), status=g("status"), error=g("error"), cpu=Cpu.of(g("cpu")), sent=g("sent"),
            received=g("received"), lost=g("lost"), loss_rate=g("loss_rate"), duplicates=g("duplicates"),
            out_of_order=g("out_of_order"), foreign=g("foreign"), samples_per_s=g("samples_per_s"), mbps=g("mbps"),
            loop_rate=g("loop_rate"), latency_us=Stats.of(g("latency_us")), rtt_us=Stats.of(g("rtt_us")),
            send_lag_us=Stats.of(g("send_lag_us")), latency_raw_us=Stats.of(g("latency_raw_us")),
            burst_first_us=Stats.of(g("burst_first_us")), burst_last_us=Stats.of(g("burst_last_us")),
            scheduled=g("scheduled"), unsent=g("unsent"), send_timeouts=g("send_timeouts"), ping_lost=g("ping_lost"),
            late_pongs=g("late_pongs"), ping_timeout_s=g("ping_timeout_s"), rejected=g("rejected"),
            bursts=g("bursts"), per_subscriber=Subscriber.all_of(g("per_subscriber")), fanout=Fanout.of(g("fanout")),
            cpu_s=Sides.of(g("cpu_s"), CpuTime.of), cpu_window_s=Sides.of(g("cpu_window_s")),
            cpu_pct=Sides.of(g("cpu_pct")), cpu_window=Sides.of(g("cpu_window")),
            cpu_us_per_msg=Sides.of(g("cpu_us_per_msg")), threads=Sides.of(g("threads"), ThreadGroup.all_of),
            rss_kb=Sides.of(g("rss_kb")), mw_rss_kb=Sides.of(g("mw_rss_kb")), own_kb=Sides.of(g("own_kb")),
            discovery_ms=g("discovery_ms"), adapter=Adapter.of(g("adapter")), source=Source.of(g("source")),
            link=Link.of(g("link")), clock=Clock.of(g("clock")), samples_file=SamplesFile.of(g("samples_file")),
            repetition=g("repetition"), point_hash=g("point_key"), elapsed_s=g("elapsed_s"), phases=g("phases"),
            reuse=Reuse.of(g("reuse")), service=Service.of(g("service")), security=Security.of(g("security")),
            adaptive=Adaptive.of(g("adaptive")), search=Search.of(g("search")), launches=Launches.of(g("launches")),
            scenario=Scenario.of(g("scenario")), hosts=None if g("hosts") is None else Sides.of(g("hosts"), Host.of),
            host_pair=g("host_pair"), samples_error=g("samples_error"), launch_id=g("launch_id"))

    def __repr__(self) -> str:
        return (f"Record(run {self.run_id!r}, point {self.point}: {self.options.get('mw')} {self.options.get('mode')} "
                f"{self.options.get('size')} B, {self.status})")

    # -- the options the controller reads by name (every one: options) ------------------------

    mw = Option[str]("mw")  # the middleware (the publisher's, on a cross-vendor point)
    peer_mw = Option[str | None]("peer_mw")  # cross-vendor: the subscriber's (None: the publisher's)
    mode = Option[str]("mode")
    size = Option[int]("size")
    rate_hz = Option[float | None]("rate_hz")
    demand = Option[int | None]("demand")
    subscribers = Option[int]("subscribers")
    subscribers_as = Option[str]("subscribers_as")  # how the subscribers ran: "processes" or "threads"
    duration_s = Option[float | None]("duration_s")
    precision = Option[float | None]("precision")
    wait = Option[str | None]("wait")
    reliability = Option[str | None]("reliability")
    transport = Option[str | None]("transport")

    def qos(self, name: str) -> Any:
        """A QoS option's field (``history`` for ``qos.history``), None where it does not apply."""
        return self.options.get(f"qos.{name}")

    def option(self, record_name: str) -> Any:
        """Any option's field by its record name (``qos.history``, ``latency_count``)."""
        return self.options.get(record_name)

    def field(self, path: str) -> Any:
        """Any field of the record as written, by its dotted name (``latency_us.p99``, ``cpu.placement``)."""
        return _at(self.json, path)

    # -- what every output derives the same way ---------------------------------------------

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def imported(self) -> bool:
        """Another tool's point (Perftest, ddsperf): measured elsewhere, read from its output."""
        return self.source is not None

    @property
    def pair_name(self) -> str:
        """The middleware of a point, or ``A->B`` for a cross-vendor one (A's publisher, B's subscriber)."""
        return f"{self.mw}->{self.peer_mw}" if self.peer_mw else self.mw

    def stats(self, name: str = "latency_us") -> Stats | None:
        """A statistics field by name (``latency_us``, ``burst_last_us``)."""
        if name not in STATS_FIELDS:
            raise KeyError(name)
        stats: Stats | None = getattr(self, name)
        return stats

    def stat(self, key: str, of: str = "latency_us") -> float | None:
        """A figure of a statistics field (``stat("p50")``), None where there are none (a failed or imported point)."""
        stats = self.stats(of)
        return None if stats is None else stats.figure(key)

    def span_s(self, side: str | None = None) -> float | None:
        """The measured window (of ``side`` when known), seconds."""
        window = self.cpu_window_s.side(side) if side else None
        span = window or self.elapsed_s or self.duration_s
        return span if isinstance(span, (int, float)) and span > 0 else None

    @property
    def pub_rate(self) -> float | None:
        """Samples the publisher sent per second of the measured phase."""
        span = self.span_s()
        return None if self.sent is None or span is None else self.sent / span

    @property
    def source_section(self) -> str | None:
        """The titled table of another tool's output an imported point came from."""
        return None if self.source is None else self.source.section

    @property
    def placement(self) -> tuple[str | None, int | None, int | None, str | None]:
        """Where and how the point ran (CPU placement, the cores, the wait strategy):
        points that differ in it do not measure the same thing."""
        return self.cpu.placement, self.cpu.pub, self.cpu.sub, self.wait

    @property
    def where(self) -> str:
        """``local``, ``netns`` or ``ssh``: where the two sides ran."""
        return "local" if self.link is None else self.link.kind
