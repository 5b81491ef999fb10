"""Remove stale middleware shared-memory segments (DEVELOPERS rule: segments
go after every run, and after a crash at the latest at the start of the next).

Four steps, all safe while other middleware processes run on the host:

1. ``fastdds shm clean`` when the ``fastdds`` command exists (Debian
   fastdds-tools): Fast DDS's own check, which removes only the zombie
   segments and ports (nobody holds their lock);
2. the files of the shared-memory directory that match what the adapters
   say they may leave (``leftovers`` in ``mwperf-agent list``: Fast DDS's
   segments, zenoh's, iceoryx2's, the LTTng-UST wait segments of ROS 2's
   tracing library) and that no live process has open (``/proc/*/fd``) or
   mapped (``/proc/*/maps``) nor locks (``flock``: zenoh's holders keep a
   shared lock on its segments for as long as they map them). When some
   process cannot be inspected (not root), nothing is removed in this step:
   an unreferenced file cannot be told from one that process uses. Age is
   no guide: a segment is created by opening it (``shm_open``), so its
   creator has it open from the first instant, and the directory is read
   before the processes are, so a file listed has its owner seen; the file
   is removed holding an exclusive lock on it, and only if the name still
   names that file. Only a file this process cannot open (no lock can be
   tried: not root, its mode 000 while its creator sets it up) waits until
   it is ``min_age_s`` old;
3. the files and folders they name elsewhere (iceoryx2's root folder, the
   Fast DDS profile a ros2 agent writes in /tmp), this user's own, when no
   agent runs;
4. ``mwperf-agent cleanup``: each adapter removes what its own middleware
   leaves and globs cannot name (Connext's System V segments and semaphores,
   the connext adapter's XML files), where their process is gone.
"""

from __future__ import annotations

import errno
import fcntl
import fnmatch
import glob
import json
import os
import shutil
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from mwperf.execute import keystore, netns, services

__all__ = ["SHM_DIR", "PROC_DIR", "OWN_TRACING", "notices", "referenced_paths", "stale_segments", "clean_shm",
           "fastdds_shm_clean", "agent_clean_stale", "Leftovers", "clean_leftovers", "clean_agent_files",
           "shm_patterns"]

SHM_DIR = Path("/dev/shm")
PROC_DIR = Path("/proc")
MIN_AGE_S = 1.0


def shm_patterns(leftovers: Iterable[str], shm_dir: Path = SHM_DIR) -> tuple[str, ...]:
    """The file-name patterns of ``leftovers`` (absolute globs) that lie in ``shm_dir``."""
    return tuple(dict.fromkeys(os.path.basename(p) for p in leftovers if os.path.dirname(p) == str(shm_dir)))


def _maps_paths(text: str) -> set[str]:
    paths = set()
    for line in text.splitlines():
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[5].startswith("/"):
            path = fields[5].strip()
            if path.endswith(" (deleted)"):
                path = path[: -len(" (deleted)")]
            paths.add(path)
    return paths


def referenced_paths(proc: Path = PROC_DIR) -> tuple[set[str], bool]:
    """(paths any live process has open or mapped, True if every process
    could be inspected)."""
    paths: set[str] = set()
    complete = True
    try:
        entries = [e for e in os.listdir(proc) if e.isdigit()]
    except OSError:
        return paths, False
    for entry in entries:
        base = proc / entry
        try:
            fds = os.listdir(base / "fd")
        except FileNotFoundError:
            continue  # gone meanwhile
        except OSError:
            if not _kernel_thread(base):
                complete = False
            continue
        for fd in fds:
            try:
                paths.add(os.readlink(base / "fd" / fd))
            except OSError:
                continue
        try:
            paths |= _maps_paths((base / "maps").read_text(errors="replace"))
        except OSError:
            # A non-dumpable process (e.g. a sandbox's init) may hide its maps
            # even from root while its fds are listed: its open files still count.
            continue
    return paths, complete


def _kernel_thread(base: Path) -> bool:
    """Kernel threads (PF_KTHREAD) have no files; their fd lists are not readable by other users."""
    try:
        fields = (base / "stat").read_text().rsplit(")", 1)[1].split()
        return bool(int(fields[6]) & 0x00200000)
    except (OSError, IndexError, ValueError):
        return False


