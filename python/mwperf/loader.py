"""``mwperf.load``: a run's results.jsonl as a pandas DataFrame in one line.

    >>> import mwperf
    >>> df = mwperf.load("results/20260101-120000")
    >>> df.groupby(["mw", "size"])["latency_us.p50"].median()
    >>> every = mwperf.load(db="results/mwperf.duckdb")   # every run of a results store

One row per point (ok, failed and imported points alike: filter on
``status`` and ``source.tool``), nested fields flattened with dotted names;
``subscribers=True`` gives one row per subscriber of each point instead
(fan-out runs). Several run directories concatenate (``run_id`` tells them
apart); a store (``db=``: a DuckDB file or a ``postgresql://`` URL) gives
the same frame as the directories it was made from, oldest run first.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, Union

if TYPE_CHECKING:
    from mwperf.model.record import Record

__all__ = ["load"]

PathLike = Union[str, "os.PathLike[str]"]


def _jsonl(path: PathLike) -> Path:
    from mwperf.results.rundir import RESULTS_JSONL

    p = Path(path)
    if p.is_dir():
        p = p / RESULTS_JSONL
    if not p.is_file():
        raise FileNotFoundError(f"{path}: no {RESULTS_JSONL} there (give a run directory or its results.jsonl)")
    return p


def load(path: PathLike | Iterable[PathLike] | None = None, *, subscribers: bool = False, db: str | None = None):
    """The records of a run directory (or of its results.jsonl, or of several
    of either), or of a results store (``db``), as a tidy DataFrame; see the
    module's documentation."""
    from mwperf.export.frame import points_frame, subscribers_frame
    from mwperf.results.rundir import read_records

    if (path is None) == (db is None):
        raise TypeError("mwperf.load: give run directories or db=STORE (one of them)")
    if db is not None:
        from mwperf.store import opened
        from mwperf.store.query import load_frame

        with opened(str(db)) as conn:
            return load_frame(conn, subscribers=subscribers)
    paths = [path] if isinstance(path, (str, os.PathLike)) else list(path or ())
    records: list[Record] = []
    for each in paths:
        jsonl = _jsonl(each)
        records += read_records(jsonl.parent, name=jsonl.name)
    return subscribers_frame(records) if subscribers else points_frame(records)
