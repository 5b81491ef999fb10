"""The x86-64 bundle runs where nothing but glibc is: in a mount namespace
whose library folder holds only libc6's files (no Debian middleware
library, no libstdc++, no OpenSSL) and where the checkout's build and
wheels are hidden (bare_host), the bundled agent lists every adapter the
checkout's own agent has, the loader maps nothing from outside the bundle
but glibc (LD_DEBUG), a udp and a cyclonedds point run through it with
nothing lost, and the unbundled agent does not even start there."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from bare_host import HIDE, LIBDIR, bare_command, can_unshare, glibc_files, loaded, lossless_points, unpacked
from conftest import real_agent_path
from mwperf.bundle import build, read_manifest
from mwperf.bundle.manifest import content_hash
from mwperf.execute.agent import describe

# side by side: its mount namespaces are private (no other process sees them), its points on loopback with run ids
# of their own, nothing of the machine changed; the module on one worker (its bundle unpacked once)
pytestmark = [pytest.mark.side_by_side, pytest.mark.xdist_group("bundle-x86_64")]



@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """The x86-64 bundle (bundles/: built once, then as long as its inputs are unchanged), unpacked."""
    why = can_unshare()
    if why or real_agent_path() is None or shutil.which("patchelf") is None:
        pytest.skip(why or "the agent is not built" if real_agent_path() is None else "patchelf not installed")
    archive = build("x86_64", log=lambda line: None)
    return unpacked(archive, tmp_path_factory.mktemp("far-host")), read_manifest(archive)


def bare(argv: list[str], tmp_path: Path, **kw) -> subprocess.CompletedProcess:
    return subprocess.run(bare_command(argv, tmp_path / "scratch", HIDE), capture_output=True, text=True,
                          timeout=120, **kw)


def test_the_bundled_agent_lists_every_adapter_with_only_glibc_from_outside(bundle, tmp_path):
    root, manifest = bundle
    checks = (f'test ! -e {LIBDIR}/libstdc++.so.6 && test ! -e {LIBDIR}/libddsc.so.0debian && '
              f'test ! -e {HIDE[0]}/mwperf-agent && exec "$0" list')
    done = bare(["/bin/sh", "-c", checks, str(root / "mwperf-agent")], tmp_path,
                env=dict(os.environ, LD_DEBUG="libs", LD_DEBUG_OUTPUT=str(tmp_path / "ld")))
    assert done.returncode == 0, done.stderr[-2000:]
    events = [json.loads(line) for line in done.stdout.splitlines()]
    head = next(e for e in events if e["event"] == "agent")
    assert head["missing"] == []
    own = describe(str(real_agent_path()))  # the checkout's agent, on this machine's libraries
    assert {e["name"] for e in events if e["event"] == "adapter"} == set(own.adapters)
    objects = loaded(tmp_path, f"{root}/mwperf-agent")
    glibc = set(glibc_files())
    assert {p for p in objects if not p.startswith(f"{root}/") and Path(p).name not in glibc} == set()
    for adapter in own.adapters:
        if adapter not in ("udp", "tcp"):
            assert f"{root}/adapters/libmwperf-{adapter}.so" in objects


def test_the_unbundled_agent_does_not_start_there(bundle, tmp_path):
    copy = tmp_path / "mwperf-agent"
    shutil.copy(real_agent_path(), copy)
    done = bare([str(copy), "list"], tmp_path)
    assert done.returncode != 0 and "libstdc++.so.6" in done.stderr


def test_a_udp_and_a_cyclonedds_point_run_there(bundle, tmp_path, no_packet_leaves_loopback):
    lossless_points([str(bundle[0] / "mwperf-agent")], tmp_path)


def test_the_manifest_says_what_is_in_the_bundle(bundle):
    root, manifest = bundle
    digest, files = content_hash(root)
    assert (manifest.hash, manifest.files, manifest.arch) == (digest, files, "x86_64")
    newest = (0,)
    for rel in files:
        path = root / rel
        if path.read_bytes()[:4] == b"\x7fELF":
            versions = subprocess.run(["readelf", "-VW", str(path)], capture_output=True, text=True).stdout
            found = [tuple(int(x) for x in v.split(".")) for v in re.findall(r"Name: GLIBC_([0-9.]+)", versions)]
            newest = max([newest, *found])
            dynamic = subprocess.run(["readelf", "-dW", str(path)], capture_output=True, text=True).stdout
            runpath = re.findall(r"\(RUNPATH\)\s+Library runpath: \[(.*)\]", dynamic)
            parts = rel.split("/")
            adapter = parts[1].removeprefix("libmwperf-").removesuffix(".so") if len(parts) == 2 else ""
            if parts[0] == "lib" and len(parts) == 3:  # a plugin's own library (lib/<adapter>/)
                expected = "$ORIGIN:$ORIGIN/.."
            elif parts[0] == "adapters" and (root / "lib" / adapter).is_dir():
                expected = f"$ORIGIN/../lib/{adapter}:$ORIGIN/../lib"
            else:
                expected = {"lib": "$ORIGIN", "adapters": "$ORIGIN/../lib", "bin": "$ORIGIN/../lib"}.get(
                    parts[0], "$ORIGIN/lib")
            assert runpath == [expected], rel
    assert manifest.glibc_min == ".".join(map(str, newest))
    own = describe(str(real_agent_path()))
    assert {n for n, a in manifest.adapters.items() if a["built"]} == set(own.adapters)
    assert manifest.adapters["cyclonedds"]["versions"]["libddsc0debian"].startswith("0.10")
    # ros2 and ros2-kilted load two different libfastcdr.so.2: each its own, none in the shared lib/
    if {"ros2", "ros2-kilted"} <= set(own.adapters):
        assert (root / "lib/ros2/libfastcdr.so.2").is_file() and (root / "lib/ros2-kilted/libfastcdr.so.2").is_file()
        assert not (root / "lib/libfastcdr.so.2").exists()
        assert (root / "lib/ros2/libfastcdr.so.2").read_bytes() != (root / "lib/ros2-kilted/libfastcdr.so.2").read_bytes()
