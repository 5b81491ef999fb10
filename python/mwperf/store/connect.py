"""Where the results store is, and a connection to it: a DuckDB file (the
embedded default) or a PostgreSQL server (``postgresql://...``, psycopg 3).

Both speak the same SQL here; what differs is kept in :class:`Connection`:
the parameter style (``?`` is written, psycopg gets ``%s``), the lock that
serialises two writers' schema changes (PostgreSQL's advisory lock; a
DuckDB file has one writer process anyway) and how their errors read.

A PostgreSQL store is a URL (``postgresql://USER:PASSWORD@HOST/DB?...``) or
a libpq keyword string (``host=HOST dbname=DB password=...``); anything else
is a DuckDB file, but a text that starts as a keyword string does
(``host=... passwd=...``, a misspelt keyword) is refused, never made into a
file of that name.

Every failure to reach or open a store is bad input, one line naming the
store, never its password (in the URL, in its ``?password=`` query, in a
keyword string: :func:`mwperf.display.shown_store` and
:func:`~mwperf.display.store_secrets` are the one place that knows them):
an unreachable server, a URL that cannot be parsed, a file that is not a
DuckDB database (refused and left as it is, never overwritten), a file
another process writes.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

from mwperf.display import foreign_store_url, is_server_store as is_postgres, shown_store as shown_url, \
    store_secrets as secrets, unreadable_store_url
from mwperf.errors import UsageError
from mwperf.extras import need

__all__ = ["Connection", "connect", "shown_url", "secrets", "is_postgres", "resolve", "DEFAULT_STORE", "ENV_DB", "OFF"]

#: The environment variable naming the store (as --db).
ENV_DB = "MWPERF_DB"
#: The embedded store in the default results folder (see :func:`resolve`).
DEFAULT_STORE = Path("results") / "mwperf.duckdb"
#: --db values that turn the store off for a run.
OFF = ("none", "off")
_SCHEMES = ("postgresql", "postgres")


def resolve(option: str | None, run_dir: Path | None = None) -> tuple[str | None, bool]:
    """(the store, given explicitly?): ``--db``, else $MWPERF_DB, else the
    default. For a run (``run_dir``) the default is results/mwperf.duckdb when
    the run is written into the default results folder, and nothing
    otherwise; for a command that reads a store it is that file when it exists.
    None: no store (``--db none``)."""
    for value in (option, os.environ.get(ENV_DB)):
        if value is not None and value.strip():
            return (None if value.strip().lower() in OFF else value.strip()), True
    if run_dir is not None:
        inside = Path(run_dir).resolve().parent == DEFAULT_STORE.parent.resolve()
        return (str(DEFAULT_STORE) if inside else None), False
    return (str(DEFAULT_STORE) if DEFAULT_STORE.is_file() else None), False


def _one_line(text: object, hidden: list[str] | tuple[str, ...] = ()) -> str:
    text = " ".join(str(text).split())
    for secret in hidden:
        text = text.replace(secret, "***")
    return text


class Connection:
    """One connection, DB-API underneath; SQL is written with ``?`` placeholders."""

    def __init__(self, raw, url: str, postgres: bool):
        self.raw, self.url, self.postgres = raw, url, postgres

    def _sql(self, sql: str) -> str:
        return sql.replace("%", "%%").replace("?", "%s") if self.postgres else sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple]:
        with self._errors():
            # DuckDB: on the connection itself (a DuckDB cursor is another connection, with transactions of its own)
            cursor = self.raw.execute(self._sql(sql), list(params))
            return cursor.fetchall() if cursor.description else []

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if not rows:
            return
        with self._errors():
            if self.postgres:
                with self.raw.cursor() as cursor:
                    cursor.executemany(self._sql(sql), [list(r) for r in rows])
            else:
                self.raw.executemany(sql, [list(r) for r in rows])

    def insert(self, table: str, columns: list[tuple[str, str]], rows: list[list]) -> None:
        """Rows (values in the order of ``columns``: (name, SQL kind)) into
        ``table``. DuckDB takes them as one DataFrame of typed, nullable
        columns (its executemany runs one statement a row: 5 ms a row of 200
        columns); psycopg pipelines its executemany."""
        names = ", ".join('"' + n.replace('"', '""') + '"' for n, _ in columns)
        if self.postgres:
            self.executemany(f"INSERT INTO {table} ({names}) VALUES ({', '.join('?' for _ in columns)})", rows)
            return
        import pandas as pd

        frame = pd.DataFrame({f"c{i}": _column(kind, [row[i] for row in rows]) for i, (_, kind) in enumerate(columns)})
        with self._errors():
            self.raw.register("mwperf_rows", frame)
            try:
                self.raw.execute(f"INSERT INTO {table} ({names}) SELECT "
                                 f"{', '.join(f'c{i}' for i in range(len(columns)))} FROM mwperf_rows")
            except Exception:
                try:  # in a failed transaction this fails too ("transaction is aborted"): the first error counts
                    self.raw.unregister("mwperf_rows")
                except Exception:  # noqa: BLE001
                    pass
                raise
            self.raw.unregister("mwperf_rows")

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """BEGIN ... COMMIT, ROLLBACK on any error; writers take the store's lock."""
        self.execute("BEGIN")
        try:
            if self.postgres:  # two writers adding columns at once: one after the other
                self.execute("SELECT pg_advisory_xact_lock(?)", (0x6D77706572660001,))
            yield
        except BaseException:
            try:
                self.execute("ROLLBACK")
            except UsageError:
                pass
            raise
        self.execute("COMMIT")

    @contextmanager
    def _errors(self) -> Iterator[None]:
        """A driver's error as one line naming the store."""
        try:
            yield
        except Exception as exc:
            if not _driver_error(exc):
                raise
            text = _one_line(exc, secrets(self.url))
            raise UsageError("--db", shown_url(self.url), text if self.postgres else _duckdb_reason(text)) from None

    def close(self) -> None:
        try:
            self.raw.close()
        except Exception:  # noqa: BLE001 - closing a broken connection
            pass


