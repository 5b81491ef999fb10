"""End to end with the DDS adapters (cyclonedds, fastdds) of the real agent, on loopback.

Each run is made once per module (short points: 1 s measured, 300 ms
warm-up) and checked by several tests. Skipped while the agent or its DDS
adapters are not built. No timing is asserted: another benchmark may share
the machine.
"""

import os
import subprocess
import sys

import pytest

from conftest import count_leaving_packets, leftover_segments, real_agent_path, shm_segments
from mwperf.execute.agent import describe
from conftest import written
from mwperf.model.schema import validate_record

# Side by side (measuring.py): loopback only, each point its own run id, counts asserted, no timing;
# one worker runs the module (its runs are module-scoped fixtures, several tests each).
pytestmark = [pytest.mark.e2e, pytest.mark.side_by_side, pytest.mark.xdist_group("run_e2e_dds"),
              pytest.mark.usefixtures("no_packet_leaves_loopback", "no_shm_leftovers")]

DDS = ("cyclonedds", "fastdds")
MODES = ("latency", "throughput", "rate")
RELIABILITIES = ("reliable", "best-effort")
SHORT = ("--size", "1k", "--duration", "1s", "--warmup", "300ms")
RATE = ("--rate", "200")
DEFAULT_TRANSPORT = {"cyclonedds": "udp", "fastdds": "shm+udp"}


def require_dds() -> str:
    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    missing = [mw for mw in DDS if mw not in describe(str(agent)).adapters]
    if missing:
        pytest.skip(f"the agent is built without {', '.join(missing)}")
    return str(agent)


def mwperf(*args, cwd=None, timeout=300):
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True,
                          cwd=cwd, env=dict(os.environ), timeout=timeout)


def run_once(tmp_path_factory, name, *args):
    """One `mwperf run`, with the packets that left loopback and the segments left behind."""
    agent = require_dds()
    out = tmp_path_factory.mktemp(name) / "run"
    before = shm_segments()
    with count_leaving_packets() as leaving:
        done = mwperf("run", "--agent", agent, *args, "--out", str(out), "--verbose")  # every table: checked below
    records = written(out) if (out / "results.jsonl").exists() else []
    return {"done": done, "records": records, "leaving": leaving["packets"], "shm_left": leftover_segments(before)}


def check_run(run, points):
    done = run["done"]
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(run["records"]) == points
    assert run["leaving"] == 0, "packets left through a non-loopback interface"
    assert run["shm_left"] == [], "shared-memory segments left behind"
    for record in run["records"]:
        validate_record(record)
        assert record["status"] == "ok", record["error"]
        assert record["sent"] > 0 and record["received"] > 0
        assert record["received"] + record["lost"] == record["sent"]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    return run_once(tmp_path_factory, "matrix", "--mw", ",".join(DDS), "--mode", ",".join(MODES),
                    "--reliability", ",".join(RELIABILITIES), *SHORT, *RATE)


@pytest.fixture(scope="module")
def keep_all(tmp_path_factory):
    return run_once(tmp_path_factory, "keep-all", "--mw", ",".join(DDS), "--mode", "throughput",
                    "--reliability", "reliable", "--history", "keep-all", *SHORT)


@pytest.fixture(scope="module")
def slow_reader(tmp_path_factory):
    # 300 samples at 1 kHz to a reader that takes 2 ms over each: when the
    # publisher is done, about half of them are still on their way.
    return run_once(tmp_path_factory, "slow-reader", "--mw", ",".join(DDS), "--mode", "rate", "--rate", "1000",
                    "--slow-subscriber", "2ms", "--reliability", "reliable", "--history", "keep-all", "--size", "1k",
                    "--duration", "300ms", "--warmup", "0s")


