"""What each adapter says it did, against ground truth the test sets up: a
fan-out whose every subscriber must get every ping, shared memory that must
really carry the samples (and a copy where the test takes the shared memory
away), limits refused with the middleware's reason, versions in the record.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from conftest import count_leaving_packets, real_agent_path
from mwperf.execute.agent import describe
from mwperf.results.rundir import read_records
from mwperf.results.schema import validate_record

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_shm_leftovers")]


def agent(mw: str) -> str:
    path = real_agent_path()
    if path is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    if mw not in describe(str(path)).adapters:
        pytest.skip(f"the agent is built without {mw}")
    return str(path)


def mwperf(mw, *args, agent_path=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "mwperf", "run", "--agent", agent_path or agent(mw), "--mw", mw,
                           *args], capture_output=True, text=True, env=dict(os.environ), timeout=timeout)


def run(tmp_path, mw, *args, agent_path=None):
    out = tmp_path / "run"
    with count_leaving_packets() as leaving:
        done = mwperf(mw, *args, "--out", str(out), agent_path=agent_path)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr[-3000:]
    assert leaving["packets"] == 0
    (r,) = read_records(out)
    validate_record(r)
    assert r["status"] == "ok", r["error"]
    return r


@pytest.mark.parametrize("mw", ["iceoryx", "iceoryx2"])
def test_fan_out_in_latency_mode_every_subscriber_gets_every_ping(tmp_path, mw):
    """Four subscriber processes, the first echoing: each gets every ping the
    publisher counted as sent. The echo must not change the sample the other
    subscribers read (iceoryx shares one chunk among them: an echo flipped in
    place made the others file the ping as foreign), and every subscriber
    process must be let in (RouDi refuses a runtime name twice)."""
    r = run(tmp_path, mw, "--mode", "latency", "--subscribers", "4", "--size", "1k", "--duration", "1s",
            "--warmup", "300ms", "--reliability", "reliable")
    assert r["sent"] > 100
    for s in r["per_subscriber"]:
        assert s["received"] == r["sent"], s
    assert r["adapter"]["data_path"]["sub"]["receive"] == "loan"  # read in place, from the middleware's counters
    assert r["adapter"]["versions"] == {mw: r["adapter"]["version"].split()[-1]}
