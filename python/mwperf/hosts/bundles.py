"""The bundles on the controller's side, as the far host needs them: which
archive for an architecture, its hash, the oldest glibc it runs on, how much
room it takes, its files' sha256 (checked on the far host after unpacking)
and the description of its agent (``description.jsonl``: the options of a
point are checked against the agent that will run it).

The archive is ``mwperf bundle``'s (:mod:`mwperf.bundle`, BUNDLE-CONTRACT.md):
one top directory holding ``manifest.json``, ``description.jsonl``, the agent,
its adapters and libraries.
"""

from __future__ import annotations

import hashlib
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import mwperf.bundle as made
from mwperf.bundle import BundleError, read_manifest
from mwperf.description import AgentInfo, json_events
from mwperf.errors import AgentError

__all__ = ["Bundle", "read", "find", "ARCHES", "glibc_tuple"]

#: The architectures mwperf makes bundles for (``uname -m`` spellings).
ARCHES = made.ARCHES



def glibc_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:2])


@dataclass(frozen=True)
class Bundle:
    """One bundle archive as a far host needs it, read without unpacking it."""

    path: Path
    top: str                     # the archive's top directory
    arch: str
    hash: str                    # 64 hex digits: the cache directory's name on the far host
    glibc_min: str
    files: dict[str, str] = field(repr=False)  # relative path -> sha256 (manifest.json's "files")
    manifest_sha256: str = ""    # of manifest.json's bytes: what the far host's copy is compared with
    unpacked_bytes: int = 0
    description: tuple[str, ...] = field(default=(), repr=False)

    @property
    def size(self) -> int:
        return self.path.stat().st_size

    def agent_info(self, install_dir: str | None = None) -> AgentInfo:
        """What the bundled agent says of itself (``mwperf-agent list``, captured when it was built), its files
        named where the bundle is unpacked on the host (``install_dir``)."""
        lines = made.placed(self.description, install_dir) if install_dir else self.description
        try:
            return AgentInfo.from_events(json_events(lines))
        except AgentError as exc:
            raise AgentError(f"{self.path.name}: description.jsonl: {exc}") from None


def read(path: Path) -> Bundle:
    """The bundle at ``path`` (:func:`mwperf.bundle.read_manifest`, and from the archive its top directory,
    manifest.json's digest and unpacked size); ValueError naming what is wrong with it."""
    try:
        manifest = read_manifest(path)
        with tarfile.open(path, "r:gz") as tar:
            members = tar.getmembers()
            tops = {m.name.split("/")[0] for m in members}
            if len(tops) != 1:
                raise ValueError(f"{path.name}: not one top directory")
            (top,) = tops
            member = tar.extractfile(f"{top}/manifest.json")
            if member is None:
                raise KeyError(f"{top}/manifest.json")
            raw = member.read()
    except (BundleError, OSError, tarfile.TarError, KeyError, AttributeError) as exc:
        raise ValueError(f"{path.name}: {exc}") from None
    return Bundle(path=path, top=top, arch=manifest.arch, hash=manifest.hash, glibc_min=manifest.glibc_min,
                  files=dict(manifest.files), manifest_sha256=hashlib.sha256(raw).hexdigest(),
                  unpacked_bytes=sum(m.size for m in members if m.isfile()),
                  description=tuple(manifest.description_lines))


def find(arch: str, bundle_dir: Path | None = None) -> Path | None:
    """The newest archive for ``arch`` this controller can drive (:func:`mwperf.bundle.find`)."""
    return made.find(arch, bundle_dir)
