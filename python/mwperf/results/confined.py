"""Writing into a directory without ever following a link out of it.

A run directory is untrusted (it travels with bug reports and CI artefacts,
and whoever prepared it may have planted ``results.parquet -> /etc/passwd``
or ``plots -> /somewhere``). Every file mwperf writes into one, and into an
``--out`` folder of an export, goes through this module:

* the directory given is opened once (it may itself be a link: the user
  named it); every folder below it (``samples``, ``plots``, ``perftest``) is
  opened relative to it with ``O_NOFOLLOW`` and made if missing;
* a file is written under a temporary name created with ``O_EXCL |
  O_NOFOLLOW`` (a link planted there is removed, never written through),
  then renamed over the target (a rename replaces a link, never follows it);
* a file appended to (results.jsonl) is opened with ``O_NOFOLLOW`` and must
  be a regular file.

A link where a folder or an appended file should be is refused, naming it;
every failure is a :class:`~mwperf.errors.StorageError` (one line, exit 2),
and no temporary file is left behind. A folder this process made that holds
no file when it exits (a run that failed before its first file: a full
disk) is removed again: no empty run directory is left behind.
"""

from __future__ import annotations

import atexit
import errno
import os
import stat
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO, Iterator

from mwperf.errors import StorageError

__all__ = ["TMP_SUFFIX", "atomic_file", "write_atomic", "write_inside", "open_append", "make_dirs", "refuse_link",
           "utf8"]

#: Temporary files of an atomic write (a killed writer may leave one).
TMP_SUFFIX = ".tmp"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC
#: Why a link is not written through (ELOOP's own text says nothing to a user).
LINK_REFUSED = "a symbolic link: mwperf writes nothing through a link"


def _refusal(exc: OSError) -> OSError:
    """ELOOP (O_NOFOLLOW met a link) in words."""
    return OSError(errno.ELOOP, LINK_REFUSED) if exc.errno == errno.ELOOP else exc


def _open_dirs(directory: Path | str, parts: tuple[str, ...], create: bool) -> int:
    """A descriptor of ``directory/parts...``: the directory itself as given,
    each part below it opened without following a link (and made when missing
    and ``create``). OSError (ELOOP for a link) otherwise."""
    fd = os.open(directory, _DIR_FLAGS)
    try:
        for part in parts:
            if part in ("", ".", ".."):
                raise OSError(errno.EINVAL, f"'{part}' is not a folder name")
            if create:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
            try:
                below = os.open(part, _DIR_FLAGS | os.O_NOFOLLOW, dir_fd=fd)
            except NotADirectoryError:  # what O_DIRECTORY | O_NOFOLLOW says of a link
                if stat.S_ISLNK(os.lstat(part, dir_fd=fd).st_mode):
                    raise OSError(errno.ELOOP, LINK_REFUSED) from None
                raise
            os.close(fd)
            fd = below
    except BaseException:
        os.close(fd)
        raise
    return fd


#: The outermost folder each make_dirs made (it did not exist before), removed at exit if it holds no file.
_MADE: list[Path] = []


def _holds_a_file(path: Path) -> bool:
    try:
        return any(not entry.is_dir(follow_symlinks=False) or _holds_a_file(Path(entry.path))
                   for entry in os.scandir(path))
    except OSError:
        return True  # cannot tell: left as it is


def _remove_unused() -> None:
    """The folders made by this process that hold no file (only empty folders), removed."""
    for top in reversed(_MADE):
        if not top.is_dir() or top.is_symlink() or _holds_a_file(top):
            continue
        for below, _, _ in sorted(os.walk(top), key=lambda w: -len(w[0])):
            try:
                os.rmdir(below)  # empty folders only: rmdir removes nothing else
            except OSError:
                break


def _note_made(directory: Path) -> None:
    """Remember the outermost missing folder of ``directory`` (before it is made)."""
    missing = None
    for each in (directory.absolute(), *directory.absolute().parents):
        if os.path.lexists(each):
            break
        missing = each
    if missing is not None:
        if not _MADE:
            atexit.register(_remove_unused)
        _MADE.append(missing)


