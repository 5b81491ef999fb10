"""Which shared libraries a set of ELF files loads beyond glibc, found the way
the dynamic loader would (its RPATH, inherited RPATHs, RUNPATH, then the
system's folders), read from the files themselves (no ``ldd``: the aarch64
files cannot run here).

``resolve(roots, system_dirs)`` -> :class:`Closure`: soname -> the file that
provides it, each root's libraries, and what could not be found.
"""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass, field
from pathlib import Path

from mwperf.bundle.elf import Elf, NotElf, is_elf, read_elf

__all__ = ["GLIBC_SONAMES", "Closure", "resolve", "system_dirs"]

#: What glibc itself provides: never bundled (the far host's glibc is used, with its loader).
GLIBC_SONAMES = frozenset({
    "libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libutil.so.1", "libresolv.so.2",
    "libanl.so.1", "libnsl.so.1", "libmvec.so.1", "libBrokenLocale.so.1", "libthread_db.so.1",
    "libc_malloc_debug.so.0", "libnss_files.so.2", "libnss_dns.so.2", "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
})

_MULTIARCH = {"x86_64": "x86_64-linux-gnu", "aarch64": "aarch64-linux-gnu"}


def system_dirs(arch: str, root: Path = Path("/")) -> list[Path]:
    """The loader's default folders for ``arch`` under ``root`` (a sysroot, or /),
    with those ``root/etc/ld.so.conf.d`` adds."""
    triplet = _MULTIARCH[arch]
    dirs = [root / "lib" / triplet, root / "usr" / "lib" / triplet]
    for conf in sorted(glob.glob(str(root / "etc" / "ld.so.conf.d" / "*.conf"))):
        try:
            lines = Path(conf).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            line = line.split("#", 1)[0].strip()
            if line.startswith("/") and not line.startswith("include"):
                dirs.append(root / line.lstrip("/"))
    dirs += [root / "lib", root / "usr" / "lib"]
    return list(dict.fromkeys(d for d in dirs if d.is_dir()))


@dataclass
class Closure:
    #: soname -> the real file providing it
    libraries: dict[str, Path] = field(default_factory=dict)
    #: each root -> the sonames it loads, directly or not
    of_root: dict[Path, set[str]] = field(default_factory=dict)
    #: each root -> soname -> the file it loads for it (two roots may load two different files)
    paths_of: dict[Path, dict[str, Path]] = field(default_factory=dict)
    #: (soname, who needs it) that were found nowhere
    missing: list[tuple[str, Path]] = field(default_factory=list)
    #: soname -> two different files found for it by different requesters
    conflicts: dict[str, tuple[Path, Path]] = field(default_factory=dict)
    elves: dict[Path, Elf] = field(default_factory=dict)


def _expand(entries: tuple[str, ...], origin: Path, reroot: Path | None) -> list[Path]:
    out = []
    for entry in entries:
        text = entry.replace("${ORIGIN}", str(origin)).replace("$ORIGIN", str(origin))
        if reroot is not None and text.startswith("/") and not text.startswith(str(reroot)):
            out.append(reroot / text.lstrip("/"))  # a sysroot's absolute RUNPATH, in the sysroot
        out.append(Path(text))
    return out


def resolve(roots: list[Path], dirs: list[Path], arch: str, extra: dict[Path, list[str]] | None = None,
            reroot: Path | None = None) -> Closure:
    """Every library ``roots`` need (and ``extra[root]``: libraries a root's
    middleware dlopen()s by name), searched for each requester in its RPATH
    (and its loaders' when it has no RUNPATH), its RUNPATH, then ``dirs``.
    ``reroot``: absolute RUNPATHs are looked for under it first (a sysroot)."""
    closure = Closure()
    extra = extra or {}

    def elf(path: Path) -> Elf | None:
        real = path.resolve()
        if real not in closure.elves:
            try:
                closure.elves[real] = read_elf(real)
            except (NotElf, OSError):
                return None
        found = closure.elves[real]
        return found if found.machine == arch else None

    def find(soname: str, requester: Elf, inherited: list[Path]) -> tuple[Path | None, list[Path]]:
        origin = requester.path.parent
        own_rpath = _expand(requester.rpath, origin, reroot)
        search = ([] if requester.runpath else own_rpath + inherited)
        search += _expand(requester.runpath, origin, reroot) + dirs
        for d in search:
            candidate = d / soname
            if candidate.exists() and is_elf(candidate) and elf(candidate) is not None:
                return candidate.resolve(), ([] if requester.runpath else own_rpath + inherited)
        return None, []

    for root in roots:
        top = elf(root)
        if top is None:
            raise ValueError(f"{root}: not an ELF file for {arch}")
        seen: set[str] = set()
        paths: dict[str, Path] = {}
        queue: list[tuple[Elf, str, list[Path]]] = [(top, soname, []) for soname in top.needed
                                                    + tuple(extra.get(root, ()))]
        while queue:
            requester, soname, inherited = queue.pop(0)
            if soname in GLIBC_SONAMES or soname in seen:
                continue
            path, passed = find(soname, requester, inherited)
            if path is None:
                closure.missing.append((soname, requester.path))
                continue
            seen.add(soname)
            paths[soname] = path
            known = closure.libraries.setdefault(soname, path)
            if known != path and not _same_bytes(known, path):
                closure.conflicts[soname] = (known, path)
            lib = elf(path)
            if lib is None:
                raise ValueError(f"{path}: not an ELF file for {arch}")
            queue += [(lib, n, passed) for n in lib.needed]
        closure.of_root[root] = seen
        closure.paths_of[root] = paths
    return closure


def _same_bytes(a: Path, b: Path) -> bool:
    try:
        return os.path.getsize(a) == os.path.getsize(b) and a.read_bytes() == b.read_bytes()
    except OSError:
        return False
