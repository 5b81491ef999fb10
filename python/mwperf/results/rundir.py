"""The run directory: results.jsonl, run.json, the kept samples, baseline.json.

* ``results.jsonl``: one record per point, appended as one write, flushed
  and fsync'ed before the next point starts, so a crash keeps every point
  measured so far (the formats generated from it, results.csv and
  report.html, are :mod:`mwperf.export`'s);
* ``run.json``: provenance, written at the start and rewritten atomically
  at the end;
* ``samples/NNNNN.i64``: each point's headline latency samples;
* ``baseline.json``: the link's raw capacity (``mwperf baseline``);
* ``floor.json``: what no middleware can beat here (:mod:`mwperf.results.floor`);
* ``.mwperf.lock``: while a run writes the directory, its owner
  (:mod:`mwperf.execute.lock`).

Ctrl-C and SIGTERM are held back while a record is being written, so a
record is never half-written by an interrupt. A write that fails (disk full,
read-only) leaves nothing behind: the part of a record already written is
cut off again, a temporary file is removed, and the error is one line
(:class:`~mwperf.errors.StorageError`). Every file is written through
:mod:`mwperf.results.confined`, never through a link.

Reading one is untrusted (:mod:`mwperf.results.reading`: bounded, every
record checked and upgraded to the current version); its names are re-exported here.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

from mwperf.display import shown
from mwperf.errors import StorageError, UsageError
from mwperf.interrupts import signals_deferred
from mwperf.results.confined import TMP_SUFFIX, make_dirs, open_append, refuse_link, utf8, write_atomic
from mwperf.results.reading import (
    BASELINE_JSON, BASELINE_TYPES, LOCK_FILE, MAX_DOC_BYTES, MAX_LINE_BYTES, MAX_RESULTS_BYTES, MAX_SAMPLES,
    RESULTS_JSONL, RUN_JSON, RUN_JSON_TYPES, SAMPLES_DIR, UnsafeFile, lock_owner_alive, open_inside, process_start,
    read_doc, read_lock, read_records, read_samples, records_file_problem, samples_path,
)
from mwperf.model.schema import validate_record
from mwperf.results.strict_json import loads_strict

__all__ = ["RunDir", "loads_strict", "read_records", "read_samples", "samples_path", "write_atomic", "check_new_dir",
           "open_inside", "UnsafeFile", "read_lock", "lock_owner_alive", "process_start", "shown", "RESULTS_JSONL",
           "RUN_JSON", "SAMPLES_DIR", "BASELINE_JSON", "LOCK_FILE", "read_doc", "MAX_LINE_BYTES",
           "MAX_RESULTS_BYTES", "MAX_DOC_BYTES", "MAX_SAMPLES", "records_file_problem"]


# -- writing (every file through mwperf.results.confined: never through a link) ----------------

def check_new_dir(path: Path | str, option: str = "--out", *, fresh: bool = True) -> Path:
    """``path`` as a run directory to write: UsageError when it cannot be one
    (holds results already when ``fresh``, is a file, a name too long)."""
    out = Path(path)
    try:
        if fresh and (out / RESULTS_JSONL).exists():
            raise UsageError(option, shown(str(out), 200), f"already holds {RESULTS_JSONL} (choose a new directory)")
        if out.exists() and not out.is_dir():
            raise UsageError(option, shown(str(out), 200), "exists and is not a directory")
    except OSError as exc:
        raise UsageError(option, shown(str(out), 200), f"not usable: {exc.strerror or exc}") from None
    return out


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

    def create(self, samples: bool = False) -> "RunDir":
        """The directory (and its parents; ``samples``: and its samples folder);
        StorageError when it cannot be made, or when its samples folder or
        results.jsonl is a link (what is written there would go elsewhere)."""
        make_dirs(self.path, SAMPLES_DIR if samples else "")
        refuse_link(self.jsonl)
        return self

    def remove_stale_temps(self) -> list[str]:
        """Temporary files (``*.tmp``) a killed writer left; call only as the directory's one writer."""
        removed: list[str] = []
        try:
            entries = list(os.scandir(self.path))
        except OSError:
            return removed
        for entry in entries:
            if entry.name.endswith(TMP_SUFFIX) and entry.is_file(follow_symlinks=False):
                try:
                    os.unlink(entry.path)
                    removed.append(entry.name)
                except OSError:
                    pass
        return removed

    def append(self, record: dict) -> None:
        """Validate, append as one line (fsync'ed). On a failed write the part
        written is cut off again (no torn record) and StorageError is raised."""
        validate_record(record)
        line = utf8(json.dumps(record, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n", self.jsonl)
        with signals_deferred():
            try:
                fd = open_append(self.jsonl)
            except OSError as exc:
                raise StorageError(self.jsonl, exc) from None
            end = None
            try:
                # A crash may have left a torn last line: end it, so that this
                # record starts a line of its own (the torn one is skipped on reading).
                end = os.lseek(fd, 0, os.SEEK_END)
                if end > 0 and os.pread(fd, 1, end - 1) != b"\n":
                    line = b"\n" + line
                view = memoryview(line)
                while view:
                    written = os.write(fd, view)
                    if written <= 0:  # pragma: no cover - write(2) reports a full disk as ENOSPC
                        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                    view = view[written:]
                os.fsync(fd)
            except OSError as exc:
                if end is not None:
                    try:
                        os.ftruncate(fd, end)  # the part that went out: no torn record
                        os.fsync(fd)
                    except OSError:
                        pass
                raise StorageError(self.jsonl, exc) from None
            finally:
                os.close(fd)

    def write_run_json(self, data: dict) -> None:
        with signals_deferred():
            write_atomic(self.run_json, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    def read_run_json(self) -> dict | None:
        """run.json, checked (None when missing or unusable). A run whose
        run.json says 'running' while no live mwperf owns the directory was
        killed: its status reads 'killed'."""
        doc = read_doc(self.path, RUN_JSON, RUN_JSON_TYPES)
        if doc is not None and doc.get("status") == "running" and lock_owner_alive(read_lock(self.path)) is False:
            doc["status"] = "killed"
            doc["status_note"] = "run.json said 'running', but no mwperf writes this directory any more"
        return doc

    def read_baseline(self) -> dict | None:
        """baseline.json (``mwperf baseline``), None when there is none."""
        return read_doc(self.path, BASELINE_JSON, BASELINE_TYPES)

    def write_baseline(self, doc: dict) -> Path:
        path = self.path / BASELINE_JSON
        write_atomic(path, json.dumps(doc, indent=2) + "\n")
        return path
