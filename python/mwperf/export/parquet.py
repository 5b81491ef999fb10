"""``mwperf export DIR --format parquet``: the run as Parquet (pyarrow), for
sweeps too large to re-read as JSON every time: DIR/results.parquet, one
row per point as ``mwperf.load`` gives it, and DIR/subscribers.parquet, one
row per subscriber, when a point had more than one."""

from __future__ import annotations

from pathlib import Path

from mwperf.export.exporter import Exporter
from mwperf.export.frame import for_parquet, points_frame, subscribers_frame
from mwperf.export.derived import subscribers
from mwperf.results.rundir import RunDir

__all__ = ["Parquet", "RESULTS_PARQUET", "SUBSCRIBERS_PARQUET"]

RESULTS_PARQUET = "results.parquet"
SUBSCRIBERS_PARQUET = "subscribers.parquet"


class Parquet(Exporter):
    name = "parquet"

    def __init__(self, directory: Path | None = None):
        self.directory = directory  # default: the run directory

    def write(self, records: list[dict], rundir: RunDir) -> list[Path]:
        directory = self.directory or rundir.path
        directory.mkdir(parents=True, exist_ok=True)
        written = [directory / RESULTS_PARQUET]
        for_parquet(points_frame(records)).to_parquet(written[0], engine="pyarrow", index=False)
        if any(subscribers(r) > 1 for r in records):
            written.append(directory / SUBSCRIBERS_PARQUET)
            for_parquet(subscribers_frame(records)).to_parquet(written[1], engine="pyarrow", index=False)
        return written
