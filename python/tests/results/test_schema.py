import copy
import json

import jsonschema
import pytest

from conftest import FIXTURES
from mwperf.results.schema import SchemaError, load_schema, record_errors, validate_record


@pytest.fixture
def records():
    return [json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines() if line.strip()]


def test_schema_is_valid_draft_2020_12():
    schema = load_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_fixture_records_validate(records):
    assert records
    for record in records:
        validate_record(record)


@pytest.mark.parametrize("mutate, fragment", [
    (lambda r: r.pop("latency_us"), "latency_us"),
    (lambda r: r.update(extra=1), "extra"),
    (lambda r: r.update(mode="bogus"), "mode"),
    (lambda r: r.update(size=8), "size"),
    (lambda r: r.update(schema_version=2), "schema_version"),
    (lambda r: r["latency_us"].update(p50="fast"), "latency_us/p50"),
    (lambda r: r["cpu"].update(placement="near"), "cpu/placement"),
    (lambda r: r.update(status="ok", error="boom"), "error"),
    (lambda r: r.update(status="failed", error=None), "error"),
    (lambda r: r.update(rate_hz=100.0), "rate_hz"),
])
def test_schema_rejects(records, mutate, fragment):
    record = copy.deepcopy(next(r for r in records if r["status"] == "ok" and r["mode"] == "latency"))
    mutate(record)
    errors = record_errors(record)
    assert any(fragment in e for e in errors), errors
    with pytest.raises(SchemaError):
        validate_record(record)


def test_schema_is_package_data():
    from importlib import resources

    assert resources.files("mwperf.results.schema").joinpath("result-v1.json").is_file()
