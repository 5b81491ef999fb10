"""Run directories into the store.

A run is read the way every reader of mwperf reads it: its records through
:func:`mwperf.results.rundir.read_records` (the one loader, which checks each
record and upgrades older record versions), its provenance from run.json.
The columns come from the frames of :mod:`mwperf.export.frame`, so a field
the loader gives is a column without a list of fields here.

**A run is stored once, and never changed.** Its identity (``run_key``) is a
digest of its run id, the host it ran on and when it started (run.json; the
first record's time when there is none): the same run ingested twice, or from
a copy of its directory elsewhere, is one run. A digest of its records and
run.json (``records_hash``) says whether anything changed since: unchanged,
the ingest is a no-op. A run only ever grows: a sweep resumed, or a run
ingested while it was still running, adds its new launches after the stored
ones (each stored launch, keyed as the loader keys it,
:func:`mwperf.results.checks.launch_key`, must be there unchanged and in its
place) and its run.json's last word; a directory that changed, dropped or
moved a stored launch, or changed a finished run's run.json alone, is refused
in one line (a modified copy: ingest it into another store, or give it a run
id of its own). The run directory stays the truth; the store can always be
rebuilt from directories.

**The columns are bounded and known.** A record's columns are the fields of
the record schema (:func:`mwperf.model.schema.load_schema`): a free-form
section of it (an object the schema does not spell out, such as
``adapter.config``, ``adapter.versions`` or ``ci_null``) is one column of
JSON text, never a column per key, so a record of 10,000 configuration keys
adds no column. A run's columns are :data:`RUN_COLUMNS` (run.json's lists
and objects as JSON text); the rest of run.json is in ``run_json`` only, so
keys that differ only in case (``HOSTNAME`` next to ``hostname``, which
DuckDB cannot tell apart as columns) are stored as they are.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from mwperf.errors import UsageError
from mwperf.export.frame import points_frame, subscribers_frame
from mwperf.model.labels import point_id
from mwperf.model.record import Record
from mwperf.model.upgrade import add_missing_options, current
from mwperf.results.checks import launch_key, point_named
from mwperf.results.rundir import RESULTS_JSONL, RunDir, read_records, shown
from mwperf.model.schema import load_schema
from mwperf.store.connect import Connection
from mwperf.store.schema import Columns, native

__all__ = ["Ingested", "ingest_dir", "run_key", "RUN_COLUMNS", "sealed"]

#: The columns of ``runs`` that come from run.json (besides the fixed ones), each a path into it; a list or
#: object there is JSON text.
RUN_COLUMNS = ("status", "finished", "mwperf_version", "kernel", "cpu_model", "vcpus", "governor", "governor_note",
               "clocksource", "guest_halt_poll_ns", "python", "machine_lock", "git.sha", "git.dirty", "agent.path",
               "agent.version", "agent.build_type", "agent.compiler", "sysctl", "adapters", "command", "points")


@dataclass
class Ingested:
    path: str
    run_id: str
    hostname: str | None
    points: int
    outcome: str  # "stored", "updated", "unchanged"

    def line(self) -> str:
        host = f", host {self.hostname}" if self.hostname else ""
        return f"{self.outcome}: {self.path} (run {self.run_id}{host}, {self.points} points)"


def _time(text) -> dt.datetime | None:
    if not isinstance(text, str):
        return None
    try:
        value = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)


def _identity(run: dict, records: list[Record]) -> tuple[str, str | None, str | None]:
    """(run id, host, start) of a run: run.json's, else its first record's."""
    run_id = run["run_id"] if isinstance(run.get("run_id"), str) else str(records[0].run_id)
    times = sorted(r.time for r in records)
    started = run.get("started") if isinstance(run.get("started"), str) else (times[0] if times else None)
    hostname = run.get("hostname")
    return run_id, hostname if isinstance(hostname, str) else None, started


def run_key(run: dict, records: list[Record]) -> str:
    """The run's identity in the store (see the module's documentation)."""
    return hashlib.sha256(json.dumps(_identity(run, records)).encode()).hexdigest()[:24]


def _digest(run: dict, records: list[Record]) -> str:
    text = json.dumps([run, [r.json for r in records]], sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()


def _subscriber_counts(records: list[Record]) -> list[int]:
    """How many rows :func:`subscribers_frame` gives each record (its contract:
    none for a failed point, one per ``per_subscriber`` entry, else one)."""
    return [0 if not r.ok else len(r.per_subscriber or ()) or 1 for r in records]


@lru_cache(maxsize=1)
def _record_schema() -> dict:
    return load_schema()


def _node(node: dict, root: dict) -> dict:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return root["$defs"][ref[len("#/$defs/"):]]
    return node


def sealed(value: Any, node: dict | None = None, root: dict | None = None) -> Any:
    """A record as the store flattens it: every object the schema spells out
    (its properties, nothing else) stays an object, every free-form one is
    JSON text (one column); a key the schema does not know is left out (it
    is in the ``record`` column)."""
    if root is None:
        root = node = _record_schema()
    node = _node(node or {}, root)
    if isinstance(value, dict):
        properties = node.get("properties")
        if not isinstance(properties, dict) or node.get("additionalProperties", True) is not False:
            return json.dumps(value, sort_keys=True, ensure_ascii=False)
        return {k: sealed(v, properties[k], root) for k, v in value.items() if k in properties}
    if isinstance(value, list) and isinstance(node.get("items"), dict):
        return [sealed(item, node["items"], root) for item in value]
    return value


def _run_row(run: dict) -> dict:
    """RUN_COLUMNS of run.json (typed on reading): lists and objects as JSON text."""
    row = {}
    for name in RUN_COLUMNS:
        value: Any = run
        for part in name.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        row[name] = json.dumps(value, sort_keys=True, ensure_ascii=False) if isinstance(value, (dict, list)) else value
    return row


def _rows(frame) -> list[dict]:
    return [{k: native(v) for k, v in row.items()} for row in frame.to_dict("records")]


def ingest_dir(conn: Connection, directory: str | Path, warn: Callable[[str], object] | None = None) -> Ingested:
    """Store the run in ``directory`` (see the module's documentation).
    UsageError when it holds no record."""
    path = Path(directory)
    records = read_records(path, warn=warn)
    if not records:
        raise UsageError("db ingest", shown(str(directory), 200), f"no usable record in {RESULTS_JSONL} there")
    run = RunDir(path).read_run_json() or {}
    key, digest = run_key(run, records), _digest(run, records)
    run_id, hostname, started = _identity(run, records)

    flat_records = [replace(r, json=sealed(r.json)) for r in records]  # the frames' columns: bounded, known
    points = _rows(points_frame(flat_records))
    for seq, (row, record) in enumerate(zip(points, records)):
        row.update(run_key=key, seq=seq, point_label=point_id(record).label,
                   record=json.dumps(record.json, separators=(",", ":"), ensure_ascii=False))
    subs = _rows(subscribers_frame(flat_records))
    seqs = [seq for seq, n in enumerate(_subscriber_counts(records)) for _ in range(n)]
    if len(seqs) != len(subs):  # pragma: no cover - the frame's contract changed
        raise AssertionError("subscribers_frame gave another number of rows than its records have subscribers")
    for row, seq in zip(subs, seqs):
        row.update(run_key=key, seq=seq, sub=row.get("subscriber.index") or 0)
    run_row = {**_run_row(run), "run_key": key, "run_id": run_id, "hostname": hostname, "started": _time(started),
               "source": str(path.resolve()), "ingested": dt.datetime.now(dt.timezone.utc),
               "records_hash": digest, "points_count": len(records),
               "run_json": json.dumps(run, ensure_ascii=False) if run else None}

    with conn.transaction():
        had = conn.execute("SELECT records_hash, source, run_json FROM runs WHERE run_key = ?", (key,))
        if had and had[0][0] == digest:
            return Ingested(str(path), run_id, hostname, len(records), "unchanged")
        kept = 0
        if had:  # only ever grown: every stored launch the same, what is new added after them
            kept = _stored_launches_kept(conn, key, records, path, run_id, had[0][1], had[0][2])
            conn.execute("DELETE FROM runs WHERE run_key = ?", (key,))
        Columns(conn, "runs").insert([run_row])
        Columns(conn, "points").insert(points[kept:])
        Columns(conn, "subscribers").insert([row for row in subs if row["seq"] >= kept])
    return Ingested(str(path), run_id, hostname, len(records), "updated" if had else "stored")


def _text(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _stored_launches_kept(conn: Connection, key: str, records: list[Record], path: Path, run_id: str,
                          source: str | None, run_json: str | None) -> int:
    """How many of the run's stored launches the directory holds unchanged, in their order, before its new
    ones: all of them, or UsageError (one line) naming the first launch the directory changed, dropped or
    has in another place. A run whose launches are all there already may still take its run.json's last
    word (a run ingested while it ran, then finished), never a finished run's."""
    stored = [json.loads(text) for (text,) in conn.execute(
        "SELECT record FROM points WHERE run_key = ? ORDER BY seq", (key,))]
    said = f"run {shown(run_id, 60)} is stored (from {shown(str(source), 120)}) and a stored run is never changed"
    if len(records) < len(stored):
        raise UsageError("db ingest", shown(str(path), 200), f"{said}: the store has {len(stored)} launches of it, "
                                                            f"this directory {len(records)}")
    for old, new in zip(stored, records):
        old = current(old)
        if old.get("schema_version") == 2:
            add_missing_options(old)  # stored by an mwperf before an option was added: as the loader reads it now
        if launch_key(Record.from_json(current(old))) != launch_key(new) or _text(old) != _text(new.json):
            raise UsageError("db ingest", shown(str(path), 200),
                             f"{said}: {point_named(new)} differs from the stored one (a modified copy? ingest "
                             f"it into another store, or give it a run id of its own)")
    finished = isinstance(run_json, str) and (json.loads(run_json) or {}).get("status") == "complete"
    if len(records) == len(stored) and finished:
        raise UsageError("db ingest", shown(str(path), 200), f"{said}: its launches are the stored ones, its "
                                                            "run.json is not (a modified copy?)")
    return len(stored)
