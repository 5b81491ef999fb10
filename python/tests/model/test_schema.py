import copy
import json

import jsonschema
import pytest

from conftest import FIXTURES
from mwperf.model.schema import SCHEMA_VERSIONS, SchemaError, load_schema, record_errors, validate_record


@pytest.fixture
def records():
    return [json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines() if line.strip()]


@pytest.mark.parametrize("version", SCHEMA_VERSIONS)
def test_schema_is_valid_draft_2020_12(version):
    """Every version's schema (the commands do not check them: that is this test's)."""
    schema = load_schema(version)
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
    (lambda r: r.update(schema_version=3), "schema_version"),
    (lambda r: r["qos"].pop("batch"), "batch"),
    (lambda r: r["latency_us"].update(p50="fast"), "latency_us/p50"),
    (lambda r: r["cpu"].update(placement="near"), "cpu/placement"),
    (lambda r: r.update(status="ok", error="boom"), "error"),
    (lambda r: r.update(status="failed", error=None), "error"),
    (lambda r: r.update(rate_hz=100.0), "rate_hz"),
    (lambda r: r.update(samples_file={"path": "../../etc/passwd", "count": 1, "time_ordered": True}),
     "samples_file/path"),
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

    assert resources.files("mwperf.model.schema").joinpath("result-v1.json").is_file()


# -- the quick checker used on reading agrees with jsonschema ------------------------------

WEIRD = [None, True, False, 0, -1, 1.0, 1.5, -0.5, 2 ** 70, "", "x", "keep-last:3", "2026-01-01T00:00:00Z", [], [1],
         [1.0, 2.0], [1, 2, 3], ["a", "b"], {}, {"user": 1, "sys": 2}, {"x": 1}]


def _leaves(value, path=()):
    """Every path in a record (objects and lists, down to the leaves)."""
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(item, path + (index,))


def _set(record, path, value):
    node = record
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def test_the_quick_checker_agrees_with_jsonschema(records):
    """Ground truth: jsonschema. Every fixture record, and each with every
    field (at every depth) replaced by each of a set of odd values, or removed."""
    import random

    from mwperf.model.schema import record_ok

    rng = random.Random(17)
    checked = disagreements = 0
    for record in records:
        assert record_ok(record)
    kinds = {}
    for record in records:  # one of each kind: jsonschema takes ms a record
        kinds.setdefault((record["status"], record["mode"], record["mw"] in ("udp", "tcp")), record)
    for record in kinds.values():
        for path in list(_leaves(record))[1:]:
            for value in rng.sample(WEIRD, 2) + ["remove"]:
                mutated = copy.deepcopy(record)
                if value == "remove":
                    node = mutated
                    for part in path[:-1]:
                        node = node[part]
                    if isinstance(node, dict):
                        del node[path[-1]]
                    else:
                        node.pop(path[-1])
                else:
                    _set(mutated, path, copy.deepcopy(value))
                expected = not record_errors(mutated)
                checked += 1
                if record_ok(mutated) != expected:
                    disagreements += 1
                    raise AssertionError(f"{path} = {value!r}: quick {not expected}, jsonschema {expected}")
    assert checked > 1000 and disagreements == 0


@pytest.mark.parametrize("schema, good, bad", [
    ({"type": "integer"}, [1, 1.0, -5], [1.5, True, "1", None]),
    ({"type": "number", "minimum": 0}, [0, 2.5, "x"][:2], [-1, True, None]),
    ({"enum": [1, "a"]}, [1, 1.0, "a"], [True, "b", 2]),
    ({"const": False}, [False], [0, None, True]),
    ({"type": "array", "items": {"type": "number"}, "minItems": 2, "maxItems": 2}, [[1, 2]], [[1], [1, 2, 3], [1, "x"]]),
    ({"type": "string", "pattern": "^a+$", "minLength": 2}, ["aa", "aaa"], ["a", "ab", 3]),
    ({"type": "object", "required": ["a"], "properties": {"a": {"type": "null"}}, "additionalProperties": False},
     [{"a": None}], [{}, {"a": 1}, {"a": None, "b": 1}]),
    ({"if": {"properties": {"k": {"const": 1}}}, "then": {"required": ["v"]}, "else": {"not": {"required": ["v"]}}},
     [{"k": 1, "v": 0}, {"k": 2}], [{"k": 1}, {"k": 2, "v": 0}]),
    ({"$defs": {"n": {"type": "integer"}}, "allOf": [{"$ref": "#/$defs/n"}, {"exclusiveMaximum": 3}]}, [2], [3, 2.5]),
])
def test_the_quick_checker_keywords(schema, good, bad):
    from mwperf.model.schema import compile_schema

    check = compile_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for value in good:
        assert check(value) and validator.is_valid(value), value
    for value in bad:
        assert not check(value) and not validator.is_valid(value), value


def test_the_quick_checker_refuses_keywords_it_does_not_know():
    from mwperf.model.schema import compile_schema

    with pytest.raises(NotImplementedError):
        compile_schema({"uniqueItems": True})
