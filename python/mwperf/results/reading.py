"""Reading a run directory, as untrusted input.

Run directories are shared (attached to bug reports, downloaded from CI), so
everything read from one is checked: files are opened only inside the
directory (no symlink or ``..`` out of it, regular files only: no device, no
FIFO that would hang), read up to a bound, and every record is checked
against the schema of its version (types, finite numbers, integers
within 64 bits, a known ``schema_version``) and upgraded to the current one
(:mod:`mwperf.model.upgrade`): every reader sees version 2. A bad record
is skipped with one warning naming its line; records that contradict
themselves or each other refuse the directory (:mod:`mwperf.results.checks`,
:class:`mwperf.errors.Refused`): never a number shown that no measurement
gave, never one launch counted twice.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import struct
from pathlib import Path
from typing import Any, Callable, Iterator

from mwperf.display import shown
from mwperf.model.provenance import SAMPLES_DIR, SAMPLES_FILE_RE, samples_path
from mwperf.model.record import Record
from mwperf.model.schema import SCHEMA_VERSIONS, record_errors, record_ok
from mwperf.model.upgrade import add_missing_options, current
from mwperf.results.checks import check_records
from mwperf.results.strict_json import loads_strict

__all__ = ["read_records", "read_samples", "samples_path", "read_lock", "lock_owner_alive", "process_start",
           "open_inside", "UnsafeFile", "read_doc", "records_file_problem", "RUN_JSON_TYPES", "BASELINE_TYPES",
           "RESULTS_JSONL", "RUN_JSON", "SAMPLES_DIR", "BASELINE_JSON", "LOCK_FILE", "MAX_LINE_BYTES",
           "MAX_RESULTS_BYTES", "MAX_DOC_BYTES", "MAX_SAMPLES"]

RESULTS_JSONL = "results.jsonl"
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

Warn = Callable[[str], object]


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


#: A run of 19 digits or more: a number that may not fit 64 bits (checked then on the parsed record).
_LONG_DIGITS = re.compile(rb"[0-9]{19}")
_INT64 = (-(1 << 63), (1 << 63) - 1)


def _beyond_int64(value: Any, path: str = "") -> str | None:
    """The path of an integer of ``value`` that no 64-bit integer holds (what
    the agent counts in), None when there is none."""
    if isinstance(value, int) and not isinstance(value, bool):
        return path or "(record)" if not _INT64[0] <= value <= _INT64[1] else None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = _beyond_int64(item, f"{path}.{key}" if path else str(key))
        if found:
            return found
    return None


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


_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"))


def records_file_problem(directory: Path | str, name: str = RESULTS_JSONL) -> str | None:
    """Why ``directory`` holds no records file to read, in words (``no results.jsonl
    there``, ``results.jsonl there is a FIFO (named pipe), not a file``); None when it does."""
    path = os.path.join(str(directory), name)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return f"{name} there is a link to nothing" if os.path.islink(path) else f"no {name} there"
    except OSError as exc:
        return f"{name} there cannot be read: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    kind = next((what for test, what in _KINDS if test(mode)), "not a regular file")
    return f"{name} there is {kind}, not a file"


def read_records(directory: Path | str, warn: Warn | None = None, name: str = RESULTS_JSONL) -> list[Record]:
    """The usable records of ``results.jsonl`` (or of another records file
    ``name`` in ``directory``), typed (:class:`~mwperf.model.record.Record`):
    the one loader of a run directory. A torn, corrupted or unknown line is skipped
    and named through ``warn(message)`` (once per process); a missing or
    unsafe file gives no records and one warning. Records that contradict
    themselves or each other (a launch recorded twice, more received than
    sent, a negative percentile: :mod:`mwperf.results.checks`) refuse the
    run directory as a whole: :class:`~mwperf.errors.Refused`, one line naming
    the point and the field."""
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
            if _LONG_DIGITS.search(line):
                try:
                    beyond = _beyond_int64(record)
                except RecursionError:
                    beyond = "(nested too deep)"
                if beyond:
                    say(f"{path}:{number}: {shown(beyond, 60)}: an integer beyond 64 bits, skipped")
                    continue
            if isinstance(record, dict) and record.get("schema_version") == SCHEMA_VERSIONS[-1]:
                add_missing_options(record)  # written before an option was added to the agent's table
            if digest not in _VALID_LINES:
                problem = _record_problem(record)
                if problem is not None:
                    say(f"{path}:{number}: {problem}, skipped")
                    continue
                if len(_VALID_LINES) > 200_000:
                    _VALID_LINES.clear()
                _VALID_LINES.add(digest)
            records.append(Record.from_json(current(record)))
    # the records as a whole: each a measurement, each launch once, a point's launches alike (Refused otherwise)
    return check_records(str(directory) if name == RESULTS_JSONL else path, records, str(directory))


def read_samples(directory: Path | str, record: Record) -> list[float] | None:
    """The point's headline latency samples in µs (little-endian int64 ns, as
    the agent wrote them), or None when it has none, or its file is gone or
    is not a samples file inside the run directory. At most the record's
    count (and MAX_SAMPLES) are read."""
    info = record.samples_file
    if info is None:
        return None
    relative, count = info.path, info.count
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


class _Each:
    """A type spec for every item of a list (or every value of an object)."""

    def __init__(self, spec: Any):
        self.spec = spec


_STR, _INT, _NUMBER, _BOOL = (str,), (int,), (int, float), (bool,)
#: run.json: what the report, ls, compare, the store and the runner read, and of what type
#: (nested: an object's own spec, _Each for a list's items or an object's values). A value of
#: another type is dropped on reading (it would break what reads it, or reach a page as markup).
RUN_JSON_TYPES: dict[str, Any] = {
    **{k: (dict,) for k in ("options", "plan_doc", "floor")},
    "agent": {k: _STR for k in ("path", "version", "build_type", "compiler")},
    "git": {"sha": _STR, "dirty": _BOOL},
    "sysctl": _Each((int, float, str)),  # a value /proc/sys holds that is no number is kept as its text
    "points": _Each(_INT),
    "command": _Each(_STR),
    "resumed": (list,),
    "adapters": _Each({"name": _STR, "version": _STR, "license": _STR}),
    "imported": {"tool": _STR, "file": _STR},
    **{k: _STR for k in ("status", "started", "finished", "run_id", "mwperf_version", "hostname", "kernel",
                         "cpu_model", "governor", "governor_note", "clocksource", "python", "machine_lock",
                         "status_note")},
    **{k: _INT for k in ("vcpus", "schema_version")},
    "guest_halt_poll_ns": (int, str),
}
#: baseline.json (``mwperf baseline``): every field the report shows.
BASELINE_TYPES: dict[str, Any] = {
    "tcp": {"gbps": _NUMBER}, "udp": {"gbps": _NUMBER, "lost_percent": _NUMBER},
    "link": {"profile": _STR}, "tool": _STR, "time": _STR, "duration_s": _NUMBER,
}


def _fits(value: Any, spec: tuple) -> bool:
    """``value`` is of one of ``spec``'s types (a bool is no number, as in JSON)."""
    if isinstance(value, bool):
        return bool in spec
    return isinstance(value, spec)


