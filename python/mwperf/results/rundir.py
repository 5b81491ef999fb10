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
(:class:`~mwperf.errors.StorageError`).

**Reading is untrusted.** Run directories are shared (attached to bug
reports, downloaded from CI), so everything read from one is checked: files
are opened only inside the directory (no symlink or ``..`` out of it, regular
files only: no device, no FIFO that would hang), read up to a bound, and
every record is checked against the schema (types, finite numbers, a known
``schema_version``). A bad record is skipped with one warning naming its
line; nothing read raises.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import struct
from pathlib import Path
from typing import Any, Callable, Iterator

from mwperf.display import shown
from mwperf.errors import StorageError, UsageError
from mwperf.interrupts import signals_deferred
from mwperf.results.confined import TMP_SUFFIX, make_dirs, open_append, refuse_link, utf8, write_atomic
from mwperf.results.schema import SCHEMA_VERSIONS, record_errors, record_ok, validate_record
from mwperf.results.strict_json import loads_strict

__all__ = ["RunDir", "loads_strict", "read_records", "read_samples", "samples_path", "write_atomic", "check_new_dir", "open_inside",
           "read_lock", "lock_owner_alive", "RESULTS_JSONL", "RUN_JSON", "SAMPLES_DIR", "BASELINE_JSON",
           "LOCK_FILE", "read_doc", "MAX_LINE_BYTES", "MAX_RESULTS_BYTES", "MAX_DOC_BYTES", "MAX_SAMPLES"]

RESULTS_JSONL = "results.jsonl"
SAMPLES_DIR = "samples"
RUN_JSON = "run.json"
BASELINE_JSON = "baseline.json"
LOCK_FILE = ".mwperf.lock"

#: One record (mwperf writes about 4 KiB).
MAX_LINE_BYTES = 1 << 20
#: results.jsonl as a whole: some 100,000 points.
MAX_RESULTS_BYTES = 512 << 20
#: run.json, baseline.json, the lock file.
MAX_DOC_BYTES = 4 << 20
#: Samples read from one samples file (the agent keeps at most 16384).
MAX_SAMPLES = 1 << 20
#: What a record's samples_file.path may be.
SAMPLES_FILE_RE = re.compile(r"^samples/[0-9]{5,9}\.i64$")

Warn = Callable[[str], None]


def samples_path(index: int) -> str:
    """Where point ``index`` keeps its latency samples, relative to the run directory."""
    return f"{SAMPLES_DIR}/{index:05d}.i64"


# -- reading, untrusted ---------------------------------------------------------------

class UnsafeFile(Exception):
    """A file of a run directory that is not read: why, one line."""


