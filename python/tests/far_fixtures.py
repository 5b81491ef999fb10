"""The far hosts' fixtures (a plugin of conftest's): the lab (python/tests/far_hosts.py: an x86_64 and an
aarch64 host, built once per session, on the worker that runs these tests)
and bundles made here from BUNDLE-CONTRACT.md's layout (their agent a shell
script: for what puts a bundle in place, not for measuring)."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

import far_hosts

TESTS = Path(__file__).resolve().parent

AGENT_LIST = TESTS / "fixtures" / "agent-list.jsonl"


def make_bundle(out: Path, arch: str, glibc_min: str = "2.34", payload: int = 1 << 20, salt: str = "") -> Path:
    """A bundle archive of the contract's layout, deterministic like mwperf bundle's: its agent is the
    architecture's `sleep` (the far hosts' userland's: it runs there, and `mwperf-agent N` is a process of
    that name for N seconds), a library of ``payload`` bytes, the real agent's description, a manifest."""
    files = {
        "mwperf-agent": (0o755, (far_hosts.userland(arch) / "bin" / "sleep").read_bytes()),
        "lib/libfixture.so": (0o644, hashlib.shake_256(f"{arch}{salt}".encode()).digest(payload)),
        "description.jsonl": (0o644, AGENT_LIST.read_bytes()),
    }
    digest = hashlib.sha256()
    for path in sorted(files):
        mode, data = files[path]
        digest.update(f"{path}\0{mode:o}\0".encode() + data)
    full = digest.hexdigest()
    manifest = {"format": 1, "arch": arch, "hash": full, "agent_version": "0.2.0", "glibc_min": glibc_min,
                "built_on": "Debian 12", "adapters": {},
                "files": {p: hashlib.sha256(d).hexdigest() for p, (_, d) in files.items()}}
    files["manifest.json"] = (0o644, json.dumps(manifest, sort_keys=True).encode())
    top = f"mwperf-agent-{arch}-{full[:12]}"
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name in [top, f"{top}/lib"]:
            info = tarfile.TarInfo(name)
            info.type, info.mode, info.mtime = tarfile.DIRTYPE, 0o755, 0
            tar.addfile(info)
        for path in sorted(files):
            mode, data = files[path]
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size, info.mode, info.mtime = len(data), mode, 0
            tar.addfile(info, io.BytesIO(data))
    out.mkdir(parents=True, exist_ok=True)
    archive = out / f"mwperf-agent-0.2.0-{arch}-{full[:12]}.tar.gz"
    with open(archive, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0) as z:
        z.write(raw.getvalue())
    return archive


@pytest.fixture(scope="session")
def lab():
    """An x86_64 and an aarch64 host (see far_hosts); skipped where it cannot be built."""
    why = far_hosts.possible()
    if why is not None:
        pytest.skip(f"the far hosts' lab {why}")
    started = time.monotonic()
    made = far_hosts.build()
    made.setup_s = time.monotonic() - started
    yield made
    made.close()


@pytest.fixture(scope="session")
def fixture_bundles(tmp_path_factory) -> Path:
    """A folder with a fixture bundle for each architecture."""
    folder = tmp_path_factory.mktemp("bundles")
    for arch in far_hosts.DEB_ARCH:
        make_bundle(folder, arch)
    return folder


@pytest.fixture(scope="session")
def bundles():
    """Each architecture's real bundle in bundles/ that this controller can drive (mwperf.bundle.find: its agent
    version and option table), else made as make bundle and make bundle-aarch64 make them."""
    from mwperf import bundle

    found = {}
    for arch in ("x86_64", "aarch64"):
        found[arch] = bundle.find(arch)
        if found[arch] is None:
            if arch == "aarch64":
                subprocess.run([str(TESTS.parent.parent / "scripts" / "install-cross-arm64.sh")], check=True,
                               capture_output=True)
            found[arch] = bundle.build(arch, log=lambda *_: None)
    return found


def mwperf(lab, *args: str, timeout: float = 300, **env: str) -> subprocess.CompletedProcess:
    """``mwperf ARGS`` run in the lab's controller namespace."""
    return subprocess.run(lab.controller([sys.executable, "-m", "mwperf", *args]), capture_output=True, text=True,
                          timeout=timeout, env=lab.env(**env), cwd=os.getcwd())
