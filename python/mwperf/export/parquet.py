"""``mwperf export DIR --format parquet``: the run as Parquet (pyarrow), for
sweeps too large to re-read as JSON every time: DIR/results.parquet, one
row per point as ``mwperf.load`` gives it, and DIR/subscribers.parquet, one
row per subscriber, when a point had more than one."""

from __future__ import annotations

from pathlib import Path

from mwperf.export.exporter import Exporter
from mwperf.extras import need
from mwperf.export.frame import for_parquet, points_frame, subscribers_frame
from mwperf.results.confined import atomic_file, make_dirs
from mwperf.model.record import Record
from mwperf.results.rundir import RunDir

__all__ = ["Parquet", "RESULTS_PARQUET", "SUBSCRIBERS_PARQUET"]

RESULTS_PARQUET = "results.parquet"
SUBSCRIBERS_PARQUET = "subscribers.parquet"


class Parquet(Exporter):
    name = "parquet"

    def __init__(self, directory: Path | None = None):
        self.directory = directory  # default: the run directory

    def write(self, records: list[Record], rundir: RunDir) -> list[Path]:
        need("pyarrow", "--format", "parquet")  # before anything is made: the extra to install, in one line
        directory = make_dirs(self.directory or rundir.path)
        frames = {RESULTS_PARQUET: points_frame}
        if any(r.subscribers > 1 for r in records):
            frames[SUBSCRIBERS_PARQUET] = subscribers_frame
        for name, frame in frames.items():
            with atomic_file(directory, name) as handle:
                for_parquet(frame(records)).to_parquet(handle, engine="pyarrow", index=False)
        return [directory / name for name in frames]
