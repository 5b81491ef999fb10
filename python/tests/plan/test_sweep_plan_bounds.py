"""Plans are bounded (issue 17, items 2, 3 and 9): no YAML alias expands, no
key is written twice, the file has a size cap and is read only if it is a
regular file, and the point count has a cap (with a way to raise it), counted
before anything is expanded and printed when large."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import described
from mwperf.errors import PlanError
from mwperf.plan.plan_file import MAX_DEPTH, MAX_PLAN_BYTES
from mwperf.plan.discovery_plan import is_discovery_plan
from mwperf.plan.scenario import is_scenario
from mwperf.plan.sweep_plan import MAX_POINTS, count_points, expand, load_plan, parse_plan

PLANS = Path(__file__).resolve().parents[3] / "plans"

LAUGHS = """\
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
mw: udp
description: [*i,*i,*i,*i,*i,*i,*i,*i,*i]
"""

#: 6 keys x 10 values x 10 repetitions: 10^7 points.
TEN_MILLION = """\
mw: [udp, tcp, m2, m3, m4, m5, m6, m7, m8, m9]
size: [32, 33, 34, 35, 36, 37, 38, 39, 40, 41]
duration: [1s, 2s, 3s, 4s, 5s, 6s, 7s, 8s, 9s, 10s]
warmup: [0s, 1s, 2s, 3s, 4s, 5s, 6s, 7s, 8s, 9s]
history: [keep-last:1, keep-last:2, keep-last:3, keep-last:4, keep-last:5, keep-last:6, keep-last:7, keep-last:8, keep-last:9, keep-all]
latency_count: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
mode: throughput
repetitions: 10
"""


def refused(text: str) -> str:
    with pytest.raises(PlanError) as caught:
        parse_plan(text, "p.yaml")
    message = str(caught.value)
    assert message.startswith("p.yaml: ") and "\n" not in message
    return message


def mwperf(*args: str, timeout: float = 60, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True,
                          timeout=timeout, **kw)


# -- YAML ------------------------------------------------------------------------------

def test_billion_laughs_is_refused_at_once_without_expanding():
    started = time.monotonic()
    message = refused(LAUGHS)
    assert "line 2: YAML aliases (*a) are not allowed in a plan" in message
    assert time.monotonic() - started < 1


def test_an_alias_anywhere_is_refused_but_an_unused_anchor_is_harmless():
    assert "aliases (*s)" in refused("mw: udp\nsize: &s 1k\nrate: *s\n")
    assert "aliases (*m)" in refused("mw: &m udp\nexclude:\n  - {mw: *m}\n")
    assert parse_plan("mw: &m udp\nsize: 1k\n", "p.yaml").options["mw"] == ("udp",)


def test_merge_keys_are_refused():
    assert "merge keys (<<)" in refused("mw: udp\n<<: {size: 1k}\n")


@pytest.mark.parametrize("text, fragment", [
    ("mw: udp\nsize: 1k\nmw: tcp\n", "line 3: mw: written twice (lines 1 and 3)"),
    ("mw: udp\nexclude:\n  - {mw: udp, mw: tcp}\n", "mw: written twice"),
    ("mw: udp\nmatch-timeout: 1s\nmatch_timeout: 2s\n", "match_timeout: the same key as match-timeout"),
    ("mw: udp\n'size': 1k\nsize: 2k\n", "size: written twice"),
])
def test_a_key_written_twice_is_refused(text, fragment):
    assert fragment in refused(text)


def test_deep_nesting_is_refused_without_reaching_the_recursion_limit():
    assert f"nested deeper than {MAX_DEPTH} levels" in refused("mw: udp\nsize: " + "[" * 100_000 + "]" * 100_000)
    assert "nested deeper" in refused("mw: udp\nsize:" + "".join(f"\n{'  ' * i}- " for i in range(1, 60)) + "1k\n")


def test_odd_values_are_one_line():
    assert "a number with too many digits" in refused("mw: udp\nsize: " + "9" * 5000 + "\n")
    assert "description: expected text" in refused("mw: udp\ndescription: {a: 1}\n")
    assert parse_plan("mw: udp\ndescription: 42\n", "p.yaml").description == "42"


# -- the file ---------------------------------------------------------------------------------

def test_dev_zero_and_other_devices_are_refused_at_once(tmp_path):
    for path in ("/dev/zero", "/dev/urandom", "/dev/null"):
        with pytest.raises(PlanError, match="not a regular file"):
            load_plan(path)


def test_a_fifo_is_refused_without_hanging(tmp_path):
    fifo = tmp_path / "plan.yaml"
    os.mkfifo(fifo)
    with pytest.raises(PlanError, match="not a regular file"):
        load_plan(fifo)


def test_a_plan_larger_than_the_cap_is_refused_before_it_is_read(tmp_path):
    plan = tmp_path / "big.yaml"
    with open(plan, "w") as handle:
        handle.write("mw: udp\ndescription: x\n")
        handle.truncate(8 << 30)  # 8 GiB, sparse
    with pytest.raises(PlanError, match=r"bytes: larger than a plan can be \(256 KiB\)"):
        load_plan(plan)
    plan.write_text("mw: udp\ndescription: " + "x" * MAX_PLAN_BYTES + "\n")
    with pytest.raises(PlanError, match="larger than a plan can be"):
        load_plan(plan)


def test_a_binary_plan_is_refused(tmp_path):
    plan = tmp_path / "plan.yaml"
    plan.write_bytes(b"mw: udp\n\xff\xfe\x00")
    with pytest.raises(PlanError, match="not a text"):
        load_plan(plan)


def test_sweep_dev_zero_is_one_line_at_once(fake_agent):
    started = time.monotonic()
    done = mwperf("sweep", "/dev/zero", "--dry-run", "--agent", str(fake_agent))
    assert done.returncode == 2 and done.stderr == "mwperf: error: /dev/zero: not a regular file (a plan is a YAML file)\n"
    assert time.monotonic() - started < 10


def test_sweep_of_the_alias_plan_is_one_line_in_bounded_memory(tmp_path, fake_agent):
    plan = tmp_path / "laughs.yaml"
    plan.write_text(LAUGHS)
    assert len(LAUGHS) < 1000
    done = mwperf("sweep", str(plan), "--dry-run", "--agent", str(fake_agent),
                  preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith(f"mwperf: error: {plan}: line 2: YAML aliases") and "Traceback" not in done.stderr


# -- the point count ------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "mw: [udp, tcp]\nsize: [32, 64, 128]\n",
    "mw: [udp, tcp]\nmode: [latency, rate, throughput]\nsize: [32, 64]\nrate: [10, 100, 1000]\n"
    "latency_count: [0, 100]\nrepetitions: 3\n",
    "mw: udp\nmode: rate\nrate: [10, 20]\nsize: [32, 1k]\nduration: [1s, 2s]\nwarmup: [0s, 1s]\n",
])
def test_the_count_is_what_expanding_gives(tmp_path, text):
    """Ground truth: the expanded plan (no exclude rules, no setting written twice)."""
    plan = parse_plan(text, "p.yaml")
    points = expand(plan, out=tmp_path, agent=None, agent_info=described(), cpu_count=2)
    assert count_points(plan) == len(points)


def test_the_bundled_plans_are_far_below_the_cap():
    for path in (p for p in PLANS.glob("*.yaml") if not is_scenario(p) and not is_discovery_plan(p)):
        assert count_points(load_plan(path)) < MAX_POINTS / 10, path


def test_ten_million_points_are_refused_at_once_in_bounded_memory(tmp_path, fake_agent):
    plan = tmp_path / "huge.yaml"
    plan.write_text(TEN_MILLION)
    assert count_points(parse_plan(TEN_MILLION, "p")) == 10 ** 7
    started = time.monotonic()
    done = mwperf("sweep", str(plan), "--dry-run", "--agent", str(fake_agent),
                  preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30)))
    assert time.monotonic() - started < 10
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"mwperf: error: {plan}: 10000000 points (before exclude rules): more than the 10000 a "
                           f"sweep may have (--max-points N or MWPERF_MAX_POINTS=N raises the limit)\n")


def test_the_cap_can_be_raised_and_lowered(tmp_path, fake_agent):
    plan = tmp_path / "p.yaml"
    plan.write_text("mw: udp\nsize: [32, 64, 128, 256]\nrepetitions: 5\n")
    done = mwperf("sweep", str(plan), "--dry-run", "--agent", str(fake_agent), "--max-points", "19")
    assert done.returncode == 2 and "20 points (before exclude rules): more than the 19" in done.stderr
    done = mwperf("sweep", str(plan), "--dry-run", "--agent", str(fake_agent), "--max-points", "20")
    assert done.returncode == 0 and done.stdout.endswith("\n4 points, 20 launches\n"), done.stderr
    done = mwperf("sweep", str(plan), "--dry-run", "--agent", str(fake_agent),
                  env=dict(os.environ, MWPERF_MAX_POINTS="10"))
    assert done.returncode == 2 and "more than the 10 " in done.stderr
    done = mwperf("sweep", str(plan), "--dry-run", "--agent", str(fake_agent), "--max-points", "0")
    assert done.returncode == 2 and "--max-points: 0: expected a whole number" in done.stderr
    for bad in ("abc", "0", "-5", "1e6"):  # never silently the default
        done = mwperf("sweep", str(plan), "--dry-run", "--agent", str(fake_agent),
                      env=dict(os.environ, MWPERF_MAX_POINTS=bad))
        assert done.returncode == 2 and done.stderr == (f"mwperf: error: MWPERF_MAX_POINTS={bad}: must be a whole "
                                                        "number of points, 1 or more\n"), done.stderr


def test_a_large_plan_says_its_count_before_expanding(tmp_path, fake_agent):
    plan = tmp_path / "p.yaml"
    plan.write_text("mw: [udp, tcp]\nsize: [" + ", ".join(str(32 + i) for i in range(600)) + "]\n")
    done = mwperf("sweep", str(plan), "--dry-run", "--agent", str(fake_agent))
    assert done.returncode == 0, done.stderr
    assert done.stderr == f"mwperf: {plan}: expanding and checking 1200 points (before exclude rules) ...\n"
    assert done.stdout.endswith("\n1200 points\n")
