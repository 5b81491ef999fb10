"""Records v1 upgraded on reading: a real v1 run directory (made by the last
release's agent and controller, fixtures/v1-run: udp and Cyclone DDS;
latency, rate, burst; a 2-subscriber fan-out) still loads, reports, exports
and compares; and the one upgrade step's rules, by hand."""

import io
import json
import shutil

import pytest

import mwperf
from conftest import FIXTURES, typed, written
from mwperf.export.compare import compare_runs
from mwperf.cli.main import main
from mwperf.model.labels import qos_label
from mwperf.model.schema import record_errors
from mwperf.model.upgrade import OLD_KEY_PREFIX, upgrade

V1_RUN = FIXTURES / "v1-run"


@pytest.fixture
def v1_run(tmp_path):
    run = tmp_path / "v1-run"
    shutil.copytree(V1_RUN, run)
    return run


def raw_lines():
    return [json.loads(line) for line in (V1_RUN / "results.jsonl").read_text().splitlines() if line.strip()]


def test_the_fixture_is_version_1():
    raw = raw_lines()
    assert len(raw) == 7 and {r["schema_version"] for r in raw} == {1}
    assert {(r["mw"], r["mode"], r["subscribers"]) for r in raw} >= {("udp", "burst", 1), ("cyclonedds", "rate", 2)}
    assert all("exact" in r["latency_us"] for r in raw if r["latency_us"])


def test_every_v1_record_reads_as_version_2(v1_run):
    warnings = []
    records = written(v1_run, warn=warnings.append)
    assert warnings == [] and len(records) == 7
    for r in records:
        assert r["schema_version"] == 2 and record_errors(r) == []
        assert "exact" not in r["latency_us"] and r["slow_subscriber_s"] == 0.0
        assert r["stamp_clock"] == "monotonic" and r["point_key"].startswith(OLD_KEY_PREFIX)
    cyclone = [r for r in records if r["mw"] == "cyclonedds"]
    # version 1 had Cyclone's own word for batching in its configuration: it is the option's field now
    assert all(r["qos"]["batch"] is False for r in cyclone) and all(r["qos"]["batch"] is None for r in records
                                                                     if r["mw"] == "udp")
    assert qos_label(typed(cyclone[0])) == "reliable, keep-last:10, listener, udp"
    fan = next(r for r in records if r["subscribers"] == 2)
    assert fan["fanout"]["cpu_pct"] is not None and len(fan["per_subscriber"]) == 2


def test_a_v1_run_reports_exports_and_loads(v1_run, capsys):
    assert main(["report", str(v1_run)]) == 0
    out = capsys.readouterr().out
    assert "cyclonedds  rate" in out and "2 subscribers" in out and "udp         burst" in out
    assert (v1_run / "results.csv").is_file() and (v1_run / "report.html").is_file()
    header = (v1_run / "results.csv").read_text().splitlines()[0].split(",")
    assert "qos_batch" in header and len((v1_run / "results.csv").read_text().splitlines()) == 8
    assert main(["export", str(v1_run), "--format", "perftest-csv"]) == 0
    frame = mwperf.load(v1_run)
    assert len(frame) == 7 and set(frame["schema_version"]) == {2} and "qos.batch" in frame.columns
    assert len(mwperf.load(v1_run, subscribers=True)) == 8  # the fan-out point is two rows


def test_a_v1_run_compares_with_itself_and_with_a_v2_copy(v1_run, tmp_path):
    out = io.StringIO()
    assert compare_runs([str(V1_RUN), str(v1_run)], out) == 0
    text = out.getvalue()
    assert "udp latency 64 B" in text and "cyclonedds rate 64 B 1000 Hz x2 subscribers" in text
    # written again as version 2 (as mwperf writes it now), it still matches the v1 run point for point
    v2 = tmp_path / "v2-run"
    shutil.copytree(V1_RUN, v2)
    (v2 / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in written(V1_RUN)))
    out = io.StringIO()
    assert compare_runs([str(V1_RUN), str(v2)], out) == 0
    assert "no point in common" not in out.getvalue() and out.getvalue().count("+0.0 % (1+1 launches: no interval)") >= 4


