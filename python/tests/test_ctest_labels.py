"""ctest's labels: `unit` (the core's and util's tests, run side by side by
`make test`) and `adapters` (the tests that open a middleware, one at a time)
cover every agent test, and `unit` every test of the core."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

AGENT = Path(__file__).resolve().parents[2] / "agent"
BUILD = AGENT / "build"


def names(*args: str) -> list[str]:
    if shutil.which("ctest") is None or not (BUILD / "CTestTestfile.cmake").exists():
        pytest.skip("the agent's tests are not built (agent/build)")
    out = subprocess.run(["ctest", "--test-dir", str(BUILD), "-N", *args], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return re.findall(r"Test\s+#\d+: (\S+)", out)


def listed(*args: str) -> set[str]:
    return set(names(*args))


def test_every_agent_test_name_is_unique():
    """The adapters with a test binary of their own (ros2, fastdds-jazzy) run the
    tests every binary has (Registry.*) too: each under its own name (ctest -R
    picks one, and a report tells them apart)."""
    all_names = names()
    assert all_names and sorted({n for n in all_names if all_names.count(n) > 1}) == []


def test_every_agent_test_has_a_label():
    assert listed() and listed("-LE", "unit|adapters") == set()


def test_unit_covers_every_core_test():
    suites = set()
    for source in [*(AGENT / "tests" / "core").glob("*.cpp"), *(AGENT / "tests" / "util").glob("*.cpp")]:
        suites |= set(re.findall(r"^TEST\((\w+),\s*(\w+)\)", source.read_text(), re.M))
    unit = listed("-L", "unit")
    assert suites and {f"{suite}.{name}" for suite, name in suites} <= unit
    assert not any(name.startswith(("Registered/EveryAdapter", "Udp.", "Tcp.")) for name in unit)
