"""mwperf.bundle.closure finds the libraries the dynamic loader itself loads:
for the checkout's agent and each of its plugins, the same files as ``ldd``
(the loader, asked to trace), glibc's own left out."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from mwperf.bundle.closure import GLIBC_SONAMES, resolve, system_dirs
from mwperf.bundle.stage import _split, plugins_of

BUILD = Path(__file__).resolve().parents[3] / "agent" / "build"
ROOTS = [BUILD / "mwperf-agent", *plugins_of(BUILD)] if (BUILD / "mwperf-agent").is_file() else []

pytestmark = pytest.mark.skipif(not ROOTS or shutil.which("ldd") is None, reason="the agent is not built")


def ldd(path: Path) -> dict[str, Path]:
    """soname -> the file the loader maps for it (glibc's and the vDSO left out)."""
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, check=True).stdout
    found = {}
    for name, where in re.findall(r"^\s*(\S+) => (\S+) \(0x", out, re.MULTILINE):
        if name not in GLIBC_SONAMES:
            found[name] = Path(where).resolve()
    assert "not found" not in out, out
    return found


@pytest.mark.parametrize("root", ROOTS, ids=lambda p: p.name)
def test_the_libraries_found_are_those_the_loader_maps(root):
    closure = resolve([root], system_dirs("x86_64"), "x86_64")
    assert closure.missing == [] and closure.conflicts == {}
    assert {s: closure.libraries[s] for s in closure.of_root[root]} == ldd(root)


def test_a_library_found_nowhere_is_named_with_who_needs_it(tmp_path):
    plugin = BUILD / "adapters" / "libmwperf-cyclonedds.so"
    if not plugin.is_file():
        pytest.skip("no cyclonedds plugin in this build")
    closure = resolve([plugin], [tmp_path], "x86_64")  # not the system's folders: nothing is found
    assert ("libddsc.so.0debian", plugin.resolve()) in closure.missing
    assert ("libstdc++.so.6", plugin.resolve()) in closure.missing


def test_a_soname_found_as_two_files_goes_to_each_plugin_own_folder_with_what_loads_it(tmp_path):
    """Two plugins whose builds load two different libfastcdr.so.2: each gets its own, and so does
    every library that loads it; the rest stays shared (ground truth: the files' own DT_NEEDED)."""
    roots = [p for p in (BUILD / "adapters/libmwperf-ros2.so", BUILD / "adapters/libmwperf-ros2-kilted.so")
             if p.is_file()]
    if len(roots) < 2:
        pytest.skip("ros2 and ros2-kilted are not both built")
    closure = resolve(roots, system_dirs("x86_64"), "x86_64")
    assert "libfastcdr.so.2" in closure.conflicts
    shared, private = _split(closure, roots)
    for root in roots:
        own = private[root]
        assert "libfastcdr.so.2" in own and "libfastcdr.so.2" not in shared
        for soname, path in closure.paths_of[root].items():
            if soname not in own:  # a shared one loads nothing of a plugin's own
                assert not set(closure.elves[path].needed) & set(own), soname
        assert "libstdc++.so.6" in shared
