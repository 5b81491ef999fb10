"""Every adapter the agent is built with, in every mode, end to end on loopback.

The adapters come from the agent's description of itself: a new adapter is
tested here by being registered. Each adapter runs once per module (four
short points: latency, throughput, rate, burst) and is checked by several
tests: every point ok, what the middleware promises (reliable: nothing
lost), no packet off loopback, no shared memory or helper process (RouDi,
rosmaster) left behind. Then what each adapter refuses, and the large
messages and links the ROS and zenoh issues name. No timing is asserted:
another benchmark may share the machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from conftest import count_leaving_packets, leftover_segments, pids_with_cmdline, real_agent_path, shm_segments
from mwperf.execute.agent import describe
from conftest import written
from mwperf.model.schema import validate_record

pytestmark = pytest.mark.e2e

MODES = ("latency", "throughput", "rate", "burst")
SHORT = ("--size", "1k", "--duration", "1s", "--warmup", "500ms", "--rate", "200", "--demand", "10",
         "--burst-gap", "20ms", "--latency-count", "100")
ROOT = os.geteuid() == 0


def agent_info():
    path = real_agent_path()
    if path is None:
        return None, None
    return str(path), describe(str(path))


AGENT, INFO = agent_info()
ADAPTERS = sorted(INFO.adapters) if INFO is not None else []


def mwperf(*args, timeout=300):
    if args and args[0] == "run":  # the floor is not what this module checks (test_floor_* do)
        args = ("run", "--no-floor", *args[1:])
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=timeout)


def helpers_running() -> list[int]:
    """RouDi and rosmaster processes (ours: whatever runs them now is a leftover of a run)."""
    return pids_with_cmdline("iox-roudi") + pids_with_cmdline("rosmaster --core")


def run_points(tmp_path_factory, name, *args):
    out = tmp_path_factory.mktemp(name) / "run"
    before = shm_segments()
    with count_leaving_packets() as leaving:
        done = mwperf("run", "--agent", AGENT, *args, "--out", str(out))
    records = written(out) if (out / "results.jsonl").exists() else []
    return {"done": done, "records": records, "leaving": leaving["packets"], "shm_left": leftover_segments(before),
            "helpers": helpers_running()}


def side_by_side(mw: str):
    """Every adapter's run but iceoryx's (RouDi: one per machine) and ros1's (roscpp
    drops what overflows its subscriber queue: a busy machine loses some of 200 Hz
    'reliable', seen side by side) may run next to others; each keeps its three
    tests on one worker (the run is module-scoped)."""
    if mw in ("iceoryx", "ros1"):
        return pytest.param(mw)
    return pytest.param(mw, marks=[pytest.mark.side_by_side, pytest.mark.xdist_group(f"adapters-{mw}")])


@pytest.fixture(scope="module", params=[side_by_side(mw) for mw in ADAPTERS] or ["(none built)"])
def every_mode(request, tmp_path_factory):
    mw = request.param
    if AGENT is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    return mw, run_points(tmp_path_factory, mw, "--mw", mw, "--mode", ",".join(MODES), *SHORT)


def test_every_mode_runs_and_says_what_it_measured(every_mode):
    mw, run = every_mode
    done = run["done"]
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr[-3000:]
    assert [r["mode"] for r in run["records"]] == list(MODES)
    info = INFO.adapters[mw]
    for r in run["records"]:
        validate_record(r)
        assert r["status"] == "ok", (r["mode"], r["error"])
        assert r["mw"] == mw and r["adapter"]["version"]
        assert r["transport"] in (*info.transports, info.transport) and r["reliability"] in info.reliabilities
        assert r["sent"] > 0 and r["received"] > 0
        assert r["threads"]["pub"] and any(t["own"] for t in r["threads"]["pub"])
    burst = run["records"][3]
    # a burst once begun is written whole: what did not go out, the middleware refused
    assert burst["demand"] == 10 and burst["sent"] + burst["send_timeouts"] == 10 * burst["bursts"]
    assert burst["burst_first_us"]["count"] > 0 and burst["burst_last_us"]["count"] > 0


def test_reliable_by_default_loses_nothing(every_mode):
    mw, run = every_mode
    for r in run["records"]:
        # Flat out and in bursts a reliable keep-last:10 writer (or reader queue) may overwrite what
        # the reader has not taken: that loss is the QoS's (test_patterns checks bursts under keep-all).
        # One ping at a time, or 200 Hz, nothing may be missing.
        if r["reliability"] == "reliable" and r["status"] == "ok" and r["mode"] in ("latency", "rate"):
            assert r["lost"] == 0 and r["loss_rate"] == 0, (r["mode"], r["lost"])


def test_stays_on_this_host_and_leaves_nothing(every_mode):
    mw, run = every_mode
    assert run["leaving"] == 0, f"{run['leaving']} packet(s) of {mw} left loopback"
    assert not run["shm_left"], f"{mw} left {run['shm_left']}"
    assert not run["helpers"], f"helper processes left after {mw}: {run['helpers']}"
    assert not pids_with_cmdline("mwperf-agent run")


# -- refusals: one line naming the value, exit 2, before anything runs ------------
# (nothing runs: side by side)

def refusal(*args):
    if AGENT is None:
        pytest.skip("the agent binary is not built yet")
    # a directory of this call's own that is never made (a fixed path is shared with every other session)
    out = Path(tempfile.mkdtemp(prefix="mwperf-refusal-")) / "never-made"
    done = mwperf("run", "--agent", AGENT, *args, "--out", str(out), timeout=60)
    made = out.exists()
    shutil.rmtree(out.parent, ignore_errors=True)
    assert done.returncode == 2 and not made, done.stderr
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    return done.stderr


def built(mw):
    if mw not in ADAPTERS:
        pytest.skip(f"the agent is built without {mw}")


@pytest.mark.side_by_side
@pytest.mark.parametrize("mw", ["iceoryx", "iceoryx2"])
def test_shared_memory_middlewares_refuse_two_hosts(mw):
    built(mw)
    assert "one host only" in refusal("--mw", mw, "--link", "netns:gige")


@pytest.mark.side_by_side
@pytest.mark.parametrize("mw", ["ros1", "ros2", "iceoryx", "iceoryx2", "zenoh"])
def test_no_keys_where_the_layer_has_none(mw):
    built(mw)
    assert refusal("--mw", mw, "--keyed") == f"mwperf: error: --instances 1: not supported by {mw} (no keyed topics)\n"


@pytest.mark.side_by_side
@pytest.mark.parametrize("mw", ADAPTERS)
def test_above_the_largest_message_is_refused_with_the_limit(mw):
    limit, why = INFO.adapters[mw].max_size, INFO.adapters[mw].max_size_note
    assert why, f"{mw} does not say whose its limit is"  # the middleware's, or mwperf's own cap, and why
    err = refusal("--mw", mw, "--size", str(limit + 1))
    assert err == f"mwperf: error: --size {limit + 1}: {mw} carries at most {limit} bytes per message: {why}\n"


@pytest.mark.side_by_side
def test_ros1_has_no_best_effort():
    built("ros1")
    assert refusal("--mw", "ros1", "--best") == ("mwperf: error: --reliability best-effort: not supported by ros1 "
                                                 "(choose from: reliable)\n")


@pytest.mark.side_by_side
def test_congestion_is_zenohs():
    built("zenoh")
    assert "--congestion drop: not supported by cyclonedds" in refusal("--mw", "zenoh,cyclonedds",
                                                                       "--congestion", "drop")


# -- what issues 13 and 14 ask for by name -----------------------------------------

def one_point(tmp_path_factory, name, *args, timeout=300):
    run = run_points(tmp_path_factory, name, *args)
    done = run["done"]
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr[-3000:]
    assert run["leaving"] == 0 and not run["shm_left"] and not run["helpers"], run
    (record,) = run["records"]
    validate_record(record)
    assert record["status"] == "ok", record["error"]
    return record


@pytest.mark.side_by_side
def test_ros2_reliable_4mib_loses_nothing(tmp_path_factory):
    built("ros2")
    r = one_point(tmp_path_factory, "ros2-4m", "--mw", "ros2", "--reliability", "reliable", "--mode", "rate",
                  "--rate", "20", "--size", "4MiB", "--duration", "2s", "--warmup", "1s", "--history", "keep-all")
    assert r["sent"] == 40 and r["received"] == 40 and r["lost"] == 0
    assert r["adapter"]["config"]["rmw"] and r["size"] == 4 << 20


def test_ros1_carries_16mib(tmp_path_factory):
    built("ros1")
    r = one_point(tmp_path_factory, "ros1-16m", "--mw", "ros1", "--mode", "latency", "--size", "16MiB",
                  "--duration", "2s", "--warmup", "500ms")
    assert r["size"] == 16 << 20 and r["received"] == r["sent"] > 0


@pytest.mark.skipif(not ROOT, reason="network namespaces need root")
@pytest.mark.parametrize("mw", ["zenoh", "ros1", "ros2"])
def test_over_a_gigabit_link_between_namespaces(tmp_path_factory, mw):
    built(mw)
    r = one_point(tmp_path_factory, f"{mw}-gige", "--mw", mw, "--mode", "rate", "--rate", "100", "--size", "1k",
                  "--duration", "1s", "--warmup", "1s", "--link", "netns:gige")
    assert r["link"]["profile"] == "gige" and r["lost"] == 0 and r["received"] == r["sent"] == 100


# -- a killed controller: the next run removes what it left -------------------------

@pytest.mark.parametrize("mw, helper", [("iceoryx", "iox-roudi"), ("ros1", "rosmaster --core")])
def test_what_a_killed_run_left_the_next_run_removes(tmp_path, mw, helper):
    built(mw)
    import signal
    import time
    out = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-m", "mwperf", "run", "--agent", AGENT, "--mw", mw, "--duration", "20s",
                             "--out", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ))
    deadline = time.monotonic() + 30
    # its agents: their --samples-out lies in its run directory (never another run's agents)
    while time.monotonic() < deadline and not pids_with_cmdline(f"--role pub --mw {mw}"):
        time.sleep(0.1)
    assert pids_with_cmdline(helper), f"no {helper} while the point runs"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    time.sleep(0.5)
    # the agents of the killed run finish their 20 s on their own; the next run must not wait for them
    for pid in pids_with_cmdline(f"{out}/"):
        os.kill(pid, signal.SIGKILL)
    before = shm_segments()
    done = mwperf("run", "--agent", AGENT, "--mw", "udp", "--duration", "200ms", "--warmup", "100ms",
                  "--out", str(tmp_path / "next"))
    assert done.returncode == 0, done.stderr
    assert not pids_with_cmdline(helper), f"{helper} of the killed run still runs"
    assert not leftover_segments(before | {"iceoryx_mgmt"}) and not os.path.exists("/dev/shm/iceoryx_mgmt")
