"""``mwperf floor``, and the floor of ``mwperf run``: bad input is one line
and exit 2; with the real agent (e2e, under the measurement lock) a run
stores its floor and shows "x floor", and ``--no-floor`` skips it and says so."""

import json
import os
import subprocess
import sys

import pytest

from conftest import real_agent_path
from mwperf.cli.main import main
from mwperf.results.floor import FLOOR_JSON, read_floor

BAD = [
    (["--size", "0"], "--size 0: size must be positive"),
    (["--size", "65MiB"], "--size 65MiB: must be from 1 to 64MiB"),
    (["--size", "64,"], "--size 64,"),
    (["--size", "5parsecs"], "--size 5parsecs"),
    (["--wait", "nap"], "--wait nap: choose from block, spin"),
    (["--budget", "0s"], "--budget 0s"),
    (["--budget", "11m"], "--budget 11m: must be from 1ms to 10m"),
    (["--cpu", "0,99"], "--cpu 0,99: core 99 does not exist"),
    (["--cpu", "0,1", "--cpu", "x"], "--cpu x"),
    (["--format", "pdf"], "pdf"),
]


@pytest.mark.parametrize("args, expected", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_floor_input(capsys, monkeypatch, fake_agent, args, expected):
    monkeypatch.setenv("MWPERF_AGENT", str(fake_agent))
    code = main(["floor", *args])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1 and err.startswith("mwperf: error: ") and expected in err, err
    assert "Traceback" not in err


def mwperf(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True,
                          env=dict(os.environ), timeout=timeout)


def agent() -> str:
    path = real_agent_path()
    if path is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    return str(path)


@pytest.mark.e2e
@pytest.mark.side_by_side  # what it measured, not how fast
def test_mwperf_floor_prints_and_stores_it(tmp_path):
    done = mwperf("floor", "--agent", agent(), "--size", "64,70000", "--cpu", "0,0", "--budget", "20ms",
                  "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "== floor: same-core 0,0, wait block" in done.stdout and "1 floor(s) in" in done.stdout
    (floor,) = read_floor(tmp_path)["floors"]
    assert {(e["kind"], e["size"]) for e in floor["entries"]} == {
        (kind, size) for kind in ("memcpy", "unix", "udp", "shm") for size in (64, 70000)}
    assert [e["skipped"] for e in floor["entries"] if "skipped" in e] == [
        "UDP carries at most 65507 bytes per datagram"]


@pytest.mark.e2e  # apart: the floor's elapsed time is asserted
@pytest.mark.usefixtures("no_packet_leaves_loopback")
def test_a_run_measures_its_floor_first_and_no_floor_skips_it(tmp_path):
    common = ["run", "--agent", agent(), "--mw", "udp", "--mode", "latency", "--size", "64", "--duration", "300ms",
              "--warmup", "100ms"]
    done = mwperf(*common, "--verbose", "--out", str(tmp_path / "with"))  # the floor's table: with --verbose
    assert done.returncode == 0, done.stderr
    assert "mwperf: measuring the floor (4 measurements" in done.stderr
    assert "== floor: cross-core 0,1, wait block" in done.stdout and "x floor" in done.stdout
    run = json.loads((tmp_path / "with" / "run.json").read_text())
    assert run["floor"]["status"] == "measured" and run["floor"]["file"] == FLOOR_JSON
    assert run["floor"]["elapsed_s"] < 5
    (floor,) = read_floor(tmp_path / "with")["floors"]
    assert floor["cpu"] == {"pub": 0, "sub": 1, "placement": "cross-core"} and floor["wait"] == "block"

    done = mwperf(*common, "--no-floor", "--out", str(tmp_path / "without"))
    assert done.returncode == 0, done.stderr
    assert "measuring the floor" not in done.stderr and "x floor" not in done.stdout
    assert not (tmp_path / "without" / FLOOR_JSON).exists()
    run = json.loads((tmp_path / "without" / "run.json").read_text())
    assert run["floor"] == {"status": "skipped", "reason": "--no-floor"}
    assert "Not measured for this run" in (tmp_path / "without" / "report.html").read_text()
