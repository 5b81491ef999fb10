"""The store's tables, one SQL schema for DuckDB and PostgreSQL.

* ``mwperf_meta(key, value)``: ``store_version`` (:data:`STORE_VERSION`), when
  and by which mwperf the store was made;
* ``runs``: one row per run (``run_key``, its identity, see
  :mod:`mwperf.store.ingest`), where it was ingested from, and run.json:
  whole (``run_json``) and its known fields as columns (``hostname``,
  ``kernel``, ``cpu_model``, ``governor``, ``mwperf_version``, ``git.sha``,
  ``agent.build_type``, ...: :data:`mwperf.store.ingest.RUN_COLUMNS`);
* ``points``: one row per record (``run_key``, ``seq``: its line in
  results.jsonl), the record as the loader returned it (``record``, JSON
  text: what ``mwperf.load(db=...)`` reads back) and flattened into columns
  named as :func:`mwperf.load`'s (``"latency_us.p99"``, ``"cpu_s.pub.user"``:
  quote them in SQL); ``point_label`` names the point as ``compare`` does;
* ``subscribers``: one row per subscriber of each point (``run_key``,
  ``seq``, ``sub``), the columns of ``mwperf.load(subscribers=True)``.

The fixed columns are created with the tables; every other column (a field
of the record schema, a free-form section of it as one column of JSON text,
or one of RUN_COLUMNS: a bounded, known set) is added when a value for it is
first ingested, typed by its values (BOOLEAN,
BIGINT, DOUBLE PRECISION, TIMESTAMPTZ, TEXT; lists and objects as JSON
text) and widened when a later value needs it (BIGINT -> DOUBLE PRECISION,
anything else -> TEXT). So fields a newer record schema adds flow into the
store without a change here, and no record adds a column its schema does not
name. A field whose name SQL cannot hold (over 63 bytes, or characters other
than letters, digits, ``_`` and ``.``) stays in ``record`` only.

A store of an older version is upgraded on opening (:data:`MIGRATIONS`), one
of a newer version is refused with the reason, and so is a database whose
tables are not mwperf's.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from typing import Any, Iterable

from mwperf.version import __version__
from mwperf.errors import UsageError
from mwperf.store.connect import Connection, shown_url

__all__ = ["STORE_VERSION", "MIGRATIONS", "TABLES", "prepare", "Columns", "sql_value", "native"]

STORE_VERSION = 1
#: version -> the statements that take a store of that version to the next.
MIGRATIONS: dict[int, list[str]] = {}

#: table -> its fixed columns (name, SQL type), the primary key last.
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "runs": (("run_key", "TEXT NOT NULL"), ("run_id", "TEXT"), ("hostname", "TEXT"), ("started", "TIMESTAMPTZ"),
             ("source", "TEXT"), ("ingested", "TIMESTAMPTZ"), ("records_hash", "TEXT"), ("points_count", "BIGINT"),
             ("run_json", "TEXT"), ("PRIMARY KEY", "(run_key)")),
    "points": (("run_key", "TEXT NOT NULL"), ("seq", "BIGINT NOT NULL"), ("point", "BIGINT"),
               ("time", "TIMESTAMPTZ"), ("status", "TEXT"), ("mw", "TEXT"), ("mode", "TEXT"), ("size", "BIGINT"),
               ("rate_hz", "DOUBLE PRECISION"), ("point_label", "TEXT"), ("record", "TEXT NOT NULL"),
               ("PRIMARY KEY", "(run_key, seq)")),
    "subscribers": (("run_key", "TEXT NOT NULL"), ("seq", "BIGINT NOT NULL"), ("sub", "BIGINT NOT NULL"),
                    ("PRIMARY KEY", "(run_key, seq, sub)")),
}
_META = "mwperf_meta"
_NAME = re.compile(r"^[A-Za-z0-9_.]{1,63}$")

# column kinds, narrowest first; a column holding two kinds takes the wider (numbers) or TEXT
_KINDS = ("BOOLEAN", "BIGINT", "DOUBLE PRECISION", "TIMESTAMPTZ", "TEXT")
_REPORTED = {"boolean": "BOOLEAN", "bigint": "BIGINT", "integer": "BIGINT", "double precision": "DOUBLE PRECISION",
             "double": "DOUBLE PRECISION", "timestamp with time zone": "TIMESTAMPTZ", "text": "TEXT",
             "varchar": "TEXT", "character varying": "TEXT"}


def _tables(conn: Connection) -> set[str]:
    rows = conn.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema()")
    return {r[0] for r in rows}


def prepare(conn: Connection, *, write: bool) -> int:
    """Check (and for a writer create or upgrade) the store's tables; the
    store's version. UsageError naming the reason for a store this mwperf
    cannot use."""
    url = shown_url(conn.url)
    tables = _tables(conn)
    if _META not in tables:
        ours = set(TABLES) & tables
        if ours:
            raise UsageError("--db", url, f"holds tables named {', '.join(sorted(ours))} but no {_META}: not an "
                                          "mwperf store; refused (use an empty database or a new file)")
        if not write:
            raise UsageError("--db", url, "empty: no run ingested yet (mwperf db ingest DIR)")
        with conn.transaction():
            conn.execute(f"CREATE TABLE IF NOT EXISTS {_META} (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
            for table, columns in TABLES.items():
                body = ", ".join(f'{_q(n) if n != "PRIMARY KEY" else n} {t}' for n, t in columns)
                conn.execute(f"CREATE TABLE IF NOT EXISTS {table} ({body})")
            conn.executemany(f"INSERT INTO {_META} (key, value) VALUES (?, ?)",
                             [("store_version", str(STORE_VERSION)), ("created", _now().isoformat()),
                              ("created_by", f"mwperf {__version__}")])
        return STORE_VERSION
    version = _version(conn, url)
    if version > STORE_VERSION:
        raise UsageError("--db", url, f"store version {version} was written by a newer mwperf (this one reads "
                                      f"version {STORE_VERSION}): upgrade mwperf")
    if version < STORE_VERSION:
        missing = [v for v in range(version, STORE_VERSION) if v not in MIGRATIONS]
        if missing:
            raise UsageError("--db", url, f"store version {version} cannot be upgraded to {STORE_VERSION} in place: "
                                          "make a new store and ingest the run directories again "
                                          "(mwperf db ingest DIR... --db NEW)")
        if not write:
            raise UsageError("--db", url, f"store version {version} is older than this mwperf's ({STORE_VERSION}): "
                                          "mwperf db upgrade --db ... upgrades it")
        with conn.transaction():
            for v in range(version, STORE_VERSION):
                for statement in MIGRATIONS[v]:
                    conn.execute(statement)
            conn.execute(f"UPDATE {_META} SET value = ? WHERE key = 'store_version'", (str(STORE_VERSION),))
    return STORE_VERSION


def _version(conn: Connection, url: str) -> int:
    rows = conn.execute(f"SELECT value FROM {_META} WHERE key = 'store_version'")
    try:
        return int(rows[0][0])
    except (IndexError, TypeError, ValueError):
        raise UsageError("--db", url, f"{_META} has no usable store_version: not an mwperf store, refused") from None


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def native(value: Any) -> Any:
    """A value of a pandas frame as plain Python: numpy scalars unwrapped,
    NaN and NaT as None, a Timestamp as a datetime."""
    if value is None:
        return None
    if hasattr(value, "to_pydatetime"):  # pandas Timestamp (NaT is one too)
        return None if value != value else value.to_pydatetime()
    if hasattr(value, "item") and not isinstance(value, (list, dict)):  # numpy scalar
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _kind(value: Any) -> str | None:
    """The column kind a plain Python value needs; None for a null."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "DOUBLE PRECISION"
    if isinstance(value, dt.datetime):
        return "TIMESTAMPTZ"
    return "TEXT"