def _typed(value: Any, spec: Any) -> tuple[bool, Any]:
    """(kept, value): ``value`` as ``spec`` allows it (None is always allowed)."""
    if value is None:
        return True, None
    if isinstance(spec, tuple):
        return _fits(value, spec), value
    if isinstance(spec, _Each):
        if isinstance(value, list):
            return True, [v for ok, v in (_typed(item, spec.spec) for item in value) if ok and v is not None]
        if isinstance(value, dict):
            return True, {k: v for k, (ok, v) in ((k, _typed(item, spec.spec)) for k, item in value.items()) if ok}
        return False, None
    if not isinstance(value, dict):
        return False, None
    return True, _shape(value, spec)


def _shape(doc: Any, types: dict[str, Any]) -> dict | None:
    """``doc`` with every known key of the wrong type dropped (recursively); None if not an object."""
    if not isinstance(doc, dict):
        return None
    out = {}
    for key, value in doc.items():
        kept, value = _typed(value, types[key]) if key in types else (True, value)
        if kept:
            out[key] = value
    return out


def read_doc(directory: Path | str, name: str, types: dict[str, tuple] | None = None) -> Any:
    """The JSON document ``name`` of the run directory, read as untrusted
    (inside it, a regular file, at most MAX_DOC_BYTES, strict JSON); with
    ``types``, an object with every known key of the wrong type dropped, at
    every depth (see :data:`RUN_JSON_TYPES`). None when it is missing or unusable."""
    try:
        doc = loads_strict(_read_bounded(directory, name, MAX_DOC_BYTES))
    except (OSError, UnsafeFile, ValueError, RecursionError):
        return None
    return doc if types is None else _shape(doc, types)


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
