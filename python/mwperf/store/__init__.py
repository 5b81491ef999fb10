"""The results store: runs over time, in a DuckDB file (embedded, nothing to
set up: the default) or on a PostgreSQL server (the store a team shares),
through the same code and the same SQL schema.

* :mod:`~mwperf.store.connect`: where the store is (``--db``, ``MWPERF_DB``,
  the default) and a connection to it;
* :mod:`~mwperf.store.schema`: its tables and version;
* :mod:`~mwperf.store.ingest`: run directories into it (a run stored once);
* :mod:`~mwperf.store.query`: records and frames back out.

Run directories stay the source of truth: the store is made from them.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from mwperf.store.connect import Connection, connect
from mwperf.store.schema import prepare

__all__ = ["opened"]


@contextmanager
def opened(url: str, *, write: bool = False) -> Iterator[Connection]:
    """The store at ``url``, checked (a writer creates or upgrades its
    tables), closed afterwards. UsageError, one line, when it cannot be used."""
    conn = connect(url, read_only=not write)
    try:
        prepare(conn, write=write)
        yield conn
    finally:
        conn.close()
