"""The typed record (mwperf.model.record): every field of the schema is a
field of the Record (a field added to the schema and not to the record
fails here), and every typed value is the value the JSON holds, on every
fixture record (measured, failed, imported, fan-out, scenario, upgraded
from version 1)."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conftest import FIXTURES
from mwperf.model.record import Record
from mwperf.model.schema import load_schema
from mwperf.results.rundir import read_records
from mwperf.table import snapshot

#: The record's fields named otherwise in the code: the sweep's hash.
RENAMED = {"point_key": "point_hash"}


def option_tops() -> set[str]:
    return {row.field.split(".")[0] for row in snapshot().record_rows}


def test_every_field_of_the_schema_is_a_field_of_the_record_and_no_other():
    schema = set(load_schema()["properties"]) - option_tops()
    typed = {f.name for f in dataclasses.fields(Record)} - {"json", "options"}
    assert {RENAMED.get(name, name) for name in schema} == typed
    assert set(Record.from_json({}).options) == {row.field for row in snapshot().record_rows}


def plain(value):
    """A typed value as JSON would hold it (a part as its object, a tuple as a list)."""
    if dataclasses.is_dataclass(value):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return value


def same(typed, written, where: str) -> None:
    """Every field of the typed value is the written one (a part's fields that the object lacks are null)."""
    if isinstance(typed, dict) and isinstance(written, dict):
        for key, value in typed.items():
            same(value, written.get(key), f"{where}.{key}")
    elif isinstance(typed, list) and isinstance(written, list):
        assert len(typed) == len(written), where
        for i, (a, b) in enumerate(zip(typed, written)):
            same(a, b, f"{where}[{i}]")
    else:
        assert typed == written, where


def fixture_records() -> list[Record]:
    records = []
    for name in ("results.jsonl", "results-extended.jsonl"):
        records += read_records(FIXTURES, name=name)
    return records + read_records(FIXTURES / "scenario-run") + read_records(FIXTURES / "v1-run")


@pytest.mark.parametrize("record", fixture_records(), ids=repr)
def test_each_typed_value_is_the_written_one(record):
    for f in dataclasses.fields(record):
        if f.name in ("json", "options"):
            continue
        key = {v: k for k, v in RENAMED.items()}.get(f.name, f.name)
        same(plain(getattr(record, f.name)), json.loads(json.dumps(record.json.get(key))), key)
    for name, value in record.options.items():
        parent, _, leaf = name.rpartition(".")
        written = (record.json.get(parent) or {}).get(leaf) if parent else record.json.get(name)
        assert value == written, name
    assert (record.mw, record.size, record.subscribers) == (record.json["mw"], record.json["size"],
                                                            record.json["subscribers"])
