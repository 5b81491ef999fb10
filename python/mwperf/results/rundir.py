"""The run directory: results.jsonl, results.csv and run.json.

* ``results.jsonl``: one record per point, appended as one write, flushed
  and fsync'ed before the next point starts, so a crash keeps every point
  measured so far;
* ``results.csv``: regenerated from results.jsonl after every point;
* ``run.json``: provenance, written at the start and rewritten atomically
  at the end.

Ctrl-C and SIGTERM are held back while a record is being written, so a
record is never half-written by an interrupt.
"""

from __future__ import annotations

import json
import struct
import os
import sys
from pathlib import Path

from mwperf.export.csv import write_csv
from mwperf.interrupts import signals_deferred
from mwperf.schema import validate_record

__all__ = ["RunDir", "read_records", "read_samples", "samples_path", "RESULTS_JSONL", "RESULTS_CSV", "RUN_JSON", "SAMPLES_DIR"]

RESULTS_JSONL = "results.jsonl"
SAMPLES_DIR = "samples"
RESULTS_CSV = "results.csv"
RUN_JSON = "run.json"


def samples_path(index: int) -> str:
    """Where point ``index`` keeps its latency samples, relative to the run directory."""
    return f"{SAMPLES_DIR}/{index:05d}.i64"


def read_samples(directory: Path | str, record: dict) -> list[float] | None:
    """The point's headline latency samples in µs (little-endian int64 ns, as
    the agent wrote them), or None when it has none or the file is gone."""
    info = record.get("samples_file")
    if not isinstance(info, dict):
        return None
    try:
        data = (Path(directory) / info["path"]).read_bytes()
    except (OSError, KeyError):
        return None
    count = len(data) // 8
    return [v / 1000.0 for v in struct.unpack(f"<{count}q", data[:count * 8])]


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def read_records(directory: Path | str, warn=None) -> list[dict]:
    """Records of ``results.jsonl``; a torn or unreadable line is skipped
    (reported through ``warn(message)`` if given)."""
    path = Path(directory) / RESULTS_JSONL
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except ValueError:
                if warn:
                    warn(f"{path}:{number}: not a JSON record, skipped")
                continue
            if isinstance(record, dict):
                records.append(record)
    return records


class RunDir:
    """Owns the files of one run directory."""

    def __init__(self, path: Path | str):
        self.path = Path(path)

    @property
    def jsonl(self) -> Path:
        return self.path / RESULTS_JSONL

    @property
    def csv(self) -> Path:
        return self.path / RESULTS_CSV

    @property
    def run_json(self) -> Path:
        return self.path / RUN_JSON

    def create(self) -> "RunDir":
        self.path.mkdir(parents=True, exist_ok=True)
        return self

    def append(self, record: dict) -> None:
        """Validate, append as one line (fsync'ed), regenerate the CSV."""
        validate_record(record)
        line = (json.dumps(record, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        with signals_deferred():
            fd = os.open(self.jsonl, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                # A crash may have left a torn last line: end it, so that this
                # record starts a line of its own (the torn one is skipped on reading).
                end = os.lseek(fd, 0, os.SEEK_END)
                if end > 0 and os.pread(fd, 1, end - 1) != b"\n":
                    line = b"\n" + line
                view = memoryview(line)
                while view:
                    written = os.write(fd, view)
                    view = view[written:]
                os.fsync(fd)
            finally:
                os.close(fd)
            self.regenerate_csv()

    def regenerate_csv(self) -> None:
        records = read_records(self.path, warn=lambda m: print(f"mwperf: warning: {m}", file=sys.stderr))
        tmp = self.csv.with_name(self.csv.name + ".tmp")
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            write_csv(records, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.csv)

    def write_run_json(self, data: dict) -> None:
        with signals_deferred():
            _write_atomic(self.run_json, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def read_run_json(self) -> dict | None:
        try:
            return json.loads(self.run_json.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
