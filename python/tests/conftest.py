"""Shared fixtures: the fake agent, the real agent, golden files, process checks."""

from __future__ import annotations

import os
import stat
import sys
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
