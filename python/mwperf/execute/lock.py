"""One writer per run directory, one measurement per machine.

Two locks, each a file locked with ``flock(2)`` (the kernel releases it when
its owner dies, however it dies) that names its owner (pid, its start time,
host, command line, since when) for the message of whoever is refused:

* the **run directory's** (``DIR/.mwperf.lock``): a second ``mwperf sweep
  --resume DIR`` (or a run into the same ``--out``) is refused with the owner
  named, so two writers never duplicate points or overwrite each other's
  samples. A lock file whose owner is gone (a killed run) is taken over,
  with a note, and the temporary files that run left are removed;
* the **machine's** (``$MWPERF_LOCK_DIR/mwperf-measure.lock``, by default in
  ``/run/lock``): two benchmarks on one machine perturb each other and make
  both wrong, so a measurement is refused while another mwperf measurement
  runs here, unless ``--force`` (then it warns, and measures beside it).
  Runs whose agents run on other hosts (``--hosts``) take only the first.

Both files are removed when their owner is done. The test suite points
``MWPERF_LOCK_DIR`` at a directory of its own (``python/tests/conftest.py``):
its short measurements neither wait for a user's nor are refused by one.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shlex
import stat
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, TextIO

from mwperf.errors import Busy, StorageError
from mwperf.results.rundir import LOCK_FILE, RunDir, lock_owner_alive, loads_strict, process_start, shown

__all__ = ["hold", "measuring", "machine_lock_path", "owner_text", "ENV_LOCK_DIR", "MACHINE_LOCK", "LOCK_FILE"]

ENV_LOCK_DIR = "MWPERF_LOCK_DIR"
MACHINE_LOCK = "mwperf-measure.lock"
DEFAULT_LOCK_DIR = "/run/lock"


def machine_lock_path() -> Path:
    """Where the machine's measurement lock is: $MWPERF_LOCK_DIR, else
    /run/lock (when writable), else the temporary directory."""
    chosen = os.environ.get(ENV_LOCK_DIR)
    if chosen:
        return Path(chosen) / MACHINE_LOCK
    if os.path.isdir(DEFAULT_LOCK_DIR) and os.access(DEFAULT_LOCK_DIR, os.W_OK | os.X_OK):
        return Path(DEFAULT_LOCK_DIR) / MACHINE_LOCK
    return Path(tempfile.gettempdir()) / MACHINE_LOCK


def _me(argv: list[str] | None, cores: str | None) -> dict:
    pid = os.getpid()
    return {"pid": pid, "start": process_start(pid), "host": os.uname().nodename,
            "command": _command(argv), "since": time.strftime("%Y-%m-%d %H:%M:%S"), "cores": cores}


def _command(argv: list[str] | None) -> str:
    argv = list(argv if argv is not None else sys.argv)
    if argv and argv[0].endswith(("__main__.py", "/mwperf")):
        argv[0] = "mwperf"
    return " ".join(shlex.quote(a) for a in argv)


def owner_text(info: dict | None) -> str:
    """The owner a lock file names, as one line (every value escaped)."""
    if not info or type(info.get("pid")) is not int:
        return "owner not known"
    parts = [f"pid {info['pid']}"]
    if info.get("host") not in (None, os.uname().nodename):
        parts[0] += f" on {shown(info['host'], 60)}"
    if isinstance(info.get("command"), str) and info["command"]:
        parts.append(shown(info["command"], 160))
    if isinstance(info.get("cores"), str) and info["cores"]:
        parts.append(f"cores {shown(info['cores'], 20)}")
    if isinstance(info.get("since"), str):
        parts.append(f"since {shown(info['since'], 30)}")
    return ", ".join(parts)


def _read_info(fd: int) -> dict | None:
    try:
        data = os.pread(fd, 64 << 10, 0)
        info = loads_strict(data) if data.strip() else None
    except (OSError, ValueError, RecursionError):
        return None
    return info if isinstance(info, dict) else None


class _FileLock:
    """An exclusive, non-blocking flock on ``path`` (created if missing)."""

    def __init__(self, path: Path, mode: int):
        self.path, self.mode = path, mode
        self.fd: int | None = None

    def _open(self) -> int:
        flags = os.O_RDWR | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
        try:
            fd = os.open(self.path, flags)
        except FileNotFoundError:
            fd = os.open(self.path, flags | os.O_CREAT | os.O_EXCL, self.mode)
            try:
                os.fchmod(fd, self.mode)  # not narrowed by the umask: others must be able to lock it too
            except OSError:
                pass
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise OSError(errno.EINVAL, "not a regular file (refusing to use it as a lock)", str(self.path))
        return fd

    def acquire(self) -> tuple[bool, dict | None]:
        """(True, what the file said before: a previous owner) or (False, the owner)."""
        for _ in range(100):
            try:
                fd = self._open()
            except FileExistsError:
                continue  # created meanwhile by another: open that one
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                info = _read_info(fd)
                os.close(fd)
                return False, info
            except OSError:
                os.close(fd)
                raise
            # Locked; but if the owner before removed the file meanwhile, this is a stale inode.
            try:
                same = os.stat(self.path, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if not same:
                os.close(fd)
                continue
            self.fd = fd
            return True, _read_info(fd)
        raise OSError(errno.EAGAIN, "the lock file keeps changing", str(self.path))  # pragma: no cover

    def write_owner(self, info: dict) -> None:
        """Name the owner in the file (best effort: a full disk leaves it unnamed)."""
        if self.fd is None:
            return
        data = (json.dumps(info) + "\n").encode()
        try:
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, data, 0)
        except OSError:
            try:
                os.ftruncate(self.fd, 0)
            except OSError:
                pass

    def release(self) -> None:
        if self.fd is None:
            return
        try:
            if os.stat(self.path, follow_symlinks=False).st_ino == os.fstat(self.fd).st_ino:
                os.unlink(self.path)
        except OSError:
            pass
        os.close(self.fd)  # closing releases the flock
        self.fd = None


def _note(err: TextIO | None, text: str) -> None:
    stream = err or sys.stderr
    stream.write(f"mwperf: {text}\n")
    stream.flush()


@dataclass
class Held:
    """How a run holds this machine: ``held`` (alone), ``forced: ...`` (beside
    another measurement, named), ``unavailable: ...`` or ``not taken: ...``."""

    machine: str


@contextmanager
def hold(directory: Path | str, *, measure: bool = True, force: bool = False, cores: str | None = None,
         argv: list[str] | None = None, err: TextIO | None = None) -> Iterator[Held]:
    """Be the one writer of run directory ``directory`` (created if missing)
    and, when ``measure``, the one measurement on this machine (``force``:
    measure even beside another, with a warning). Busy names the owner of a
    lock that is held; StorageError when the directory cannot be written.
    Yields how the machine was held (for run.json: a forced run says so)."""
    rundir = RunDir(directory).create()
    me = _me(argv, cores)
    run_lock = _FileLock(rundir.path / LOCK_FILE, 0o644)
    try:
        got, info = run_lock.acquire()
    except OSError as exc:
        raise StorageError(rundir.path, exc) from None
    if not got:
        raise Busy(f"{shown(str(rundir.path), 200)}: another mwperf is writing this run directory "
                   f"({owner_text(info)}); wait for it to finish, or stop it")
    machine = None
    held = Held("not taken: the agents run on other hosts" if not measure else "held")
    try:
        run_lock.write_owner(me)
        if info and lock_owner_alive(info) is not True:
            _note(err, f"{shown(str(rundir.path), 200)}: taking over the lock of a run that is gone "
                       f"({owner_text(info)})")
        left = rundir.remove_stale_temps()
        if left:
            _note(err, f"{shown(str(rundir.path), 200)}: removed {', '.join(left)} left by a killed run")
        if measure:
            machine, held.machine = _machine(me, force, err)
        yield held
    finally:
        if machine is not None:
            machine.release()
        run_lock.release()


@contextmanager
def measuring(*, force: bool = False, argv: list[str] | None = None, err: TextIO | None = None) -> Iterator[str]:
    """Be the one measurement on this machine, writing no run directory
    (``mwperf floor`` without --out); yields how the machine is held."""
    machine, how = _machine(_me(argv, None), force, err)
    try:
        yield how
    finally:
        if machine is not None:
            machine.release()


def _machine(me: dict, force: bool, err: TextIO | None) -> tuple[_FileLock | None, str]:
    """The machine's measurement lock (None when it cannot be taken: forced, or
    no place for it), and how the machine is held, in words."""
    path = machine_lock_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        lock = _FileLock(path, 0o666)
        got, info = lock.acquire()
    except OSError as exc:
        _note(err, f"warning: cannot take the machine's measurement lock {path}: {exc.strerror or exc}; "
                   f"another mwperf measurement could run beside this one")
        return None, f"unavailable: {path}: {exc.strerror or exc}"
    if got:
        lock.write_owner(me)
        return lock, "held"
    if not force:
        raise Busy(f"another mwperf measurement holds this machine's benchmark cores ({owner_text(info)}): "
                   f"two benchmarks on one machine make both wrong; wait for it to finish, or pass --force "
                   f"to measure beside it")
    _note(err, f"warning: measuring beside another mwperf measurement ({owner_text(info)}) because of --force: "
               f"both are perturbed")
    return None, f"forced: measured beside another mwperf measurement ({owner_text(info)})"
