"""Shared fixtures: the fake agent, the real agent, golden files, process
checks, and the e2e guards (no packet leaves loopback, no shared-memory
segment is left behind)."""

from __future__ import annotations

import fnmatch
import os
import re
import shutil
import stat
import subprocess
import sys
import warnings
from contextlib import contextmanager
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
GOLDEN = TESTS / "golden"
FAKE_AGENT = TESTS / "fake_agent.py"
REAL_AGENT = TESTS.parents[1] / "agent" / "build" / "mwperf-agent"


def pytest_configure(config):
    config.addinivalue_line("markers", "e2e: end-to-end tests against the real mwperf-agent binary")


def write_script(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


@pytest.fixture
def fake_agent(tmp_path) -> Path:
    """An executable that runs tests/fake_agent.py with this interpreter."""
    return write_script(tmp_path / "fake-agent", f'#!/bin/sh\nexec "{sys.executable}" "{FAKE_AGENT}" "$@"\n')


def real_agent_path() -> Path | None:
    path = Path(os.environ.get("MWPERF_TEST_AGENT", REAL_AGENT))
    return path if path.is_file() and os.access(path, os.X_OK) else None


def pid_alive(pid: int) -> bool:
    """True if ``pid`` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


def pids_with_cmdline(marker: str) -> list[int]:
    """Live processes whose command line contains ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmdline and pid_alive(int(entry)):
            found.append(int(entry))
    return found


def check_golden(name: str, text: str) -> None:
    """Compare with tests/golden/NAME; MWPERF_UPDATE_GOLDEN=1 rewrites it."""
    path = GOLDEN / name
    if os.environ.get("MWPERF_UPDATE_GOLDEN") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"{path} missing: run with MWPERF_UPDATE_GOLDEN=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert text == expected, f"{name} differs from the golden file (MWPERF_UPDATE_GOLDEN=1 to accept)"


# -- e2e guard: no packet leaves loopback -------------------------------------

NFT_TABLE = "mwperf_test_watch"
_active_watch: "LoopbackWatch | None" = None


class LoopbackWatch:
    """An nftables table (inet family, output hook) whose one rule counts the
    packets leaving through any interface but lo. ``reason`` says why the
    check cannot be made here (not root, no nft), and then it counts nothing."""

    def __init__(self) -> None:
        self.reason: str | None = None
        if os.geteuid() != 0:
            self.reason = "not root"
        elif shutil.which("nft") is None:
            self.reason = "nft missing"

    @staticmethod
    def _nft(*args: str, check: bool = True) -> str:
        done = subprocess.run(["nft", *args], capture_output=True, text=True, timeout=10)
        if check and done.returncode != 0:
            raise RuntimeError(f"nft {' '.join(args)}: {done.stderr.strip()}")
        return done.stdout

    def start(self) -> None:
        if self.reason:
            return
        self._nft("delete", "table", "inet", NFT_TABLE, check=False)  # left by a killed session
        try:
            self._nft("add", "table", "inet", NFT_TABLE)
            self._nft("add", "chain", "inet", NFT_TABLE, "out",
                      "{ type filter hook output priority 0; policy accept; }")
            self._nft("add", "rule", "inet", NFT_TABLE, "out", "oifname", "!=", "lo", "counter")
        except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
            self.stop()
            self.reason = f"nftables unusable: {exc}"

    def packets(self) -> int:
        if self.reason:
            return 0
        found = re.search(r"counter packets (\d+)", self._nft("list", "table", "inet", NFT_TABLE))
        assert found, f"no counter in nft table {NFT_TABLE}"
        return int(found.group(1))

    def stop(self) -> None:
        if shutil.which("nft") and os.geteuid() == 0:
            self._nft("delete", "table", "inet", NFT_TABLE, check=False)


@contextmanager
def watch_loopback():
    """Yields the active LoopbackWatch (one table, reused when nested)."""
    global _active_watch
    if _active_watch is not None:
        yield _active_watch
        return
    watch = LoopbackWatch()
    watch.start()
    _active_watch = watch
    try:
        yield watch
    finally:
        _active_watch = None
        watch.stop()


@contextmanager
def count_leaving_packets():
    """Yields a dict whose "packets" is, on exit, the packets that left a
    non-loopback interface meanwhile (0 when the check cannot be made)."""
    with watch_loopback() as watch:
        result = {"packets": 0, "reason": watch.reason}
        before = watch.packets()
        yield result
        result["packets"] = watch.packets() - before


@pytest.fixture
def no_packet_leaves_loopback():
    """Every e2e test: no packet may leave through an interface other than lo."""
    with count_leaving_packets() as counted:
        if counted["reason"]:
            warnings.warn(f"no-packet-leaves-loopback check skipped: {counted['reason']}")
        yield
    assert counted["packets"] == 0, f"{counted['packets']} packet(s) left through a non-loopback interface"


# -- e2e guard: no shared-memory segment left ----------------------------------

SHM_DIR = Path("/dev/shm")
SHM_PATTERNS = ("fastrtps_*", "fast_datasharing_*", "iox*", "*zenoh*", "mwp[0-9]*_*", "iceoryx_mgmt")


def shm_segments() -> set[str]:
    try:
        names = os.listdir(SHM_DIR)
    except OSError:
        return set()
    return {n for n in names if any(fnmatch.fnmatchcase(n, p) for p in SHM_PATTERNS)}


def leftover_segments(before: set[str]) -> list[str]:
    """Segments that were not there before and no live process uses (others'
    concurrent middleware runs keep theirs open)."""
    from mwperf.execute.cleanup import referenced_paths

    new = shm_segments() - before
    if not new:
        return []
    used, _ = referenced_paths()
    return sorted(n for n in new if str(SHM_DIR / n) not in used)


@pytest.fixture
def no_shm_leftovers():
    before = shm_segments()
    yield
    left = leftover_segments(before)
    assert not left, f"shared-memory segments left in {SHM_DIR}: {', '.join(left)}"


# -- the agent's description of itself ------------------------------------------

LIST_FIXTURE = FIXTURES / "agent-list.jsonl"


def described(only=None):
    """The real agent's ``list`` as recorded in fixtures/agent-list.jsonl (a
    test keeps it equal to the built agent's): the controller's only source of
    what can be asked, for tests that run no agent. ``only``: keep these adapters."""
    import dataclasses
    import json

    from mwperf.description import AgentInfo

    events = [json.loads(line) for line in LIST_FIXTURE.read_text().splitlines() if line.strip()]
    info = AgentInfo.from_events(events)
    if only is not None:
        info = dataclasses.replace(info, adapters={k: v for k, v in info.adapters.items() if k in only})
    return info


# -- run options as the command line spells them ----------------------------------

_LISTS = {"mw": "mws", "mode": "modes", "size": "sizes", "rate": "rates", "demands": "demands", "subscribers": "subscribers"}
_QOS_LISTS = {"reliability": "reliabilities", "history": "histories", "durability": "durabilities",
              "transport": "transports"}


def _fields(options: dict, lists: dict) -> dict:
    return {lists.get(key, key): tuple(value.split(",")) if key in lists and value is not None else value
            for key, value in options.items()}


def qos_request(**options):
    """A QosRequest from the options as ``mwperf run`` spells them (``reliability="reliable,best-effort"``)."""
    from mwperf.plan.qos import QosRequest

    return QosRequest(**_fields(options, _QOS_LISTS))


def run_request(qos=None, **options):
    """A RunRequest from the options as ``mwperf run`` spells them (``mw="udp,tcp"``, ``qos=dict(async_=True)``)."""
    from mwperf.plan.options import RunRequest

    return RunRequest(**_fields(options, _LISTS), qos=qos_request(**(qos or {})))
