"""Where the results store is, and a connection to it: a DuckDB file (the
embedded default) or a PostgreSQL server (``postgresql://...``, psycopg 3).

Both speak the same SQL here; what differs is kept in :class:`Connection`:
the parameter style (``?`` is written, psycopg gets ``%s``), the lock that
serialises two writers' schema changes (PostgreSQL's advisory lock; a
DuckDB file has one writer process anyway) and how their errors read.

Every failure to reach or open a store is bad input, one line naming the
store, never its password: an unreachable server, a file that is not a
DuckDB database (refused and left as it is, never overwritten), a file
another process writes.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from mwperf.errors import UsageError
from mwperf.extras import need

__all__ = ["Connection", "connect", "shown_url", "is_postgres", "resolve", "DEFAULT_STORE", "ENV_DB", "OFF"]

#: The environment variable naming the store (as --db).
ENV_DB = "MWPERF_DB"
#: The embedded store in the default results folder (see :func:`resolve`).
DEFAULT_STORE = Path("results") / "mwperf.duckdb"
#: --db values that turn the store off for a run.
OFF = ("none", "off")
_SCHEMES = ("postgresql", "postgres")


def is_postgres(url: str) -> bool:
    return urlsplit(url).scheme in _SCHEMES


def shown_url(url: str) -> str:
    """The store as it may be printed: a PostgreSQL URL without its password."""
    if not is_postgres(url):
        return url
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        netloc = f"{user.split(':', 1)[0]}@{host}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "password"])
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


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


def _one_line(text: object, secret: str | None = None) -> str:
    text = " ".join(str(text).split())
    return text.replace(secret, "***") if secret else text


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
            finally:
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
            raise UsageError("--db", shown_url(self.url), _one_line(exc, _password(self.url))) from None

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


def _password(url: str) -> str | None:
    if not is_postgres(url):
        return None
    parts = urlsplit(url)
    return parts.password or dict(parse_qsl(parts.query)).get("password") or None


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
        text = _one_line(exc)
        if re.search(r"Could not set lock|Conflicting lock", text):
            raise UsageError("--db", url, f"in use by another process: {text}") from None
        if _NOT_DUCKDB.search(text):
            raise UsageError("--db", url, f"not a DuckDB database, refused and left as it is ({text})") from None
        if "IOException" in type(exc).__name__ or "Corrupt" in text or "Serialization" in text:
            raise UsageError("--db", url, f"cannot be read, refused and left as it is ({text})") from None
        raise UsageError("--db", url, text) from None


def _open_postgres(url: str):
    psycopg = need("psycopg", "--db", shown_url(url))

    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=10)
    except Exception as exc:  # noqa: BLE001 - every driver error is one line
        if not _driver_error(exc):
            raise
        raise UsageError("--db", shown_url(url), f"cannot connect: {_one_line(exc, _password(url))}") from None


def connect(url: str, *, read_only: bool = False) -> Connection:
    """A connection to the store ``url`` (a DuckDB file path, or a
    ``postgresql://`` URL). UsageError (one line, exit 2) when it cannot be
    reached or opened; a missing DuckDB file is created unless ``read_only``."""
    if "://" in url and not is_postgres(url):
        raise UsageError("--db", shown_url(url), "unknown kind of store: give a DuckDB file path or a "
                                                 "postgresql:// URL")
    if is_postgres(url):
        return Connection(_open_postgres(url), url, True)
    return Connection(_open_duckdb(url, read_only), url, False)
