"""The aarch64 bundle (make bundle-aarch64; skipped, saying so, when it is not
built: it is cross-built once, not by make test): every ELF file in it is
aarch64 (readelf), and run under qemu-user-static on a glibc-only host (this
machine's libraries hidden, qemu's root holding libc6:arm64's files alone)
its agent lists what this machine can cross-build and names what it
cannot with the reason, with nothing but glibc mapped from outside the
bundle; a udp and a cyclonedds point between two of its agents lose
nothing (no timing: under emulation it means nothing)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from bare_host import HIDE, bare_command, can_unshare, glibc_files, loaded, lossless_points, unpacked
from mwperf.bundle import find, read_manifest

# side by side: its mount namespaces are private (no other process sees them), its points on loopback with run ids
# of their own, nothing of the machine changed; the module on one worker (its bundle unpacked once)
pytestmark = [pytest.mark.side_by_side, pytest.mark.xdist_group("bundle-aarch64")]

#: What Debian's arm64 packages and the Connector wheel give (cross-built here), and what cannot be.
BUILT = {"udp", "tcp", "cyclonedds", "fastdds", "connext", "iceoryx", "ros1"}
ABSENT = {"ros2": "PyPI", "fastdds-jazzy": "PyPI", "ros2-kilted": "PyPI", "fastdds3": "PyPI",
          "cyclonedds11": "cyclors", "zenoh": "Rust", "iceoryx2": "Rust"}


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    archive = find("aarch64")
    qemu = shutil.which("qemu-aarch64-static")
    if archive is None or qemu is None or can_unshare():
        pytest.skip("no aarch64 bundle in bundles/ (make bundle-aarch64 builds it: ~40 s once the arm64 packages "
                    "are fetched)" if archive is None else can_unshare() or "qemu-user-static not installed")
    from mwperf.bundle.cross import glibc_root

    return unpacked(archive, tmp_path_factory.mktemp("arm64-host")), read_manifest(archive), [qemu, "-L",
                                                                                               str(glibc_root())]


def test_every_file_is_aarch64(bundle):
    root, manifest, _ = bundle
    assert manifest.arch == "aarch64"
    elves = [root / rel for rel in manifest.files if (root / rel).read_bytes()[:4] == b"\x7fELF"]
    assert len(elves) > 10
    for path in elves:
        header = subprocess.run(["readelf", "-hW", str(path)], capture_output=True, text=True, check=True).stdout
        assert "AArch64" in header, path


def test_its_agent_lists_what_was_built_and_why_the_rest_is_absent(bundle, tmp_path):
    root, manifest, qemu = bundle
    done = subprocess.run(bare_command([*qemu, str(root / "mwperf-agent"), "list"], tmp_path / "scratch", HIDE),
                          capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, LD_DEBUG="libs", LD_DEBUG_OUTPUT=str(tmp_path / "ld")))
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert {e["name"] for e in events if e["event"] == "adapter"} == BUILT
    missing = {m["name"]: m["reason"] for m in next(e for e in events if e["event"] == "agent")["missing"]}
    assert set(missing) == set(ABSENT) and all(word in missing[n] for n, word in ABSENT.items())
    assert manifest.absent() == missing
    # glibc: libc6:arm64's (qemu's root), and this machine's, which the shell that runs qemu loaded in the same process
    glibc = {p.name for p in Path(qemu[2]).rglob("*.so*")} | set(glibc_files())
    objects = loaded(tmp_path, f"{root}/mwperf-agent")
    assert {p for p in objects if not p.startswith(f"{root}/") and Path(p).name not in glibc} == set()
    assert f"{root}/adapters/libmwperf-cyclonedds.so" in objects


def test_a_udp_and_a_cyclonedds_point_between_two_of_its_agents(bundle, tmp_path, no_packet_leaves_loopback):
    root, _, qemu = bundle
    lossless_points([*qemu, str(root / "mwperf-agent")], tmp_path)
