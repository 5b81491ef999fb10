"""Self-contained agent bundles, one per architecture (BUNDLE-CONTRACT.md):
the agent, its adapter plugins and every library they load beyond glibc,
found through ``$ORIGIN``, with a manifest (architecture, versions, the
oldest glibc it needs, a content hash) and the bundled agent's own
description of itself. What a far host runs, copied there by the controller.

    build(arch, out_dir=None) -> Path       the archive (mwperf bundle --arch ARCH)
    find(arch, bundle_dir=None) -> Path     the newest archive this controller can drive, or None
    read_manifest(archive_or_dir) -> Manifest
"""

from __future__ import annotations

import json
from pathlib import Path

from mwperf.bundle.build import ARCHES, agent_version, build, default_out
from mwperf.bundle.manifest import BundleError, Manifest, read_manifest

__all__ = ["build", "find", "read_manifest", "Manifest", "BundleError", "ARCHES", "placed"]


def _options(lines: tuple[str, ...]) -> dict | None:
    for line in lines:
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("event") == "options":
            return event
    return None


def find(arch: str, bundle_dir: Path | str | None = None) -> Path | None:
    """The newest archive for ``arch`` in ``bundle_dir`` (default: bundles/ in
    the checkout) whose agent version is this checkout's and whose option table
    is the controller's (python/mwperf/option-table.json); None when there is none."""
    from mwperf.table import snapshot_event

    folder = Path(bundle_dir) if bundle_dir else default_out()
    wanted_version = agent_version()
    wanted_options = snapshot_event()
    found = []
    for path in folder.glob(f"mwperf-agent-*-{arch}-*.tar.gz"):
        try:
            manifest = read_manifest(path)
        except BundleError:
            continue
        if manifest.arch != arch or (wanted_version and manifest.agent_version != wanted_version):
            continue
        options = _options(manifest.description_lines)
        if options is None or options.get("options") != wanted_options.get("options"):
            continue
        found.append((path.stat().st_mtime, path.name, path))
    return max(found)[2] if found else None


def placed(lines: tuple[str, ...] | list[str], install_dir: Path | str) -> list[str]:
    """description.jsonl's lines for the bundle unpacked at ``install_dir``:
    its files named relative to the bundle there (an adapter's
    ``service_config``: ``roudi.toml``) made absolute."""
    out = []
    for line in lines:
        event = json.loads(line)
        config = event.get("service_config") if isinstance(event, dict) else None
        if isinstance(config, str) and config and not config.startswith("/"):
            event["service_config"] = f"{str(install_dir).rstrip('/')}/{config}"
            line = json.dumps(event, separators=(",", ":"))
        out.append(line)
    return out
