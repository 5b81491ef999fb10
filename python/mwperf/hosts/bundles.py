"""The bundles on the controller's side, as the far host needs them: which
archive for an architecture, its hash, the oldest glibc it runs on, how much
room it takes, its files' sha256 (checked on the far host after unpacking)
and the description of its agent (``description.jsonl``: the options of a
point are checked against the agent that will run it).

The archive's layout is BUNDLE-CONTRACT.md's (``mwperf bundle``): one top
directory holding ``manifest.json``, ``description.jsonl``, the agent, its
adapters and libraries.
"""

from __future__ import annotations

import hashlib
import json
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from mwperf.description import AgentInfo
from mwperf.errors import AgentError

__all__ = ["Bundle", "read", "find", "ARCHES", "DEFAULT_DIR", "glibc_tuple"]

#: The architectures mwperf makes bundles for (``uname -m`` spellings).
ARCHES = ("x86_64", "aarch64")
DEFAULT_DIR = Path(__file__).resolve().parents[3] / "bundles"
_NAME = re.compile(r"^mwperf-agent-(?P<version>[^-]+)-(?P<arch>[a-z0-9_]+)-(?P<hash12>[0-9a-f]{12})\.tar\.gz$")


def glibc_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:2])


@dataclass(frozen=True)
class Bundle:
    """One bundle archive, read without unpacking it."""

    path: Path
    top: str                     # the archive's top directory
    arch: str
    hash: str                    # 64 hex digits: the cache directory's name on the far host
    agent_version: str
    glibc_min: str
    files: dict[str, str] = field(repr=False)  # relative path -> sha256 (manifest.json's "files")
    manifest_sha256: str = ""    # of manifest.json's bytes: what the far host's copy is compared with
    unpacked_bytes: int = 0
    description: tuple[str, ...] = field(default=(), repr=False)

    @property
    def size(self) -> int:
        return self.path.stat().st_size

    def agent_info(self) -> AgentInfo:
        """What the bundled agent says of itself (``mwperf-agent list``, captured when it was built)."""
        events = []
        for line in self.description:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
        try:
            return AgentInfo.from_events(events)
        except AgentError as exc:
            raise AgentError(f"{self.path.name}: description.jsonl: {exc}") from None


def read(path: Path) -> Bundle:
    """The bundle at ``path``; ValueError naming what is wrong with it."""
    try:
        with tarfile.open(path, "r:gz") as tar:
            members = tar.getmembers()
            tops = {m.name.split("/")[0] for m in members}
            if len(tops) != 1:
                raise ValueError("not one top directory")
            (top,) = tops
            raw = _member(tar, f"{top}/manifest.json")
            description = _member(tar, f"{top}/description.jsonl").decode().splitlines()
    except (OSError, tarfile.TarError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path.name}: not a bundle archive ({exc})") from None
    try:
        manifest = json.loads(raw)
        files = {str(k): str(v) for k, v in manifest["files"].items()}
        return Bundle(path=path, top=top, arch=str(manifest["arch"]), hash=str(manifest["hash"]),
                      agent_version=str(manifest.get("agent_version") or ""),
                      glibc_min=str(manifest["glibc_min"]), files=files,
                      manifest_sha256=hashlib.sha256(raw).hexdigest(),
                      unpacked_bytes=sum(m.size for m in members if m.isfile()),
                      description=tuple(description))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"{path.name}: manifest.json: {exc}") from None


def _member(tar: tarfile.TarFile, name: str) -> bytes:
    handle = tar.extractfile(name)
    if handle is None:
        raise ValueError(f"{name} is not a file")
    return handle.read()


def find(arch: str, bundle_dir: Path | None = None) -> Path | None:
    """The newest archive for ``arch`` in ``bundle_dir`` (default: bundles/ in the checkout)."""
    folder = bundle_dir or DEFAULT_DIR
    found = [p for p in folder.glob("mwperf-agent-*.tar.gz") if (m := _NAME.match(p.name)) and m["arch"] == arch]
    return max(found, key=lambda p: (p.stat().st_mtime, p.name), default=None)
