"""Records as a tidy pandas DataFrame: one row per point, nested fields
flattened with dotted names (``latency_us.p50``, ``cpu.pub``,
``qos.history``, ``source.section``), lists (affinities, thread groups,
subscribers) kept as Python objects; or one row per subscriber of each
point.

This is what ``mwperf.load`` returns and what ``mwperf export --format
parquet`` writes: results.jsonl stays the source of truth.
"""

from __future__ import annotations

import json
from typing import Iterable

from mwperf.model.record import Record
from mwperf.table import snapshot

__all__ = ["points_frame", "subscribers_frame", "POINT_KEYS", "for_parquet"]

#: The columns that name a point, first in every frame (those present): every
#: option of the agent's table that identifies a point, by its record field.
POINT_KEYS = ["run_id", "point", "time", "status",
              *(row.field for row in snapshot().rows if row.point_key and row.group in ("point", "qos")),
              "cpu.placement", "wait", "repetition", "source.tool", "source.section"]

#: What a subscriber's row holds, from ``per_subscriber`` (fan-out) or, for
#: a point with one subscriber, from the point itself.
_SUBSCRIBER_FIELDS = ("index", "echoer", "slow", "received", "lost", "loss_rate", "duplicates", "latency_us",
                      "cpu_s", "rss_kb", "reader", "cpu_scope")


def _ordered(frame):
    first = [c for c in POINT_KEYS if c in frame.columns]
    return frame[first + [c for c in frame.columns if c not in first]]


def _typed(frame):
    import pandas as pd

    if "time" in frame.columns:
        frame["time"] = pd.to_datetime(frame["time"], utc=True, errors="coerce", format="ISO8601")
    return frame


def points_frame(records: Iterable[Record]):
    """One row per record (ok, failed and imported alike), dotted columns."""
    import pandas as pd

    objects = [r.json for r in records]
    if not objects:
        return pd.DataFrame(columns=POINT_KEYS)
    frame = pd.json_normalize(objects, sep=".")
    # json_normalize leaves a null nested object as one null column next to its
    # flattened fields from other records ("link" and "link.kind"): drop the bare one
    frame = frame.drop(columns=[c for c in frame.columns
                                if any(o.startswith(c + ".") for o in frame.columns) and frame[c].isna().all()])
    return _typed(_ordered(frame))


def _point_part(record: Record) -> dict:
    """The point's columns of a subscriber's row: its identifying fields, and the flat ones of qos, cpu and source."""
    obj = record.json
    keep = {key: obj[key] for key in ("run_id", "point", "time", "status", "wait", "repetition")}
    keep.update((key, obj[key]) for key in POINT_KEYS if key in obj)
    for parent in ("qos", "cpu", "source"):
        for key, value in (obj.get(parent) or {}).items() if isinstance(obj.get(parent), dict) else ():
            if not isinstance(value, (dict, list)):
                keep[f"{parent}.{key}"] = value
    return keep


def subscribers_frame(records: Iterable[Record]):
    """One row per subscriber of each point: the point's identifying columns,
    then ``subscriber.*`` (index, echoer, slow, received, lost, loss_rate,
    duplicates, latency_us.*, cpu_s, rss_kb, reader, cpu_scope). A point
    with one subscriber is its own subscriber 0; a failed point has no
    subscriber rows. As threads (``subscribers_as``), the one process's CPU
    and RSS are in reader 0's row and the others' are empty: a sum over the
    rows counts the process once."""
    import pandas as pd

    rows = []
    for record in records:
        if not record.ok:
            continue
        per = record.json.get("per_subscriber")  # as written: its fields are the columns
        if isinstance(per, list) and per:
            subs = per
        else:
            cpu = record.cpu_s.sub
            subs = [{"index": 0, "echoer": record.mode == "latency", "slow": False,
                     "received": record.received, "lost": record.lost,
                     "loss_rate": record.loss_rate, "duplicates": record.duplicates,
                     "latency_us": record.json.get("latency_us"), "cpu_s": None if cpu is None else cpu.total,
                     "rss_kb": record.rss_kb.sub}]
        for sub in subs:
            row = _point_part(record)
            row["subscriber"] = {k: sub.get(k) for k in _SUBSCRIBER_FIELDS}
            rows.append(row)
    if not rows:
        return pd.DataFrame(columns=[c for c in POINT_KEYS if not c.startswith("source.")] + ["subscriber.index"])
    frame = pd.json_normalize(rows, sep=".")
    frame = frame.drop(columns=[c for c in frame.columns
                                if any(o.startswith(c + ".") for o in frame.columns) and frame[c].isna().all()])
    return _typed(_ordered(frame))


def for_parquet(frame):
    """A copy Parquet can hold: columns of lists or dicts (affinities,
    thread groups, per-subscriber lists, adapter configuration) and columns
    of mixed types become JSON text; numbers, text and booleans stay typed."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype != object:
            continue
        kinds = {type(v) for v in out[column] if v is not None and v == v}
        if kinds <= {str} or kinds <= {bool}:
            continue
        out[column] = [None if v is None or (isinstance(v, float) and v != v) else json.dumps(v, sort_keys=True)
                       for v in out[column]]
    return out
