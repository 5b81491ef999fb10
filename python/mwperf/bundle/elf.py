"""What the dynamic loader reads of an ELF file, read without running it (the
aarch64 bundle's files cannot run here): its machine, soname, needed
libraries, RPATH / RUNPATH and the symbol versions it needs of each library
(``GLIBC_2.34`` of libc.so.6: the oldest glibc it runs on).

Only 64-bit little-endian files (x86-64, aarch64); anything else is
:class:`NotElf`, with the reason.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Elf", "NotElf", "read_elf", "is_elf", "MACHINES", "glibc_version"]

#: e_machine -> the architecture's name as ``uname -m`` says it
MACHINES = {62: "x86_64", 183: "aarch64"}

_SHT_DYNAMIC = 6
_SHT_GNU_VERNEED = 0x6FFFFFFE
_DT_NEEDED, _DT_SONAME, _DT_RPATH, _DT_RUNPATH = 1, 14, 15, 29
_GLIBC = re.compile(r"^GLIBC_(\d+)\.(\d+)(?:\.(\d+))?$")


class NotElf(ValueError):
    """The file is not an ELF file this module reads (the message says why)."""


@dataclass(frozen=True)
class Elf:
    path: Path
    machine: str                      # "x86_64", "aarch64", or "e_machine N"
    kind: str                         # "executable", "shared" (ET_DYN: libraries and PIE executables)
    soname: str | None = None
    needed: tuple[str, ...] = ()
    rpath: tuple[str, ...] = ()       # DT_RPATH's entries, as written ($ORIGIN unexpanded)
    runpath: tuple[str, ...] = ()     # DT_RUNPATH's
    #: library -> the symbol versions needed of it ("libc.so.6" -> ("GLIBC_2.2.5", "GLIBC_2.34"))
    versions: dict[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def glibc(self) -> tuple[int, ...]:
        """The newest GLIBC_x.y this file needs of any library, (0,) when none."""
        found = [glibc_version(v) for names in self.versions.values() for v in names]
        return max((v for v in found if v), default=(0,))


def glibc_version(name: str) -> tuple[int, ...] | None:
    """``GLIBC_2.34`` -> (2, 34); None for another version name (GLIBCXX_3.4, GLIBC_PRIVATE)."""
    m = _GLIBC.match(name)
    return tuple(int(g) for g in m.groups() if g is not None) if m else None


def is_elf(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def _cstr(blob: bytes, offset: int) -> str:
    end = blob.find(b"\0", offset)
    if offset < 0 or offset >= len(blob) or end < 0:
        raise NotElf(f"string offset {offset} outside its table")
    return blob[offset:end].decode("utf-8", "replace")


def read_elf(path: Path) -> Elf:
    """The file's dynamic facts; NotElf when it is not a 64-bit little-endian ELF file."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF":
        raise NotElf(f"{path}: not an ELF file")
    if data[4] != 2 or data[5] != 1:
        raise NotElf(f"{path}: not a 64-bit little-endian ELF file")
    try:
        return _parse(Path(path), data)
    except (struct.error, IndexError) as exc:
        raise NotElf(f"{path}: truncated or malformed ELF file ({exc})") from None


def _parse(path: Path, data: bytes) -> Elf:
    e_type, e_machine = struct.unpack_from("<HH", data, 16)
    e_shoff, = struct.unpack_from("<Q", data, 0x28)
    e_shentsize, e_shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, e_shoff + i * e_shentsize) for i in range(e_shnum)]

    def body(index: int) -> bytes:
        s = sections[index]
        return data[s[4]:s[4] + s[5]]

    needed: list[str] = []
    soname = None
    rpath: tuple[str, ...] = ()
    runpath: tuple[str, ...] = ()
    versions: dict[str, tuple[str, ...]] = {}
    for _name, sh_type, _flags, _addr, offset, size, link, info, _align, _entsize in sections:
        if sh_type == _SHT_DYNAMIC:
            strings = body(link)
            for at in range(offset, offset + size - 15, 16):
                tag, value = struct.unpack_from("<qQ", data, at)
                if tag == 0:
                    break
                if tag == _DT_NEEDED:
                    needed.append(_cstr(strings, value))
                elif tag == _DT_SONAME:
                    soname = _cstr(strings, value)
                elif tag == _DT_RPATH:
                    rpath = tuple(p for p in _cstr(strings, value).split(":") if p)
                elif tag == _DT_RUNPATH:
                    runpath = tuple(p for p in _cstr(strings, value).split(":") if p)
        elif sh_type == _SHT_GNU_VERNEED:
            strings = body(link)
            at = offset
            for _ in range(info):  # sh_info: the number of entries
                _version, count, file_name, aux, next_entry = struct.unpack_from("<HHIII", data, at)
                names = []
                aux_at = at + aux
                for _ in range(count):
                    _hash, _flags2, _other, name, next_aux = struct.unpack_from("<IHHII", data, aux_at)
                    names.append(_cstr(strings, name))
                    aux_at += next_aux
                library = _cstr(strings, file_name)
                versions[library] = tuple(sorted(set(versions.get(library, ()) + tuple(names))))
                if not next_entry:
                    break
                at += next_entry
    return Elf(path=path, machine=MACHINES.get(e_machine, f"e_machine {e_machine}"),
               kind="executable" if e_type == 2 else "shared", soname=soname, needed=tuple(needed),
               rpath=rpath, runpath=runpath, versions=versions)