def open_inside(directory: Path | str, relative: str) -> int:
    """A read-only descriptor of ``directory/relative``, which must be a regular
    file inside the directory (after symlinks). UnsafeFile or OSError otherwise."""
    base = os.path.realpath(directory)
    target = os.path.realpath(os.path.join(base, relative))
    if os.path.commonpath([base, target]) != base or target == base:
        raise UnsafeFile(f"{shown(relative)} leads outside the run directory")
    # O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: the
    # path was just resolved, a symlink swapped in since is refused.
    fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NOCTTY)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise UnsafeFile(f"{shown(relative)} is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_bounded(directory: Path | str, relative: str, limit: int) -> bytes:
    """The whole file, refused (UnsafeFile) when larger than ``limit``."""
    fd = open_inside(directory, relative)
    with os.fdopen(fd, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise UnsafeFile(f"{relative} is larger than {limit >> 20} MiB")
    return data


def _record_problem(record: Any) -> str | None:
    """Why ``record`` cannot be used, None when it can."""
    if not isinstance(record, dict):
        return "not a JSON object"
    version = record.get("schema_version")
    if "schema_version" not in record:
        return "no schema_version"
    if type(version) is not int:
        return f"schema_version {shown(repr(version), 20)}: not a schema version"
    if version not in SCHEMA_VERSIONS:
        known = ", ".join(map(str, SCHEMA_VERSIONS))
        return f"schema_version {version}: this mwperf reads version {known} (a newer mwperf wrote it?)"
    info = record.get("samples_file")
    if isinstance(info, dict) and not (isinstance(info.get("path"), str) and SAMPLES_FILE_RE.match(info["path"])):
        return (f"samples_file.path {shown(info.get('path'))} is not a samples file of this run directory "
                f"(samples/NNNNN.i64)")
    if record_ok(record):
        return None
    errors = record_errors(record)
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{shown(errors[0] if errors else 'does not match the results schema', 160)}{more}"


#: Lines already found valid (their digest): a run re-read after each point is checked once.
_VALID_LINES: set[bytes] = set()
#: Warnings already given (path, line, message): each bad line is named once per process.
_WARNED: set[tuple[str, str]] = set()


def _lines(handle, path: str, warn: Warn) -> Iterator[tuple[int, bytes]]:
    """(number, line) of a results.jsonl, each line at most MAX_LINE_BYTES and
    the file at most MAX_RESULTS_BYTES; what is over is skipped with a warning."""
    total = 0
    number = 0
    while True:
        line = handle.readline(MAX_LINE_BYTES + 1)
        if not line:
            return
        number += 1
        total += len(line)
        if len(line) > MAX_LINE_BYTES:
            warn(f"{path}:{number}: longer than {MAX_LINE_BYTES >> 20} MiB, skipped")
            while line and not line.endswith(b"\n") and total <= MAX_RESULTS_BYTES:
                line = handle.readline(MAX_LINE_BYTES + 1)
                total += len(line)
        elif total <= MAX_RESULTS_BYTES:
            yield number, line
        if total > MAX_RESULTS_BYTES:
            warn(f"{path}: larger than {MAX_RESULTS_BYTES >> 20} MiB: only the records before line {number} are read")
            return


def read_records(directory: Path | str, warn: Warn | None = None, name: str = RESULTS_JSONL) -> list[dict]:
    """The usable records of ``results.jsonl`` (or of another records file
    ``name`` in ``directory``): a torn, corrupted or unknown line is skipped
    and named through ``warn(message)`` (once per process); a missing or
    unsafe file gives no records and one warning."""
    path = os.path.join(str(directory), name)

    def say(message: str) -> None:
        if warn is None:
            return
        key = (os.path.realpath(path), message)
        if key not in _WARNED:
            _WARNED.add(key)
            warn(message)

    try:
        fd = open_inside(directory, name)
    except FileNotFoundError:
        return []
    except (UnsafeFile, OSError) as exc:
        say(f"{path}: not read: {exc.strerror if isinstance(exc, OSError) and exc.strerror else exc}")
        return []
    records = []
    with os.fdopen(fd, "rb") as handle:
        for number, line in _lines(handle, path, say):
            if not line.strip():
                continue
            digest = hashlib.blake2b(line, digest_size=16).digest()
            try:
                record = loads_strict(line)
            except (ValueError, RecursionError) as exc:
                detail = f" ({exc})" if "JSON allows" in str(exc) or "out of range" in str(exc) else ""
                say(f"{path}:{number}: not a JSON record{detail}, skipped")
                continue
            if digest not in _VALID_LINES:
                problem = _record_problem(record)
                if problem is not None:
                    say(f"{path}:{number}: {problem}, skipped")
                    continue
                if len(_VALID_LINES) > 200_000:
                    _VALID_LINES.clear()
                _VALID_LINES.add(digest)
            records.append(record)
    return records


def read_samples(directory: Path | str, record: dict) -> list[float] | None:
    """The point's headline latency samples in µs (little-endian int64 ns, as
    the agent wrote them), or None when it has none, or its file is gone or
    is not a samples file inside the run directory. At most the record's
    count (and MAX_SAMPLES) are read."""
    info = record.get("samples_file") if isinstance(record, dict) else None
    if not isinstance(info, dict):
        return None
    relative, count = info.get("path"), info.get("count")
    if not (isinstance(relative, str) and SAMPLES_FILE_RE.match(relative)):
        return None
    if not (type(count) is int and count > 0):
        return None
    try:
        fd = open_inside(directory, relative)
    except (UnsafeFile, OSError):
        return None
    with os.fdopen(fd, "rb") as handle:
        try:
            data = handle.read(min(count, MAX_SAMPLES) * 8)
        except OSError:
            return None
    n = len(data) // 8
    return [v / 1000.0 for v in struct.unpack(f"<{n}q", data[:n * 8])]


#: run.json: what the report and the runner read, and of what type. A value
#: of another type is dropped on reading (it would break what reads it).
_RUN_JSON_TYPES: dict[str, tuple] = {
    **{k: (dict,) for k in ("agent", "sysctl", "git", "imported", "points", "options", "plan_doc", "floor")},
    **{k: (list,) for k in ("command", "adapters", "resumed")},
    **{k: (str,) for k in ("status", "started", "finished", "run_id", "mwperf_version", "hostname", "kernel",
                           "cpu_model", "governor", "governor_note", "clocksource")},
}
_BASELINE_TYPES: dict[str, tuple] = {"tcp": (dict,), "udp": (dict,), "link": (dict,)}
_NUMBERS = (int, float)


def _shape(doc: Any, types: dict[str, tuple]) -> dict | None:
    """``doc`` with every known key of the wrong type dropped; None if not an object."""
    if not isinstance(doc, dict):
        return None
    out = {k: v for k, v in doc.items() if k not in types or v is None or isinstance(v, types[k])}
    if isinstance(out.get("command"), list):
        out["command"] = [a for a in out["command"] if isinstance(a, str)]
    if isinstance(out.get("adapters"), list):
        out["adapters"] = [a for a in out["adapters"] if isinstance(a, dict)]
    if isinstance(out.get("points"), dict):
        out["points"] = {k: v for k, v in out["points"].items() if isinstance(v, int) and not isinstance(v, bool)}
    for side in ("tcp", "udp"):
        if isinstance(out.get(side), dict):
            out[side] = {k: v for k, v in out[side].items()
                         if k not in ("gbps", "lost_percent") or v is None
                         or (isinstance(v, _NUMBERS) and not isinstance(v, bool))}
    return out


def read_doc(directory: Path | str, name: str) -> Any:
    """The JSON document ``name`` of the run directory, read as untrusted
    (inside it, a regular file, at most MAX_DOC_BYTES, strict JSON); None
    when it is missing or unusable."""
    try:
        return loads_strict(_read_bounded(directory, name, MAX_DOC_BYTES))
    except (OSError, UnsafeFile, ValueError, RecursionError):
        return None


def _read_doc(directory: Path, name: str, types: dict[str, tuple]) -> dict | None:
    return _shape(read_doc(directory, name), types)


# -- the lock file's contents (the locking itself is mwperf.execute.lock's) ----------------

def read_lock(directory: Path | str) -> dict | None:
    """What the run directory's lock file says about its owner, if anything."""
    try:
        doc = loads_strict(_read_bounded(directory, LOCK_FILE, 64 << 10))
    except (OSError, UnsafeFile, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def process_start(pid: int) -> int | None:
    """The start time of process ``pid`` (clock ticks since boot), None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    if fields[0] == b"Z":
        return None
    return int(fields[19])


def lock_owner_alive(info: dict | None) -> bool | None:
    """True when the owner a lock file names still runs (same pid and start
    time, on this host), False when it is gone, None when that cannot be told
    (another host, no pid)."""
    if not info:
        return False
    pid, start = info.get("pid"), info.get("start")
    if type(pid) is not int or pid <= 0:
        return None
    if info.get("host") not in (None, os.uname().nodename):
        return None
    now = process_start(pid)
    return now is not None and (start is None or now == start)


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
        removed = []
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
        doc = _read_doc(self.path, RUN_JSON, _RUN_JSON_TYPES)
        if doc is not None and doc.get("status") == "running" and lock_owner_alive(read_lock(self.path)) is False:
            doc["status"] = "killed"
            doc["status_note"] = "run.json said 'running', but no mwperf writes this directory any more"
        return doc

    def read_baseline(self) -> dict | None:
        """baseline.json (``mwperf baseline``), None when there is none."""
        return _read_doc(self.path, BASELINE_JSON, _BASELINE_TYPES)

    def write_baseline(self, doc: dict) -> Path:
        path = self.path / BASELINE_JSON
        write_atomic(path, json.dumps(doc, indent=2) + "\n")
        return path
