"""The run directory: results.jsonl, run.json, the kept samples, baseline.json.

* ``results.jsonl``: one record per point, appended as one write, flushed
  and fsync'ed before the next point starts, so a crash keeps every point
  measured so far (the formats generated from it, results.csv and
  report.html, are :mod:`mwperf.export`'s);
* ``run.json``: provenance, written at the start and rewritten atomically
  at the end;
* ``samples/NNNNN.i64``: each point's headline latency samples;
* ``baseline.json``: the link's raw capacity (``mwperf baseline``).

Ctrl-C and SIGTERM are held back while a record is being written, so a
record is never half-written by an interrupt.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Callable

from mwperf.interrupts import signals_deferred
from mwperf.results.schema import validate_record

__all__ = ["RunDir", "read_records", "read_samples", "samples_path", "write_atomic", "RESULTS_JSONL", "RUN_JSON",
           "SAMPLES_DIR", "BASELINE_JSON"]

RESULTS_JSONL = "results.jsonl"
SAMPLES_DIR = "samples"
RUN_JSON = "run.json"
BASELINE_JSON = "baseline.json"


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


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` at once: a reader sees the old file or the new one."""
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8", newline="") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def read_records(directory: Path | str, warn: Callable[[str], None] | None = None) -> list[dict]:
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
    def run_json(self) -> Path:
        return self.path / RUN_JSON

    def create(self) -> "RunDir":
        self.path.mkdir(parents=True, exist_ok=True)
        return self

    def append(self, record: dict) -> None:
        """Validate, append as one line (fsync'ed)."""
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

    def write_run_json(self, data: dict) -> None:
        with signals_deferred():
            write_atomic(self.run_json, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def read_run_json(self) -> dict | None:
        try:
            return json.loads(self.run_json.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def read_baseline(self) -> dict | None:
        """baseline.json (``mwperf baseline``), None when there is none."""
        try:
            return json.loads((self.path / BASELINE_JSON).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def write_baseline(self, doc: dict) -> Path:
        path = self.path / BASELINE_JSON
        path.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        return path
