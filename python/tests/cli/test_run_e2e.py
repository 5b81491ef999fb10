"""End to end against the real agent (agent/build/mwperf-agent).

Skipped, with the reason, while the agent is not built. The agent is run
through a symlink in a temporary directory so that any process left behind
can be recognised by its command line.
"""

import csv
import json
import os
import subprocess
import sys
import time

import pytest

from conftest import PROVENANCE_KEYS, count_leaving_packets, pids_with_cmdline, real_agent_path, write_script
from conftest import written
from mwperf.model.schema import validate_record

pytestmark = [pytest.mark.e2e, pytest.mark.usefixtures("no_packet_leaves_loopback")]

#: The tests of the module's one run (the sweep fixture) run side by side on one worker (measuring.py):
#: loopback, counts and statuses; a rate point's publisher catches up what it fell behind (it only loses
#: what is due at its deadline), so half its 1000 Hz is what a loaded machine keeps.
SHARED_RUN = pytest.mark.xdist_group("run_e2e")


MWS = ("udp", "tcp")
MODES = ("latency", "throughput", "rate")


def require_agent():
    path = real_agent_path()
    if path is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent); build agent/ to run e2e tests")
    return path


def mwperf(*args, env=None, timeout=120):
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True,
                          env=env or dict(os.environ), timeout=timeout)


