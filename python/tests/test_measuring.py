"""The measuring marks (measuring.py): ``side_by_side`` implies ``measuring``,
may not use what is the machine's, and in a parallel worker (and only there)
runs the real agent while every other test is refused it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path


import measuring

TESTS = Path(__file__).resolve().parent


class Item:
    """What measuring.py reads of a pytest item: its marks and fixtures."""

    def __init__(self, *marks: str, fixtures: tuple[str, ...] = ()) -> None:
        self.marks, self.fixturenames = marks, fixtures

    def get_closest_marker(self, name: str):
        return name if name in self.marks else None


def test_side_by_side_and_e2e_are_measuring():
    assert measuring.implied_markers(Item("side_by_side")) == ["measuring"]
    assert measuring.implied_markers(Item("e2e")) == ["measuring"]
    assert measuring.implied_markers(Item("side_by_side", "measuring")) == []
    assert measuring.implied_markers(Item()) == []


def test_a_side_by_side_test_may_not_set_up_the_machines_namespaces():
    assert measuring.apart_fixtures(Item("side_by_side", fixtures=("tmp_path", "netns_with_nth_drop"))) == [
        "netns_with_nth_drop"]
    assert measuring.apart_fixtures(Item("measuring", fixtures=("netns_with_nth_drop",))) == []
    assert measuring.apart_fixtures(Item("side_by_side", fixtures=("tmp_path",))) == []


def test_the_suites_side_by_side_tests_are_measuring_and_use_nothing_apart():
    done = subprocess.run([sys.executable, "-m", "pytest", str(TESTS), "-q", "--collect-only", "-p", "no:cacheprovider",
                           "-m", "side_by_side and not measuring"], capture_output=True, text=True, timeout=120)
    # exit 5: nothing selected; a side_by_side test with an apart fixture is a usage error (exit 4)
    assert done.returncode == 5, done.stdout[-2000:] + done.stderr[-2000:]


def pytester_run(tmp_path: Path, body: str, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "conftest.py").write_text('pytest_plugins = ("measuring",)\n')
    (tmp_path / "test_it.py").write_text(textwrap.dedent(body))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
               MWPERF_AGENT="/the/real/agent")
    env.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run([sys.executable, "-m", "pytest", str(tmp_path), "-q", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), *args], capture_output=True, text=True, env=env, timeout=120,
                          cwd=tmp_path)


def test_in_a_parallel_worker_only_a_side_by_side_test_runs_the_real_agent(tmp_path):
    done = pytester_run(tmp_path, """
        import os
        import pytest
        import measuring

        @pytest.mark.side_by_side
        def test_side_by_side():
            assert os.environ["MWPERF_AGENT"] == "/the/real/agent"
            assert not measuring.running_in_parallel()

        def test_other():
            assert os.environ["MWPERF_AGENT"] != "/the/real/agent"
            assert measuring.running_in_parallel()

        def test_after_side_by_side_the_guard_is_back():
            assert os.environ["MWPERF_AGENT"] != "/the/real/agent"
    """, "-n", "1", "-m", "not measuring or side_by_side")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "3 passed" in done.stdout


def test_side_by_side_with_an_apart_fixture_is_a_usage_error(tmp_path):
    done = pytester_run(tmp_path, """
        import pytest

        @pytest.fixture
        def netns_with_nth_drop():
            yield "ns"

        @pytest.mark.side_by_side
        def test_drops(netns_with_nth_drop):
            pass
    """, "--collect-only")
    assert done.returncode == 4, done.stdout[-2000:] + done.stderr[-2000:]
    assert "test_drops: side_by_side, but uses netns_with_nth_drop" in done.stdout + done.stderr