def _wider(a: str | None, b: str | None) -> str | None:
    if a is None or a == b:
        return b
    if b is None:
        return a
    if {a, b} == {"BIGINT", "DOUBLE PRECISION"}:
        return "DOUBLE PRECISION"
    return "TEXT"


def sql_value(value: Any, kind: str) -> Any:
    """``value`` as the driver takes it into a column of ``kind``."""
    have = _kind(value)
    if have is None:
        return None
    if kind == "TEXT":
        if have == "TEXT":
            return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
        return value.isoformat() if have == "TIMESTAMPTZ" else str(value)
    if kind == "DOUBLE PRECISION":
        return float(value)
    if kind == "BIGINT":
        return int(value)
    if kind == "BOOLEAN":
        return bool(value)
    return value


class Columns:
    """The columns of one table, as the database has them; adds and widens."""

    def __init__(self, conn: Connection, table: str):
        self.conn, self.table = conn, table
        rows = conn.execute("SELECT column_name, data_type FROM information_schema.columns "
                            "WHERE table_schema = current_schema() AND table_name = ? ORDER BY ordinal_position",
                            (table,))
        self.kinds: dict[str, str] = {name: _REPORTED.get(str(kind).lower(), "TEXT") for name, kind in rows}

    def fit(self, rows: Iterable[dict]) -> list[str]:
        """Add (or widen) the columns ``rows`` need; the columns to insert."""
        needed: dict[str, str | None] = {}
        for row in rows:
            for name, value in row.items():
                needed[name] = _wider(needed.get(name), _kind(value))
        out = []
        for name, kind in needed.items():
            if not _NAME.match(name):
                continue
            have = self.kinds.get(name)
            if have is None and kind is None:
                continue  # never a value yet: the column comes with the first one
            want = _wider(have, kind)
            if want is None:
                continue
            if have is None:
                self.conn.execute(f"ALTER TABLE {self.table} ADD COLUMN {_q(name)} {want}")
            elif want != have:
                self.conn.execute(f"ALTER TABLE {self.table} ALTER COLUMN {_q(name)} TYPE {want} "
                                  f"USING {_q(name)}::{want}")
            self.kinds[name] = want
            out.append(name)
        return out

    def insert(self, rows: list[dict]) -> None:
        """Each row (column -> Python value) as one row of the table."""
        if not rows:
            return
        names = self.fit(rows)
        self.conn.insert(self.table, [(n, self.kinds[n]) for n in names],
                         [[sql_value(row.get(n), self.kinds[n]) for n in names] for row in rows])
