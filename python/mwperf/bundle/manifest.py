"""A bundle's manifest (BUNDLE-CONTRACT.md), its content hash and its archive.

The hash is sha256 over the bundle's files but manifest.json, in the order of
their relative paths (bytes, sorted), each fed as ``path NUL mode NUL size NUL
bytes`` (mode in octal: 755 or 644); the archive is one top-level folder
``mwperf-agent-<arch>-<hash12>/``, written deterministically (manifest.json and description.jsonl first,
then the other files by path; mtime 0, uid/gid 0, no user names, gzip without name or time): building twice
from the same tree gives the same bytes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import stat
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Manifest", "MANIFEST", "DESCRIPTION", "FORMAT", "BundleError", "content_files", "content_hash",
           "mode_of", "write_archive", "read_manifest", "archive_name", "top_name"]

MANIFEST = "manifest.json"
DESCRIPTION = "description.jsonl"
FORMAT = 1


class BundleError(Exception):
    """A bundle cannot be built or read; ``str()`` is one line."""


def mode_of(path: Path) -> int:
    """What the bundle keeps of a file's mode: executable (755) or not (644)."""
    return 0o755 if os.stat(path).st_mode & stat.S_IXUSR else 0o644


def content_files(root: Path) -> list[str]:
    """The bundle's files, relative to its folder, sorted; manifest.json excluded."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if rel != MANIFEST:
                out.append(rel)
    return sorted(out, key=os.fsencode)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def content_hash(root: Path) -> tuple[str, dict[str, str]]:
    """The bundle's hash and each file's sha256 (manifest.json excluded)."""
    whole = hashlib.sha256()
    files = {}
    for rel in content_files(root):
        path = root / rel
        if path.is_symlink() or not path.is_file():
            raise BundleError(f"{path}: a bundle holds regular files only")
        files[rel] = _sha256(path)
        whole.update(b"%s\0%o\0%d\0" % (os.fsencode(rel), mode_of(path), path.stat().st_size))
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                whole.update(chunk)
    return whole.hexdigest(), files


def top_name(arch: str, digest: str) -> str:
    return f"mwperf-agent-{arch}-{digest[:12]}"


def archive_name(version: str, arch: str, digest: str) -> str:
    return f"mwperf-agent-{version}-{arch}-{digest[:12]}.tar.gz"


def write_archive(root: Path, top: str, out: Path) -> None:
    """``root``'s files as ``top/...`` in a deterministic tar.gz at ``out`` (written aside, then renamed)."""
    # manifest.json and description.jsonl first (a reader stops there), then the rest by path
    rels = [MANIFEST, DESCRIPTION] + [r for r in content_files(root) if r != DESCRIPTION]
    dirs = sorted({str(Path(r).parent) for r in rels} - {"."}, key=os.fsencode)
    if out.is_file():  # built before from the same content and manifest: the same bytes (written aside, then renamed)
        try:
            if _from_archive(out)[0].encode("utf-8") == (root / MANIFEST).read_bytes():
                return
        except BundleError:
            pass
    partial = out.with_name(f".{out.name}.partial-{os.getpid()}")
    try:
        with open(partial, "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=1) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                for entry in [top] + [f"{top}/{d}" for d in dirs]:
                    info = tarfile.TarInfo(entry)
                    info.type, info.mode = tarfile.DIRTYPE, 0o755
                    tar.addfile(_normal(info))
                for rel in rels:
                    path = root / rel
                    info = tarfile.TarInfo(f"{top}/{rel}")
                    info.size, info.mode = path.stat().st_size, mode_of(path)
                    with open(path, "rb") as f:
                        tar.addfile(_normal(info), f)
        os.replace(partial, out)
    finally:
        partial.unlink(missing_ok=True)


def _normal(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
    return info


@dataclass(frozen=True)
class Manifest:
    format: int
    arch: str
    hash: str
    agent_version: str
    glibc_min: str
    adapters: dict
    files: dict
    built_on: str = ""
    glibc_min_by: tuple[str, ...] = ()      # the files that need glibc_min
    #: the lines of description.jsonl (the bundled agent's `mwperf-agent list`)
    description_lines: tuple[str, ...] = field(default=(), repr=False)

    @property
    def hash12(self) -> str:
        return self.hash[:12]

    def as_json(self) -> dict:
        return {"format": self.format, "arch": self.arch, "hash": self.hash, "agent_version": self.agent_version,
                "glibc_min": self.glibc_min, "glibc_min_by": list(self.glibc_min_by), "built_on": self.built_on,
                "adapters": self.adapters, "files": self.files}

    @classmethod
    def from_json(cls, doc: dict, description: str = "") -> "Manifest":
        try:
            return cls(format=int(doc["format"]), arch=str(doc["arch"]), hash=str(doc["hash"]),
                       agent_version=str(doc["agent_version"]), glibc_min=str(doc["glibc_min"]),
                       adapters=dict(doc["adapters"]), files=dict(doc["files"]), built_on=str(doc.get("built_on", "")),
                       glibc_min_by=tuple(str(f) for f in _strings(doc.get("glibc_min_by"))),
                       description_lines=tuple(line for line in description.splitlines() if line.strip()))
        except (KeyError, TypeError, ValueError) as exc:
            raise BundleError(f"manifest.json: missing or bad field ({exc})") from None

    def absent(self) -> dict[str, str]:
        """Adapter -> why it is not in this bundle."""
        return {name: str(a.get("reason", "")) for name, a in self.adapters.items() if not a.get("built")}


_MAX_TEXT = 16 << 20


def _strings(value) -> list:
    return [value] if isinstance(value, str) else list(value) if isinstance(value, list) else []


def read_manifest(archive_or_dir: Path | str) -> Manifest:
    """The manifest (with description.jsonl) of a bundle archive, or of its unpacked folder."""
    path = Path(archive_or_dir)
    if path.is_dir():
        try:
            doc = (path / MANIFEST).read_text(encoding="utf-8")
            description = (path / DESCRIPTION).read_text(encoding="utf-8")
        except OSError as exc:
            raise BundleError(f"{path}: not a bundle folder ({exc.strerror}: {exc.filename})") from None
    else:
        doc, description = _from_archive(path)
    try:
        return Manifest.from_json(json.loads(doc), description)
    except json.JSONDecodeError as exc:
        raise BundleError(f"{path}: manifest.json is not JSON ({exc.msg})") from None


def _from_archive(path: Path) -> tuple[str, str]:
    found: dict[str, str] = {}
    try:
        with tarfile.open(path, "r:gz") as tar:
            for member in tar:
                name = member.name.split("/", 1)[-1]
                if name in (MANIFEST, DESCRIPTION) and member.isfile() and member.size <= _MAX_TEXT:
                    data = tar.extractfile(member)
                    if data is None:
                        continue
                    found[name] = data.read().decode("utf-8")
                    if len(found) == 2:
                        break
    except (OSError, tarfile.TarError, EOFError, UnicodeDecodeError) as exc:
        raise BundleError(f"{path}: not a readable bundle archive ({exc})") from None
    if MANIFEST not in found or DESCRIPTION not in found:
        raise BundleError(f"{path}: no manifest.json and description.jsonl in it: not an mwperf agent bundle")
    return found[MANIFEST], found[DESCRIPTION]


def description_text(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode("utf-8")


def dumps(doc: dict) -> bytes:
    return (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode("utf-8")