@pytest.fixture(scope="module")
def batched(tmp_path_factory):
    return run_once(tmp_path_factory, "batched", "--mw", "cyclonedds", "--mode", "throughput,rate", "--reliability",
                    "reliable", "--history", "keep-all", "--batch", *SHORT, *RATE)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory):
    return run_once(tmp_path_factory, "keyed", "--mw", ",".join(DDS), "--mode", "throughput",
                    "--reliability", "reliable", "--history", "keep-last:1", "--keyed", "--instances", "100000",
                    *SHORT)


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    return run_once(tmp_path_factory, "big", "--mw", ",".join(DDS), "--mode", "latency", "--reliability",
                    "reliable", "--size", "4MiB", "--duration", "1s", "--warmup", "300ms")


@pytest.fixture(scope="module")
def transports(tmp_path_factory):
    return run_once(tmp_path_factory, "transports", "--mw", "fastdds", "--transport", "udp,shm",
                    "--mode", "latency,rate", *SHORT, *RATE)


def test_matrix_run(matrix):
    check_run(matrix, len(DDS) * len(MODES) * len(RELIABILITIES))
    stdout = matrix["done"].stdout
    for mw in DDS:
        for rel in RELIABILITIES:
            for mode in MODES:
                assert f"== {mw} {mode} ({rel}, keep-last:10, listener, {DEFAULT_TRANSPORT[mw]}) (" in stdout


