"""Which tests measure, and the guard that keeps them out of the parallel run.

`make test` runs the tests that do not measure side by side (pytest-xdist,
``-m "not measuring"``), then the ``measuring`` ones one at a time: those run
agents, namespaces, nftables, tc, RouDi or a benchmark, and two at once
perturb each other. Every ``e2e`` test is ``measuring``. A test that runs the
real agent without the mark fails in a parallel worker, saying so: through
``conftest.real_agent_path()``, or through the agent that mwperf finds by
default (a test's `mwperf` without ``--agent``), which there describes itself
but refuses to run anything.

``side_by_side`` (which implies ``measuring``) marks the measuring tests that
may run next to others: each point takes its own run id (topic, port and
segment names), its run directory and the session's own lock, group and nft
watch table; the test sets up no namespace, nftables, tc, RouDi or mount,
touches nothing of the machine's, and asserts what a loaded machine keeps
(counts, reliability, refusals; no timing). `make test` runs them in the
parallel workers, where the real agent is theirs to run; one that asks for a
fixture of :data:`APART_FIXTURES` is an error at collection. A module whose
tests share a module-scoped run keeps them on one worker with
``pytest.mark.xdist_group`` (``--dist loadgroup``).
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
#: Fixtures that set up what is the machine's (namespaces, nftables, tc): never in a ``side_by_side`` test.
APART_FIXTURES = ("netns_with_nth_drop", "netns_dropping_one_flow", "netns_dropping_user_traffic", "netns")


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
    """In a parallel worker, a ``side_by_side`` test runs the real agent (and
    mwperf's default one is the real one); any other test is refused it."""
    global _running
    side_by_side = item.get_closest_marker("side_by_side") is not None
    _running = not side_by_side
    guard = os.environ.get("MWPERF_AGENT") if in_parallel_worker() and side_by_side else None
    if guard is not None:
        os.environ["MWPERF_AGENT"] = _real_agent
    try:
        return (yield)
    finally:
        _running = False
        if guard is not None:
            os.environ["MWPERF_AGENT"] = guard


_real_agent = str(REAL_AGENT)


def pytest_configure(config):
    if in_parallel_worker():
        _guard_default_agent()


def pytest_unconfigure(config):
    if _guard_dir is not None:
        shutil.rmtree(_guard_dir, ignore_errors=True)


def implied_markers(item) -> list[str]:
    """What the item's marks imply and it lacks: ``e2e`` and ``side_by_side`` are ``measuring``."""
    if item.get_closest_marker("measuring") is None and (item.get_closest_marker("e2e") is not None
                                                         or item.get_closest_marker("side_by_side") is not None):
        return ["measuring"]
    return []


def apart_fixtures(item) -> list[str]:
    """The fixtures of :data:`APART_FIXTURES` a ``side_by_side`` item asks for."""
    if item.get_closest_marker("side_by_side") is None:
        return []
    return [name for name in getattr(item, "fixturenames", ()) if name in APART_FIXTURES]


def pytest_collection_modifyitems(config, items):
    wrong = []
    for item in items:
        for name in implied_markers(item):
            item.add_marker(getattr(pytest.mark, name))
        if apart_fixtures(item):
            wrong.append(f"{item.nodeid}: side_by_side, but uses {', '.join(apart_fixtures(item))} (the machine's: "
                         f"run it apart)")
    if wrong:
        raise pytest.UsageError("\n".join(wrong))


def _guard_default_agent() -> None:
    global _guard_dir, _real_agent
    _guard_dir = tempfile.mkdtemp(prefix="mwperf-test-guard-")
    real = _real_agent = os.environ.get("MWPERF_AGENT") or str(REAL_AGENT)
    guard = Path(_guard_dir) / "mwperf-agent"
    guard.write_text(f'#!/bin/sh\ncase "$1" in list|version|cleanup) exec "{real}" "$@";; esac\n'
                     f'echo "mwperf-agent $1: {REFUSAL}" >&2\nexit 3\n')
    guard.chmod(0o755)
    os.environ["MWPERF_AGENT"] = str(guard)