def stale_segments(patterns: tuple[str, ...], shm_dir: Path = SHM_DIR, proc: Path = PROC_DIR,
                   min_age_s: float = MIN_AGE_S) -> list[Path]:
    """Segments of ``patterns`` in ``shm_dir`` that no live process has open
    or mapped (their lock is :func:`_remove_unlocked`'s to try). ``min_age_s``
    only for a file that cannot be opened (see the module's step 2)."""
    try:
        names = sorted(os.listdir(shm_dir))
    except OSError:
        return []
    candidates = [shm_dir / n for n in names if any(fnmatch.fnmatchcase(n, p) for p in patterns)]
    if not candidates:
        return []
    referenced, complete = referenced_paths(proc)
    if not complete:
        return []
    now = time.time()
    stale = []
    for path in candidates:
        try:
            st = path.lstat()
        except OSError:
            continue
        if str(path) in referenced or os.path.realpath(path) in referenced:
            continue
        if not _openable(path) and now - max(st.st_mtime, st.st_ctime) < min_age_s:
            continue
        stale.append(path)
    return stale


def _openable(path: Path) -> bool:
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC))
        return True
    except OSError as e:
        return e.errno == errno.ELOOP  # a link: removed, never followed


def _remove_unlocked(path: Path) -> bool:
    """Unlink ``path`` unless some process holds a lock on it (flock: zenoh's
    segments), holding an exclusive lock meanwhile so that no holder takes
    one in between; only while the name still names the file locked."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    except OSError as e:
        if e.errno not in (errno.ELOOP, errno.EACCES, errno.EPERM):
            return False
        try:  # a link (never followed), or a file no lock can be tried on (stale_segments aged it)
            path.unlink()
            return True
        except OSError:
            return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return False  # a holder keeps its lock: live
        held, named = os.fstat(fd), path.lstat()
        if (held.st_dev, held.st_ino) != (named.st_dev, named.st_ino):
            return False  # replaced meanwhile: not the file looked at
        path.unlink()
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Leftovers:
    """What crashed runs left and was removed, by kind."""

    namespaces: list[str]
    segments: list[str]
    services: list[str]


#: What the middlewares' own tracing leaves in every run that loads it (LTTng-UST's wait segments, of ROS 2's
#: tracing library): removing them is routine, said only when asked (``--verbose``).
OWN_TRACING = ("lttng-ust-wait-*",)


#: The segments' line names as many as this many columns hold (a terminal of 100 columns shows it on one line).
NOTICE_WIDTH = 100


def notices(left: Leftovers, when: str, verbose: bool = False) -> list[str]:
    """What was removed ``when``, one line a kind (the segments': of at most :data:`NOTICE_WIDTH` columns, the
    shortest names first, but every name when ``verbose``); the middlewares' own tracing segments
    (:data:`OWN_TRACING`) only when ``verbose``."""
    from mwperf.display import shown

    lines = []
    if left.namespaces:
        lines.append(f"mwperf: removed {len(left.namespaces)} namespace(s) left by a crashed run: "
                     f"{', '.join(left.namespaces)}")
    if left.services:
        lines.append(f"mwperf: removed what {len(left.services)} service(s) of a crashed run left: "
                     f"{', '.join(left.services)}")
    segments = [name for name in sorted(left.segments)
                if verbose or not any(fnmatch.fnmatchcase(name, p) for p in OWN_TRACING)]
    if not verbose:  # the shortest first: as many as one line holds
        segments.sort(key=len)
    if segments:
        line = f"mwperf: removed {len(segments)} stale shared-memory segment(s) {when}:"
        for i, name in enumerate(segments):  # with --verbose every name, else those one line of NOTICE_WIDTH holds
            more = f" {shown(name)}{',' if i + 1 < len(segments) else ''}"  # names anyone could have given them
            if not verbose and len(line) + len(more) + (4 if i + 1 < len(segments) else 0) > NOTICE_WIDTH:
                line += " ..."
                break
            line += more
        lines.append(line)
    return lines


def clean_leftovers(leftovers: Iterable[str] = (), agent: str | None = None) -> Leftovers:
    """Remove what crashed runs left: their namespaces (their controller gone),
    unreferenced shared-memory segments and the other files of ``leftovers``
    (what the adapters say they may leave), what their services left, and
    (given the agent) what its adapters alone know how to find."""
    leftovers = tuple(leftovers)
    return Leftovers(netns.remove_stale(), clean_shm(shm_patterns(leftovers)) + clean_agent_files(leftovers)
                     + agent_clean_stale(agent) + keystore.clean_stale(), services.clean_stale())


#: What runs an agent: the agent (and its companions) and its unit tests.
AGENT_PROGRAMS = ("mwperf-agent", "mwperf_agent_tests")


def _is_agent(pid_dir: Path) -> bool:
    """A process running an agent, by its program's file name: its comm is no
    guide (the agent names its main thread mwperf-main; a test binary's name is
    cut to 15 characters)."""
    try:
        argv0 = (pid_dir / "cmdline").read_bytes().split(b"\0", 1)[0].decode(errors="replace")
    except OSError:
        return False
    return os.path.basename(argv0).startswith(AGENT_PROGRAMS)


def agent_clean_stale(agent: str | None, timeout: float = 30.0) -> list[str]:
    """``mwperf-agent cleanup``: what each built adapter removed, as ``mw: what``
    (nothing when there is no agent, or one that predates the command)."""
    if agent is None:
        return []
    try:
        done = subprocess.run([agent, "cleanup"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                              timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return []
    removed = []
    for line in done.stdout.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == "cleaned" and isinstance(event.get("removed"), list):
            removed += [f"{event.get('mw')}: {what}" for what in event["removed"]]
    return removed


def clean_agent_files(leftovers: Iterable[str], proc: Path = PROC_DIR, shm_dir: Path = SHM_DIR) -> list[str]:
    """The files and folders of ``leftovers`` outside ``shm_dir`` (absolute
    globs: iceoryx2's root, a ros2 agent's profile), this user's own only:
    a file when no live process has it open or mapped (an adapter holds its
    files open while it uses them: the ros2 agent its profile), so that an
    agent running meanwhile (another run, a unit test) keeps no killed one's;
    a folder when no agent runs (a live one's files are its own)."""
    patterns = [p for p in leftovers if os.path.dirname(p) != str(shm_dir)]
    found = sorted({Path(f) for p in patterns for f in glob.glob(p)})
    if not found:
        return []
    referenced: set[str] | None = None
    agent_runs: bool | None = None
    removed: list[str] = []
    for path in found:
        try:
            st = path.lstat()
            if st.st_uid != os.geteuid():
                continue
            if stat.S_ISDIR(st.st_mode):
                if agent_runs is None:
                    agent_runs = _an_agent_runs(proc)
                if agent_runs:
                    continue
                shutil.rmtree(path)
            else:
                if referenced is None:
                    paths, complete = referenced_paths(proc)
                    referenced = paths if complete else None
                    if referenced is None:
                        return removed  # a process that cannot be inspected may hold any of them
                if str(path) in referenced:
                    continue
                path.unlink()  # a link is removed, never followed
            removed.append(str(path))
        except OSError:
            continue
    return removed


def _an_agent_runs(proc: Path) -> bool:
    try:
        entries = os.listdir(proc)
    except OSError:
        return True  # cannot tell: keep what may be a live agent's
    return any(entry.isdigit() and _is_agent(proc / entry) for entry in entries)


def fastdds_shm_clean(timeout: float = 20.0) -> bool:
    """Run ``fastdds shm clean`` if the command exists; True if it ran fine."""
    tool = shutil.which("fastdds")
    if tool is None:
        return False
    try:
        done = subprocess.run([tool, "shm", "clean"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return False
    return done.returncode == 0


def _fastdds_segments(shm_dir: Path) -> bool:
    """Fast DDS's segments, ports, locks or semaphores are in ``shm_dir``."""
    try:
        return any("fastrtps" in name or "fast_datasharing" in name for name in os.listdir(shm_dir))
    except OSError:
        return True  # cannot tell: let its tool look


def clean_shm(patterns: tuple[str, ...], shm_dir: Path = SHM_DIR, proc: Path = PROC_DIR, *,
              use_fastdds: bool = True, min_age_s: float = MIN_AGE_S) -> list[str]:
    """Remove stale segments; returns the names of the files this step removed
    (what ``fastdds shm clean`` removed is not listed)."""
    if use_fastdds and shm_dir == SHM_DIR and _fastdds_segments(shm_dir):
        fastdds_shm_clean()  # a Python program of ~0.3 s: only when Fast DDS has segments there
    return [path.name for path in stale_segments(patterns, shm_dir, proc, min_age_s) if _remove_unlocked(path)]