def make_dirs(directory: Path | str, relative: str = "") -> Path:
    """``directory`` (and its parents) and the folders of ``relative`` below it,
    none of them a link; StorageError otherwise. What it makes is removed at
    exit if no file was written into it."""
    target = Path(directory, relative)
    try:
        _note_made(Path(directory))
        Path(directory).mkdir(parents=True, exist_ok=True)
        os.close(_open_dirs(directory, Path(relative).parts, create=True))
    except OSError as exc:
        raise StorageError(target, _refusal(exc)) from None
    return target


def _fsync(fd: int) -> None:
    try:
        os.fsync(fd)
    except OSError:
        pass


def _create_temporary(dir_fd: int, name: str) -> int:
    """A new file ``name`` in ``dir_fd`` (what was there, a link included, is removed first)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(name, flags, 0o644, dir_fd=dir_fd)
    except FileExistsError:
        os.unlink(name, dir_fd=dir_fd)  # a killed writer's temporary, or a link: removed, never followed
        return os.open(name, flags, 0o644, dir_fd=dir_fd)


@contextmanager
def atomic_file(directory: Path | str, relative: str) -> Iterator[BinaryIO]:
    """A binary file to write ``directory/relative`` with: it replaces the
    target at once when the block ends (a reader sees the old file or the new
    one), and is removed when the block fails. StorageError when it cannot be
    written."""
    path = Path(directory, relative)
    *parts, name = Path(relative).parts
    tmp = name + TMP_SUFFIX
    try:
        dir_fd = _open_dirs(directory, tuple(parts), create=True)
    except OSError as exc:
        raise StorageError(path, _refusal(exc)) from None
    created = False
    try:
        fd = _create_temporary(dir_fd, tmp)
        created = True
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        created = False
        _fsync(dir_fd)
    except StorageError:
        raise
    except OSError as exc:
        raise StorageError(path, _refusal(exc)) from None
    finally:
        if created:
            try:
                os.unlink(tmp, dir_fd=dir_fd)
            except OSError:
                pass
        os.close(dir_fd)


def utf8(text: str, path: Path | str) -> bytes:
    """``text`` as UTF-8; StorageError naming ``path`` when it holds what no
    UTF-8 file can (a lone surrogate), so nothing of it is written."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        bad = ascii(exc.object[exc.start:exc.end])[1:-1]
        raise StorageError(path, OSError(errno.EILSEQ, f"'{bad}' is not valid Unicode text")) from None


def write_inside(directory: Path | str, relative: str, data: str | bytes) -> Path:
    """``directory/relative`` replaced by ``data`` (text as UTF-8) at once; StorageError when it cannot be."""
    path = Path(directory, relative)
    data = utf8(data, path) if isinstance(data, str) else data
    with atomic_file(directory, relative) as handle:
        handle.write(data)
    return path


def write_atomic(path: Path | str, data: str | bytes) -> None:
    """``path`` (a file of the directory that holds it) replaced by ``data`` at once."""
    path = Path(path)
    write_inside(path.parent, path.name, data)


def refuse_link(path: Path | str) -> None:
    """StorageError when ``path`` is a link or something else than a regular
    file (a missing file is fine): what would be written through it."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as exc:
        raise StorageError(path, exc) from None
    if stat.S_ISLNK(mode):
        raise StorageError(path, OSError(errno.ELOOP, LINK_REFUSED))
    if not stat.S_ISREG(mode):
        raise StorageError(path, OSError(errno.EINVAL, "not a regular file"))


def open_append(path: Path | str) -> int:
    """A read-write, appending descriptor of ``path`` (created if missing), which
    must be a regular file and no link. OSError otherwise (ELOOP in words)."""
    path = Path(path)
    dir_fd = os.open(path.parent, _DIR_FLAGS)
    try:
        flags = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
        fd = os.open(path.name, flags, 0o644, dir_fd=dir_fd)
    except OSError as exc:
        raise _refusal(exc) from None
    finally:
        os.close(dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file")
    return fd
