"""The one interface every output format of a run implements.

results.jsonl is a run's source of truth; everything else a run directory
or the terminal shows is made from its records by an :class:`Exporter`:
the tables (text, Markdown), results.csv, RTI Perftest's CSV tables, the
HTML report and its plots as SVG/PNG files. A new format is one class with
a ``name`` and a ``write``; the commands only choose which to run.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path

from mwperf.model.record import Record
from mwperf.results.rundir import RunDir

__all__ = ["Exporter"]


class Exporter(ABC):
    """One format; what it needs beyond the records (a stream, a point to
    plot) it is given when made."""

    #: The format's name, as the commands' ``--format`` spell it.
    name: str

    @abstractmethod
    def write(self, records: list[Record], rundir: RunDir) -> list[Path]:
        """Write ``records`` (of ``rundir``) in this format; the files written."""
