"""Adapters as plugins, loaded on demand (agent/src/plugins/plugins.h).

Ground truth the tests set up or read themselves, never the agent's word:
* a copy of the built agent and its plugins in a folder of its own (they are
  found next to the executable), whose processes are told apart by their
  /proc/PID/exe;
* what a udp point's agents map and their peak RSS, read from /proc while
  they run (and the record's rss_kb next to it);
* one plugin's own library made unloadable in a mount namespace (an empty
  file bound over it): that adapter is listed missing with the library's
  name, every other one available, and a udp point still runs.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import real_agent_path
from conftest import written

pytestmark = pytest.mark.e2e

RSS_LIMIT_KB = 8 * 1024
# What the agent executable itself may map: the C and C++ runtimes.
RUNTIME = ("libc.so", "libstdc++.so", "libm.so", "libgcc_s.so", "ld-linux")


@pytest.fixture(scope="module")
def agent_copy(tmp_path_factory) -> Path:
    built = real_agent_path()
    if built is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    folder = tmp_path_factory.mktemp("agent-copy")
    shutil.copy2(built, folder / "mwperf-agent")
    shutil.copy2(built.parent / "roudi.toml", folder / "roudi.toml")
    shutil.copytree(built.parent / "adapters", folder / "adapters")
    return folder / "mwperf-agent"


def listed(agent: Path, *wrap: str) -> tuple[set[str], dict[str, str]]:
    """(adapters available, {missing adapter: reason}) of ``agent list``."""
    out = subprocess.run([*wrap, str(agent), "list"], capture_output=True, text=True, timeout=60, check=True).stdout
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    (head,) = [e for e in events if e["event"] == "agent"]
    return {e["name"] for e in events if e["event"] == "adapter"}, {m["name"]: m["reason"] for m in head["missing"]}


def plugins(agent: Path) -> list[str]:
    return sorted(p.name[len("libmwperf-"):-len(".so")] for p in (agent.parent / "adapters").glob("libmwperf-*.so"))


def resolved_libraries(path: Path) -> dict[str, str]:
    """{soname: file} of what the loader maps for ``path`` (ldd)."""
    out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=30).stdout
    return {name: os.path.realpath(where.split(" (")[0].strip())
            for name, _, where in (line.strip().partition(" => ") for line in out.splitlines())
            if where.startswith("/")}


def mwperf_run(agent: Path, out: Path, *args: str, wrap: tuple[str, ...] = ()) -> subprocess.Popen:
    # --no-floor: the floor is not what this module checks (test_floor_* do)
    return subprocess.Popen([*wrap, sys.executable, "-m", "mwperf", "run", "--no-floor", "--agent", str(agent), *args,
                             "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_the_agent_executable_needs_only_the_runtime(agent_copy):
    libraries = resolved_libraries(agent_copy)
    assert libraries and all(name.startswith(RUNTIME) for name in libraries), libraries


def test_a_udp_point_maps_no_middleware_and_stays_under_8_mib_per_side(agent_copy, tmp_path):
    proc = mwperf_run(agent_copy, tmp_path / "run", "--mw", "udp", "--mode", "latency", "--size", "64",
                      "--duration", "2s")
    peak: dict[int, int] = {}  # pid: VmHWM kB, read while it runs
    mapped: dict[int, set[str]] = {}
    while proc.poll() is None:
        for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
            try:
                argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
                if os.readlink(f"/proc/{pid}/exe") != str(agent_copy) or argv[1:2] != [b"run"]:
                    continue  # not this copy's agent, or its `list` (which loads every plugin, each in a child)
                status = Path(f"/proc/{pid}/status").read_text()
                maps = Path(f"/proc/{pid}/maps").read_text()
            except OSError:
                continue
            hwm = [int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")]
            peak[pid] = max(peak.get(pid, 0), *hwm)
            fields = [line.split(None, 5) for line in maps.splitlines()]
            mapped.setdefault(pid, set()).update(f[5] for f in fields if len(f) == 6 and f[5].startswith("/"))
        time.sleep(0.05)
    _, err = proc.communicate()
    assert proc.returncode == 0, err[-2000:]
    assert len(peak) >= 2, f"saw {len(peak)} agent process(es) of {agent_copy}"
    for pid, files in mapped.items():
        foreign = sorted(f for f in files if ".so" in Path(f).name and not Path(f).name.startswith(RUNTIME)
                         and f != "/etc/ld.so.cache")
        assert not foreign, f"agent {pid} of a udp point maps {foreign}"
    assert max(peak.values()) < RSS_LIMIT_KB, f"peak RSS per agent (kB): {peak}"
    (record,) = written(tmp_path / "run")
    assert all(0 < kb < RSS_LIMIT_KB for kb in record["rss_kb"].values()), record["rss_kb"]


def test_a_missing_library_refuses_only_its_own_adapter(agent_copy, tmp_path):
    if os.geteuid() != 0:
        pytest.skip("hiding a library needs a mount namespace (root)")
    names = plugins(agent_copy)
    if not names:
        pytest.skip("the agent is built with no plugin")
    deps = {name: resolved_libraries(agent_copy.parent / "adapters" / f"libmwperf-{name}.so") for name in names}
    # One plugin's library that no other plugin, nor the agent, maps.
    others = {name: set().union(*(set(d.values()) for n, d in deps.items() if n != name),
                                resolved_libraries(agent_copy).values()) for name in names}
    victim, soname, path = next(((n, s, p) for n in names for s, p in deps[n].items() if p not in others[n]),
                                (None, None, None))
    if victim is None:
        pytest.skip("no plugin has a library of its own")
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    hide = ("unshare", "--mount", "sh", "-c", f'mount --bind "{empty}" "{path}" && exec "$@"', "hide")

    available, missing = listed(agent_copy, *hide)
    assert victim in missing and Path(path).name in missing[victim], (victim, path, missing)
    assert available == (set(listed(agent_copy)[0]) - {victim}), (available, missing)

    refused = subprocess.run([*hide, str(agent_copy), "run", "--role", "sub", "--mw", victim],
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and victim in refused.stderr and Path(path).name in refused.stderr, refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr

    proc = mwperf_run(agent_copy, tmp_path / "run", "--mw", "udp", "--mode", "latency", "--size", "64",
                      "--duration", "1s", wrap=hide)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err[-2000:]
    assert [r["status"] for r in written(tmp_path / "run")] == ["ok"]


def test_a_plugin_file_gone_is_named(agent_copy, tmp_path):
    names = plugins(agent_copy)
    if not names:
        pytest.skip("the agent is built with no plugin")
    copy = tmp_path / "agent"
    shutil.copytree(agent_copy.parent, copy)
    gone = copy / "adapters" / f"libmwperf-{names[0]}.so"
    gone.unlink()
    available, missing = listed(copy / "mwperf-agent")
    assert str(gone) in missing[names[0]] and "udp" in available and names[0] not in available