def wait_gone(marker, seconds=5.0):
    deadline = time.monotonic() + seconds
    while pids_with_cmdline(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return pids_with_cmdline(marker)


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """One run: udp,tcp x latency,throughput,rate, short points."""
    real = require_agent()
    base = tmp_path_factory.mktemp("e2e")
    link = base / "bin" / "mwperf-agent"
    link.parent.mkdir()
    link.symlink_to(real)
    out = base / "run"
    with count_leaving_packets() as leaving:
        done = mwperf("run", "--agent", str(link), "--mw", ",".join(MWS), "--mode", ",".join(MODES),
                      "--rate", "1000", "--size", "64", "--duration", "1s", "--warmup", "200ms",
                      "--latency-count", "1000", "--out", str(out), "--verbose")  # every table: checked below
    return {"done": done, "out": out, "marker": str(link), "leaving": leaving}


@pytest.mark.side_by_side
@SHARED_RUN
def test_sweep_exit_and_output(sweep):
    assert sweep["leaving"]["packets"] == 0, "packets left through a non-loopback interface"
    done = sweep["done"]
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    for mw in MWS:
        for mode in MODES:
            assert f"{mw} {mode} 64 B" in done.stderr
            assert f"== {mw} {mode} (" in done.stdout
    assert not wait_gone(sweep["marker"]), "agent processes left behind"


@pytest.mark.side_by_side
@SHARED_RUN
@pytest.mark.parametrize("mw", MWS)
@pytest.mark.parametrize("mode", MODES)
def test_point(sweep, mw, mode):
    records = [r for r in written(sweep["out"]) if r["mw"] == mw and r["mode"] == mode]
    assert len(records) == 1
    r = records[0]
    validate_record(r)
    assert r["status"] == "ok", r["error"]
    assert r["sent"] > 0
    assert r["received"] + r["lost"] == r["sent"]
    if mw == "tcp":
        assert r["lost"] == 0
        assert r["reliability"] == "reliable"
    else:
        assert r["reliability"] == "best-effort"
    assert r["transport"] == mw
    assert r["qos"] == {"history": None, "durability": None, "instances": None, "async": None, "batch": None,
                        "congestion": None, "whc_high": None, "receive": None, "nic": None, "security": None}
    assert isinstance(r["adapter"]["config"], dict) and isinstance(r["adapter"]["sub_config"], dict)
    assert r["mw_rss_kb"]["pub"] >= 0 and r["mw_rss_kb"]["sub"] >= 0
    assert (r["send_lag_us"] is not None) == (mode == "rate")
    assert r["size"] == 64 and r["adapter"]["name"] == mw and r["adapter"]["version"]
    assert r["cpu"]["placement"] in ("cross-core", "same-core")
    assert r["cpu"]["pub_affinity"] == [r["cpu"]["pub"]]
    assert r["cpu"]["sub_affinity"] == [r["cpu"]["sub"]]
    assert r["samples_per_s"] > 0 and r["mbps"] > 0
    assert r["latency_us"] is not None and r["latency_us"]["count"] > 0 and r["latency_us"]["p50"] > 0
    if mode == "rate":
        assert r["rate_hz"] == 1000.0
        assert r["rtt_us"] is None
        assert 0.5 < r["loop_rate"] < 1.5
        assert 500 <= r["sent"] <= 1500  # ~1 s at 1000 Hz
    else:
        assert r["rtt_us"]["p50"] == pytest.approx(2 * r["latency_us"]["p50"], rel=0.01, abs=0.002)
        assert r["loop_rate"] is None
    if mode == "latency":
        assert r["received"] == r["sent"] or mw == "udp"


@pytest.mark.side_by_side
@SHARED_RUN
def test_run_directory(sweep):
    out = sweep["out"]
    records = written(out)
    assert [r["point"] for r in records] == list(range(len(MWS) * len(MODES)))
    run = json.loads((out / "run.json").read_text())
    for key in PROVENANCE_KEYS:
        assert key in run, key
    assert run["status"] == "complete"
    assert run["points"]["ok"] == len(records) and run["points"]["failed"] == 0
    assert run["agent"]["version"] and run["agent"]["build_type"]
    assert {"udp", "tcp"} <= {a["name"] for a in run["adapters"]}
    rows = list(csv.DictReader((out / "results.csv").open()))
    assert len(rows) == len(records)
    assert all(row["latency_p50_us"] for row in rows)


@pytest.mark.side_by_side
@SHARED_RUN
def test_report_regenerates_the_same_csv(sweep):
    out = sweep["out"]
    before = (out / "results.csv").read_text()
    (out / "results.csv").unlink()
    done = mwperf("report", str(out))
    assert done.returncode == 0, done.stderr
    assert (out / "results.csv").read_text() == before
    assert "== udp latency (" in done.stdout


def test_hung_and_killed_agents_fail_only_their_point(tmp_path):
    """size 48: the sub hangs before 'ready'; size 96: the pub is SIGKILLed mid-run.
    Apart (not side_by_side): it asserts the run's wall time."""
    real = require_agent()
    marker = str(tmp_path / "marked-agent")
    wrapper = write_script(tmp_path / "agent-wrapper", f"""#!/bin/bash
case " $* " in
  *" --role sub "*" --size 48 "*) exec -a "{marker}-hung" sleep 3600 ;;
  *" --role pub "*" --size 96 "*) ( sleep 0.5; kill -KILL $$ ) </dev/null >/dev/null 2>&1 &
                                 exec -a "{marker}" "{real}" "$@" ;;
esac
exec -a "{marker}" "{real}" "$@"
""")
    out = tmp_path / "run"
    start = time.monotonic()
    done = mwperf("run", "--agent", str(wrapper), "--mw", "udp", "--mode", "latency", "--size", "64,48,96",
                  "--duration", "1s", "--warmup", "200ms", "--point-timeout", "500ms", "--out", str(out))
    elapsed = time.monotonic() - start
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    records = {r["size"]: r for r in written(out)}
    assert set(records) == {48, 64, 96}
    for record in records.values():
        validate_record(record)
    assert records[64]["status"] == "ok"
    assert records[48]["status"] == "failed"
    assert records[48]["error"].startswith("sub: no ready event within 5.5 s")
    assert records[96]["status"] == "failed"
    assert records[96]["error"].startswith("pub: killed by SIGKILL")
    assert "FAILED: sub: no ready event" in done.stdout
    assert json.loads((out / "run.json").read_text())["points"] == {"total": 3, "ok": 1, "failed": 2, "done": 3}
    assert elapsed < 30
    assert not wait_gone(marker), "agent processes left behind"


@pytest.mark.side_by_side  # its text only, not the wake-up times it measures
def test_doctor_with_real_agent():
    real = require_agent()
    done = mwperf("doctor", "--agent", str(real))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "udp" in done.stdout and "tcp" in done.stdout
    assert "same-core" in done.stdout
    assert "net.core.busy_read" in done.stdout