def _column(kind: str, values: list[Any]) -> Any:
    """One column of rows as the SQL kind's pandas type, None as null (pandas only: no Arrow needed)."""
    import pandas as pd

    if kind == "TIMESTAMPTZ":
        return pd.to_datetime(pd.Series(values, dtype=object), utc=True)
    if kind == "TEXT":
        return pd.Series(values, dtype=object)
    return pd.array(values, dtype={"BOOLEAN": "boolean", "BIGINT": "Int64", "DOUBLE PRECISION": "Float64"}[kind])


def _driver_error(exc: Exception) -> bool:
    return type(exc).__module__.split(".")[0] in ("duckdb", "_duckdb", "psycopg")


_NOT_DUCKDB = re.compile(r"not a valid DuckDB database", re.I)


def _open_duckdb(url: str, read_only: bool):
    import duckdb

    path = Path(url)
    if not path.exists():
        if read_only:
            raise UsageError("--db", url, "no such store (mwperf db ingest DIR --db PATH makes one)")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UsageError("--db", url, f"cannot create: {exc.strerror or exc}") from None
    elif not path.is_file():
        raise UsageError("--db", url, "not a file (a DuckDB store is one file)")
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except Exception as exc:  # noqa: BLE001 - every driver error is one line
        if not _driver_error(exc):
            raise
        raise UsageError("--db", url, _duckdb_reason(_one_line(exc), "IOException" in type(exc).__name__)) from None


def _duckdb_reason(text: str, io_error: bool = False) -> str:
    """A DuckDB error in words: the store in use, not a DuckDB file, or one
    that cannot be read (truncated, damaged): refused, never written to."""
    if re.search(r"Could not set lock|Conflicting lock", text):
        return f"in use by another process: {text}"
    if _NOT_DUCKDB.search(text):
        return f"not a DuckDB database, refused and left as it is ({text})"
    if io_error or re.search(r"IO Error|Corrupt|Serialization|Could not read enough bytes", text):
        return f"cannot be read (truncated or damaged?), refused and left as it is ({text})"
    return text


def _open_postgres(url: str):
    psycopg = need("psycopg", "--db", shown_url(url))

    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except Exception as exc:  # noqa: BLE001 - every driver error is one line
        if not _driver_error(exc):
            raise
        raise UsageError("--db", shown_url(url), f"cannot connect: {_one_line(exc, secrets(url))}") from None


def connect(url: str, *, read_only: bool = False) -> Connection:
    """A connection to the store ``url`` (a DuckDB file path, or a
    ``postgresql://`` URL). UsageError (one line, exit 2) when it cannot be
    reached or opened; a missing DuckDB file is created unless ``read_only``."""
    if foreign_store_url(url) or ("://" in url and not is_postgres(url)):
        raise UsageError("--db", shown_url(url), "unknown kind of store: give a DuckDB file path or a "
                                                 "postgresql://USER@HOST[:PORT]/DB URL (two slashes)")
    if unreadable_store_url(url):
        raise UsageError("--db", shown_url(url), "not a URL that can be read (postgresql://USER@HOST[:PORT]/DB; an "
                                                 "IPv6 address in [brackets])")
    if is_postgres(url):
        return Connection(_open_postgres(url), url, True)
    return Connection(_open_duckdb(url, read_only), url, False)
