"""The new builds (fastdds3, ros2-kilted, cyclonedds11) end to end: each names
the library its process loaded (ground truth: the library files of its prefix,
and a copy of Cyclone's under another version, put first by LD_LIBRARY_PATH),
and the cross-vendor cells of old against new builds pass or fail with the
middlewares' own reason."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import agent_with, count_leaving_packets, written

pytestmark = pytest.mark.e2e

DEPS = Path(__file__).resolve().parents[3] / ".deps"
SHORT = ("--mode", "latency", "--size", "1k", "--duration", "300ms", "--warmup", "100ms", "--no-floor")


def file_version(prefix: Path, stem: str) -> str:
    """The version in the name of PREFIX/lib/STEM's real file (libfastdds.so.3.2.2 -> 3.2.2; a
    wheel ships copies, not links: the longest name of the stem)."""
    names = [p.name for p in (prefix / "lib").glob(stem + ".*")] + [(prefix / "lib" / stem).resolve().name]
    found = [m.group(1) for n in names if (m := re.fullmatch(re.escape(stem) + r"\.([\d.]+)", n))]
    return max(found, key=len)


def run(tmp_path, *args, env=None):
    out = tmp_path / "run"
    with count_leaving_packets() as leaving:
        done = subprocess.run([sys.executable, "-m", "mwperf", "run", *args, *SHORT, "--out", str(out)],
                              capture_output=True, text=True, env=env or dict(os.environ), timeout=300)
    assert "Traceback" not in done.stderr and leaving["packets"] == 0
    return done, (written(out) if (out / "results.jsonl").exists() else [])


@pytest.mark.side_by_side
@pytest.mark.xdist_group("versions-loaded")
def test_each_new_build_names_the_libraries_it_loaded(tmp_path):
    agent = agent_with("fastdds3")
    agent_with("ros2-kilted"), agent_with("cyclonedds11")
    done, records = run(tmp_path, "--agent", agent, "--mw", "fastdds3,ros2-kilted,cyclonedds11")
    assert done.returncode == 0, done.stderr[-3000:]
    got = {r["mw"]: r["adapter"]["versions"] for r in records if r["status"] == "ok" and r["received"] > 0}
    kilted = DEPS / "kilted"
    fastdds, fastcdr = file_version(kilted, "libfastdds.so"), file_version(kilted, "libfastcdr.so")
    assert fastdds.startswith("3.") and fastcdr.startswith("2.")
    assert got["fastdds3"] == {"fastdds": fastdds, "fastcdr": fastcdr}
    assert got["ros2-kilted"]["fastdds"] == fastdds and got["ros2-kilted"]["rcl"].startswith("10.")
    assert got["cyclonedds11"] == {"cyclonedds": file_version(DEPS / "cyclonedds11", "libddsc.so")}


@pytest.mark.side_by_side
@pytest.mark.xdist_group("versions-loaded")
def test_cyclonedds11_names_the_libddsc_loaded_not_the_headers(tmp_path):
    """A copy of Cyclone 11's libddsc under another version (11.0.99), first on
    LD_LIBRARY_PATH: the record names it, not the 11.0.1 of the headers built against."""
    agent = agent_with("cyclonedds11")
    lib = DEPS / "cyclonedds11" / "lib"
    other = tmp_path / "lib"
    other.mkdir()
    shutil.copy(lib / "libddsc.so.11", other / "libddsc.so.11.0.99")
    (other / "libddsc.so.11").symlink_to("libddsc.so.11.0.99")
    env = dict(os.environ, LD_LIBRARY_PATH=str(other))
    done, records = run(tmp_path, "--agent", agent, "--mw", "cyclonedds11", env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert records[0]["adapter"]["versions"] == {"cyclonedds": "11.0.99"}


#: Old against new: (publisher, subscriber) both ways, on UDP (shared memory does not cross versions of Fast DDS).
CELLS = [("fastdds3", "fastdds-jazzy"), ("fastdds-jazzy", "fastdds3"), ("cyclonedds11", "cyclonedds"),
         ("cyclonedds", "cyclonedds11"), ("ros2-kilted", "ros2"), ("ros2", "ros2-kilted")]


@pytest.mark.side_by_side
@pytest.mark.parametrize("pub, sub", CELLS, ids=[f"{p}-{s}" for p, s in CELLS])
def test_a_new_build_and_an_old_one_exchange_samples(tmp_path, pub, sub):
    agent = agent_with(pub)
    agent_with(sub)
    done, records = run(tmp_path, "--agent", agent, "--mw", pub, "--peer-mw", sub, "--transport", "udp")
    assert done.returncode == 0, done.stderr[-3000:]
    (r,) = records
    assert (r["mw"], r["peer_mw"], r["status"]) == (pub, sub, "ok"), r.get("error")
    assert r["received"] > 0 and r["lost"] == 0