def test_upgrade_by_hand():
    v1 = {"schema_version": 1, "mw": "zenoh", "slow_subscriber_ms": 5.0, "point_key": "abc",
          "latency_us": {"count": 3, "exact": False, "kept": 3},
          "qos": {"history": None}, "adapter": {"config": {"express": False, "congestion_control": "drop"}},
          "adaptive": {"precision": 0.05, "confidence": 0.95, "last_look": {"kept": 7}},
          "clock": {"stamp_clock": "realtime"}, "cpu_s": {"pub": {"user": 1.0, "sys": 1.0}, "sub": None},
          "duration_s": 4.0}
    r = upgrade(v1)
    assert r["schema_version"] == 2 and v1["schema_version"] == 1  # a copy
    assert r["slow_subscriber_s"] == 0.005 and "slow_subscriber_ms" not in r
    assert r["latency_us"] == {"count": 3, "mean": None, "std": None, "min": None, "max": None, "p50": None,
                               "p90": None, "p99": None, "p9999": None, "p999999": None, "p50_ci": None,
                               "p99_ci": None, "relative_error": None, "ci_confidence": None, "ci_batches": None,
                               "p999": None, "p999_ci": None, "ci_method": None, "ci_null": None}
    assert (r["qos"]["batch"], r["qos"]["congestion"], r["qos"]["nic"]) == (True, "drop", None)
    assert (r["precision"], r["confidence"]) == (0.05, 0.95) and r["adaptive"]["last_look"]["count"] == 7
    assert r["stamp_clock"] == "realtime" and "stamp_clock" not in r["clock"]
    assert r["cpu_pct"] == {"pub": 50.0, "sub": None}  # over the duration: the record knew no window
    assert r["point_key"] == "v1:abc" and r["subscribers"] == 1 and r["subscribers_as"] == "processes"
    assert upgrade(r) is r  # version 2 stays as it is


def test_a_v2_record_from_before_an_option_was_added_reads(tmp_path):
    """An option added to the agent's table (one row) is a field of records
    from then on; a record written before has none, and reads with it null."""
    record = next(iter(written(V1_RUN)))
    del record["qos"]["whc_high"], record["latency_count"]
    assert record_errors(record)  # the schema of today wants them
    (tmp_path / "results.jsonl").write_text(json.dumps(record) + "\n")
    warnings = []
    (back,) = written(tmp_path, warn=warnings.append)
    assert warnings == [] and back["qos"]["whc_high"] is None and back["latency_count"] is None


def test_a_record_from_before_scenarios_reads_with_scenario_null(tmp_path):
    """A version-2 record written before the scenario field (no such key) reads as a plain point (null)."""
    from mwperf.results.rundir import RunDir

    line = (FIXTURES / "results.jsonl").read_text().splitlines()[0]
    record = json.loads(line)
    del record["scenario"]
    rundir = RunDir(tmp_path / "old").create()
    (rundir.path / "results.jsonl").write_text(json.dumps(record) + "\n")
    (read,) = written(rundir.path)
    assert "scenario" in read and read["scenario"] is None


def test_a_secured_record_from_before_the_governance_rule_reads(tmp_path):
    """security.governance (the rule the kinds were read from) was added within version 2: a secured record
    without it is valid and reads with it None; one with it reads it typed."""
    from mwperf.results.rundir import RunDir

    cert = {"subject": "CN=mwperf CA", "sha256": ":".join(["AB"] * 32), "key": "id-ecPublicKey prime256v1"}
    record = json.loads((FIXTURES / "results.jsonl").read_text().splitlines()[0])
    record["security"] = {"level": "encrypt", "keys": "made by mwperf (removed after the run)",
                          "protection": {"discovery": "ENCRYPT", "liveliness": "ENCRYPT", "rtps": "NONE",
                                         "metadata": "ENCRYPT", "data": "NONE"},
                          "identity_ca": cert, "permissions_ca": cert, "identities": {"/mwperf/pub": cert},
                          "algorithms": {"pub": None, "sub": None}}
    rule = {"document": "enclaves/governance.p7s", "domain": 0, "domain_rule": 1, "domains": "0-230",
            "topic_rule": 1, "topic_expression": "*"}
    newer = json.loads(json.dumps(record))
    newer["security"]["governance"] = rule
    assert record_errors(record) == [] and record_errors(newer) == []
    assert record_errors({**newer, "security": {**newer["security"], "governance": {**rule, "domain_rule": 0}}})
    # each in a run dir of its own: two records of one launch in one run are refused as repeated
    read = []
    for name, each in (("old", record), ("new", newer)):
        rundir = RunDir(tmp_path / name).create()
        (rundir.path / "results.jsonl").write_text(json.dumps(each) + "\n")
        read += [typed(r) for r in written(rundir.path)]
    old, new = read
    assert old.security.governance is None and old.security.protection["metadata"] == "ENCRYPT"
    assert new.security.governance.topic_expression == "*" and new.security.governance.domain_rule == 1
