import json

import pytest

from conftest import FIXTURES, written
from mwperf.results.rundir import RunDir, read_records
from mwperf.model.schema import SchemaError


def fixture_records():
    return [json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines() if line.strip()]


def test_append_writes_one_jsonl_line_a_record(tmp_path):
    rundir = RunDir(tmp_path / "run").create()
    records = fixture_records()
    for count, record in enumerate(records, 1):
        rundir.append(record)
        lines = rundir.jsonl.read_text().splitlines()
        assert len(lines) == count
        assert json.loads(lines[-1]) == record
    assert written(rundir.path) == records


def test_invalid_record_is_not_written(tmp_path):
    rundir = RunDir(tmp_path).create()
    record = fixture_records()[0]
    record["size"] = 1
    with pytest.raises(SchemaError):
        rundir.append(record)
    assert not rundir.jsonl.exists()


def test_torn_last_line_is_skipped(tmp_path):
    rundir = RunDir(tmp_path).create()
    rundir.append(fixture_records()[0])
    with open(rundir.jsonl, "a") as handle:
        handle.write('{"schema_version": 1, "run_')  # a crash mid-write
    warnings = []
    assert len(read_records(tmp_path, warn=warnings.append)) == 1
    assert warnings and ":2:" in warnings[0]


def test_append_after_a_torn_line_keeps_the_new_record(tmp_path):
    rundir = RunDir(tmp_path).create()
    first, second = fixture_records()[:2]
    rundir.append(first)
    with open(rundir.jsonl, "a") as handle:
        handle.write('{"schema_version": 1, "run_')  # a crash mid-write, then a resumed run appends
    rundir.append(second)
    assert written(tmp_path, warn=lambda m: None) == [first, second]


def test_run_json_round_trip(tmp_path):
    rundir = RunDir(tmp_path).create()
    rundir.write_run_json({"status": "running"})
    rundir.write_run_json({"status": "complete"})
    assert rundir.read_run_json() == {"status": "complete"}
    assert not (tmp_path / "run.json.tmp").exists()
