"""Which tests measure, and the guard that keeps them out of the parallel run.

`make test` runs the tests that do not measure side by side (pytest-xdist,
``-m "not measuring"``), then the ``measuring`` ones one at a time: those run
agents, namespaces, nftables, tc, RouDi or a benchmark, and two at once
perturb each other. Every ``e2e`` test is ``measuring``. A test that runs the
real agent without the mark fails in a parallel worker, saying so: through
``conftest.real_agent_path()``, or through the agent that mwperf finds by
default (a test's `mwperf` without ``--agent``), which there describes itself
but refuses to run anything.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

_guard_dir: str | None = None
REAL_AGENT = Path(__file__).resolve().parents[2] / "agent" / "build" / "mwperf-agent"
REFUSAL = ("this test runs the real agent: mark it `measuring` (run one at a time, apart from the tests "
           "that run side by side)")


def in_parallel_worker() -> bool:
    """True in a worker of pytest-xdist (the tests that do not measure, side by side)."""
    return "PYTEST_XDIST_WORKER" in os.environ


def running_in_parallel() -> bool:
    """A test runs in a parallel worker now (not the collection: a module may
    describe the agent as it is imported)."""
    return in_parallel_worker() and _running


_running = False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    global _running
    _running = True
    try:
        return (yield)
    finally:
        _running = False


def pytest_configure(config):
    if in_parallel_worker():
        _guard_default_agent()


def pytest_unconfigure(config):
    if _guard_dir is not None:
        shutil.rmtree(_guard_dir, ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("e2e") is not None and item.get_closest_marker("measuring") is None:
            item.add_marker(pytest.mark.measuring)


def _guard_default_agent() -> None:
    global _guard_dir
    _guard_dir = tempfile.mkdtemp(prefix="mwperf-test-guard-")
    real = os.environ.get("MWPERF_AGENT") or str(REAL_AGENT)
    guard = Path(_guard_dir) / "mwperf-agent"
    guard.write_text(f'#!/bin/sh\ncase "$1" in list|version|cleanup) exec "{real}" "$@";; esac\n'
                     f'echo "mwperf-agent $1: {REFUSAL}" >&2\nexit 3\n')
    guard.chmod(0o755)
    os.environ["MWPERF_AGENT"] = str(guard)