@pytest.mark.parametrize("mw", DDS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("reliability", RELIABILITIES)
def test_matrix_point(matrix, mw, mode, reliability):
    found = [r for r in matrix["records"]
             if (r["mw"], r["mode"], r["reliability"]) == (mw, mode, reliability)]
    assert len(found) == 1
    r = found[0]
    validate_record(r)
    assert r["status"] == "ok", r["error"]
    assert r["received"] + r["lost"] == r["sent"] and r["received"] > 0
    assert r["transport"] == DEFAULT_TRANSPORT[mw]
    # the default receive path: the core's handler on the middleware's own thread (a listener), as ddsperf
    assert r["qos"] == {"history": "keep-last:10", "durability": "volatile", "instances": 0,
                        "async": False if mw == "fastdds" else None, "batch": False if mw == "cyclonedds" else None,
                        "congestion": None, "whc_high": None, "receive": "listener", "nic": None,
                        "security": "none" if mw in ("cyclonedds", "fastdds") else None}
    config, sub_config = r["adapter"]["config"], r["adapter"]["sub_config"]
    assert config["reliability"] == reliability and sub_config["reliability"] == reliability
    assert config["history"] == "keep-last:10"
    assert r["adapter"]["version"] and r["discovery_ms"] > 0
    assert isinstance(r["mw_rss_kb"]["pub"], int) and isinstance(r["mw_rss_kb"]["sub"], int)
    assert r["mw_rss_kb"]["pub"] <= r["rss_kb"]["pub"]
    # Under a flat-out load the interleaved pings may all time out: only latency and rate promise figures.
    assert r["latency_us"]["count"] > 0 or mode == "throughput"
    if mode == "rate":
        assert r["send_lag_us"]["count"] == r["sent"] and r["loop_rate"] > 0
    else:
        assert r["send_lag_us"] is None


@pytest.mark.parametrize("mw", DDS)
def test_reliable_keep_all_loses_nothing(keep_all, mw):
    check_run(keep_all, len(DDS))
    r = next(r for r in keep_all["records"] if r["mw"] == mw)
    assert r["reliability"] == "reliable" and r["qos"]["history"] == "keep-all"
    assert r["adapter"]["config"]["history"] == "keep-all"
    assert r["lost"] == 0 and r["received"] == r["sent"]
    assert r["duplicates"] == 0


@pytest.mark.parametrize("mw", DDS)
def test_a_reliable_publisher_stays_until_its_slow_reader_has_everything(slow_reader, mw):
    check_run(slow_reader, len(DDS))
    r = next(r for r in slow_reader["records"] if r["mw"] == mw)
    assert r["adapter"]["config"]["linger_ms"] == 4000 and r["adapter"]["sub_config"]["linger_ms"] == 0
    assert r["lost"] == 0 and r["received"] == r["sent"] > 0


def test_cyclone_write_batching(batched):
    check_run(batched, 2)
    for r in batched["records"]:
        assert r["adapter"]["config"]["batch"] is True and r["adapter"]["sub_config"]["batch"] is True
        assert r["lost"] == 0  # reliable, keep-all: batching delays nothing for good
    rate = next(r for r in batched["records"] if r["mode"] == "rate")
    assert rate["latency_us"]["count"] == rate["received"]  # every rate sample was flushed at once


@pytest.mark.parametrize("mw", DDS)
def test_keyed_100000_instances(keyed, mw):
    check_run(keyed, len(DDS))
    r = next(r for r in keyed["records"] if r["mw"] == mw)
    assert r["qos"]["instances"] == 100000 and r["qos"]["history"] == "keep-last:1"
    assert r["adapter"]["config"]["instances"] == 100000 and r["adapter"]["sub_config"]["instances"] == 100000
    assert r["adapter"]["config"]["type"] == "mwperf::msg::dds_::KeyedUInt8MultiArray_"  # one type for every DDS adapter


@pytest.mark.parametrize("mw", DDS)
def test_4mib_reliable_latency(big, mw):
    check_run(big, len(DDS))
    r = next(r for r in big["records"] if r["mw"] == mw)
    assert r["size"] == 4 * 1048576 and r["reliability"] == "reliable"
    assert r["latency_us"]["count"] == r["received"] > 0


def test_fastdds_transports(transports, matrix):
    check_run(transports, 4)
    recorded = {(r["transport"], r["adapter"]["config"]["transport"]) for r in transports["records"]}
    assert recorded == {("udp", "udp"), ("shm", "shm")}
    shm_only = [r for r in transports["records"] if r["transport"] == "shm"]
    assert all(r["adapter"]["config"]["interface_whitelist"] == "" for r in shm_only)
    defaults = {(r["mw"], r["transport"]) for r in matrix["records"]}
    assert defaults == {("cyclonedds", "udp"), ("fastdds", "shm+udp")}
    assert "== fastdds latency (reliable, keep-last:10, listener, shm) (" in transports["done"].stdout


@pytest.mark.parametrize("args, expected", [
    (["--mw", "cyclonedds", "--async"], "--async: not supported by cyclonedds"),
    (["--mw", "udp", "--reliability", "reliable"], "--reliability reliable: not supported by udp"),
    (["--mw", "cyclonedds", "--transport", "shm"], "--transport shm: not supported by cyclonedds (choose from: udp)"),
    (["--mw", "tcp", "--keyed", "--instances", "5"], "--instances 5: not supported by tcp"),
    (["--mw", "fastdds", "--batch"], "--batch: not supported by fastdds (no write batching)"),
])
def test_unsupported_options(tmp_path, args, expected):
    agent = require_dds()
    done = mwperf("run", "--agent", agent, *args, "--duration", "1s", cwd=tmp_path, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"mwperf: error: {expected}")
    assert not (tmp_path / "results").exists()


def test_doctor_lists_the_dds_adapters():
    agent = require_dds()
    done = mwperf("doctor", "--agent", agent, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    versions = {name: info.version for name, info in describe(agent).adapters.items()}
    lines = done.stdout.splitlines()
    for mw in DDS:
        line = next(i for i, text in enumerate(lines) if text.strip().startswith(mw + " "))
        assert versions[mw] and versions[mw] in lines[line]
        assert lines[line + 1].strip().startswith("supports: reliability reliable,best-effort; ")
        assert "history" in lines[line + 1] and "receive listener,waitset" in lines[line + 1]
    assert "async" in next(lines[i + 1] for i, t in enumerate(lines) if t.strip().startswith("fastdds "))
