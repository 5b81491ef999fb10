"""Reading the store back: the records (as the loader returned them when
they were ingested) with their run's provenance, the same frames as from
run directories (``mwperf.load(db=...)``), what a store holds. Every stored
run is checked as the loader checks a run directory
(:mod:`mwperf.results.checks`: each record a measurement, each launch once):
a store changed by other hands is refused, never shown."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Sequence

from mwperf.display import shown
from mwperf.errors import Refused
from mwperf.model.record import Record
from mwperf.model.schema import SCHEMA_VERSIONS, record_ok
from mwperf.model.upgrade import current
from mwperf.results.checks import check_records
from mwperf.store.connect import Connection, shown_url

__all__ = ["Stored", "stored_points", "load_frame", "summary"]


@dataclass
class Stored:
    """A record of the store and what is known about its run."""

    record: Record
    run_key: str
    run_id: str | None
    hostname: str | None
    source: str | None
    run: dict = field(default_factory=dict)  # run.json as ingested ({} when the run had none)


def _in(column: str, values: Sequence | None, where: list[str], params: list) -> None:
    if values:
        where.append(f"{column} IN ({', '.join('?' for _ in values)})")
        params.extend(values)


def stored_points(conn: Connection, *, mw: Sequence[str] | None = None, mode: Sequence[str] | None = None,
                  size: Sequence[int] | None = None, rate: Sequence[float] | None = None,
                  host: Sequence[str] | None = None, host_pair: Sequence[str] | None = None) -> list[Stored]:
    """The stored records (those given: of these middlewares, modes, sizes,
    rates, hosts, a lab's pairs of hosts), oldest run first, each run's in
    results.jsonl order."""
    where: list[str] = []
    params: list = []
    _in("p.mw", mw, where, params)
    _in("p.mode", mode, where, params)
    _in("p.size", size, where, params)
    _in("p.rate_hz", [float(r) for r in rate] if rate else None, where, params)
    _in("r.hostname", host, where, params)
    rows = conn.execute(
        "SELECT p.record, p.run_key, r.run_id, r.hostname, r.source, r.run_json FROM points p "
        "JOIN runs r ON r.run_key = p.run_key" + (f" WHERE {' AND '.join(where)}" if where else "")
        + " ORDER BY r.started, p.run_key, p.seq", params)
    runs: dict[str, dict] = {}
    out = []
    by_run: dict[str, list[Record]] = {}
    for record, key, run_id, hostname, source, run_json in rows:
        if key not in runs:
            runs[key] = json.loads(run_json) if run_json else {}
        # a record stored by an older mwperf reads as the current version, as from its run directory
        typed = Record.from_json(current(_checked(record, conn, run_id)))
        by_run.setdefault(key, []).append(typed)
        out.append(Stored(typed, key, run_id, hostname, source, runs[key]))
    for records in by_run.values():  # what the loader checks of a run directory, of each stored run
        check_records(_where(conn, records[0].run_id), records)
    # host_pair is a column only once a lab's record is stored: filtered here, not in SQL
    return out if not host_pair else [s for s in out if s.record.host_pair in host_pair]


def _where(conn: Connection, run_id: object) -> str:
    return f"--db {shown_url(conn.url)}: run {shown(str(run_id), 60)}"


#: Stored records already found valid (their digest): a store read again is checked once a process.
_VALID: set[bytes] = set()


def _checked(text: str, conn: Connection, run_id: object) -> dict:
    """A stored record (its JSON text) as the loader would take it: an object of the results schema
    (Refused otherwise: a store written to by other hands, not by mwperf db ingest)."""
    try:
        record = json.loads(text)
        ok = isinstance(record, dict) and record.get("schema_version") in SCHEMA_VERSIONS
    except (TypeError, ValueError, RecursionError):
        record, ok = None, False
    digest = hashlib.blake2b(str(text).encode(), digest_size=16).digest()
    if ok and digest in _VALID:
        return record
    if ok and record_ok(current(record)):
        if len(_VALID) > 200_000:
            _VALID.clear()
        _VALID.add(digest)
        return record
    raise Refused(_where(conn, run_id), "a stored record that is not one of the results schema; refused "
                                            "(make the store again from the run directories)")
    return record


def load_frame(conn: Connection, *, subscribers: bool = False):
    """Every stored record as ``mwperf.load`` gives a run directory's."""
    from mwperf.export.frame import points_frame, subscribers_frame

    records = [s.record for s in stored_points(conn)]
    return subscribers_frame(records) if subscribers else points_frame(records)


def summary(conn: Connection) -> dict:
    """What the store holds: its version, runs, points, hosts, the time span."""
    version = conn.execute("SELECT value FROM mwperf_meta WHERE key = 'store_version'")[0][0]
    runs, first, last = conn.execute("SELECT count(*), min(started), max(started) FROM runs")[0]
    points = conn.execute("SELECT count(*) FROM points")[0][0]
    hosts = [h for (h,) in conn.execute("SELECT DISTINCT hostname FROM runs ORDER BY hostname") if h]
    return {"store_version": int(version), "runs": runs, "points": points, "hosts": hosts,
            "first": first, "last": last}
