"""The results store, the same tests against DuckDB and a real PostgreSQL
server: a run stored once, the same frame back as from its directory,
columns people query with SQL, fields a newer record adds, the store's
version, and the stores it refuses."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

import mwperf
from conftest import FIXTURES
from mwperf.errors import UsageError
from mwperf.results.rundir import RunDir
from mwperf.store import opened, schema
from mwperf.store.ingest import ingest_dir

HOSTS = {"fixture": "host-a", "extended": "host-b"}
STARTED = {"fixture": "2026-11-20T10:00:00Z", "extended": "2026-11-21T10:00:00Z"}


def make_run(tmp_path, fixture: str, name: str | None = None, lines: int | None = None):
    """A run directory of a fixture's records and a run.json of its own."""
    name = name or fixture
    run_id = json.loads((FIXTURES / f"{fixture}.jsonl").read_text().splitlines()[0])["run_id"]
    path = tmp_path / name
    path.mkdir()
    text = (FIXTURES / f"{fixture}.jsonl").read_text().splitlines(keepends=True)
    (path / "results.jsonl").write_text("".join(text[:lines]))
    RunDir(path).write_run_json({"schema_version": 1, "run_id": run_id, "status": "complete",
                                 "started": STARTED[run_id], "hostname": HOSTS[run_id], "kernel": "6.1.0-test",
                                 "cpu_model": "Test CPU", "governor": None, "mwperf_version": "0.1.0",
                                 "git": {"sha": "abc123", "dirty": False},
                                 "agent": {"version": "0.1.0", "build_type": "Release"},
                                 "adapters": [{"name": "udp", "version": "linux"}]})
    return path


def test_load_from_the_store_is_the_frame_from_the_directories(tmp_path, store_url):
    a, b = make_run(tmp_path, "results"), make_run(tmp_path, "results-extended")
    with opened(store_url, write=True) as conn:
        assert ingest_dir(conn, b).outcome == "stored"  # ingested out of order: the store orders by start
        assert ingest_dir(conn, a).outcome == "stored"
    for subscribers in (False, True):
        expected = mwperf.load([a, b], subscribers=subscribers)
        got = mwperf.load(db=store_url, subscribers=subscribers)
        pd.testing.assert_frame_equal(got, expected)
    assert len(mwperf.load(db=store_url)) == 16 + 14


def test_a_run_is_stored_once_and_updated_when_its_directory_grew(tmp_path, store_url):
    part = make_run(tmp_path, "results", "partial", lines=5)
    with opened(store_url, write=True) as conn:
        assert ingest_dir(conn, part).outcome == "stored"
        assert ingest_dir(conn, part).outcome == "unchanged"
        copy = tmp_path / "elsewhere" / "copy"
        shutil.copytree(part, copy)
        assert ingest_dir(conn, copy).outcome == "unchanged"  # the same run, from a copy of its directory
        (part / "results.jsonl").write_text((FIXTURES / "results.jsonl").read_text())  # a resumed sweep
        assert ingest_dir(conn, part).outcome == "updated"
        assert conn.execute("SELECT count(*) FROM runs") == [(1,)]
        assert conn.execute("SELECT count(*), count(DISTINCT seq) FROM points") == [(16, 16)]


def test_records_and_provenance_are_columns_for_sql(tmp_path, store_url):
    make = make_run(tmp_path, "results-extended")
    with opened(store_url, write=True) as conn:
        ingest_dir(conn, make)
        rows = conn.execute('SELECT p.mw, p.size, p."latency_us.p50", p."qos.history", r.hostname, r.kernel, '
                            'r."git.sha", r."agent.build_type" FROM points p JOIN runs r ON r.run_key = p.run_key '
                            "WHERE p.point = 2")
        assert rows == [("fastdds", 1024, pytest.approx(rows[0][2]), "keep-last:10", "host-b", "6.1.0-test",
                         "abc123", "Release")]
        record = json.loads((FIXTURES / "results-extended.jsonl").read_text().splitlines()[2])
        assert rows[0][2] == pytest.approx(record["latency_us"]["p50"])
        # one row per subscriber: the fan-out point of 4 subscribers has 4
        assert conn.execute("SELECT count(*) FROM subscribers s JOIN points p ON p.run_key = s.run_key "
                            "AND p.seq = s.seq WHERE p.point = 12") == [(4,)]
        label = conn.execute("SELECT point_label FROM points WHERE point = 2")[0][0]
        assert label.startswith("fastdds latency 1024 B (reliable, keep-last:10")


def test_a_field_the_loader_adds_becomes_a_column_and_types_widen(tmp_path, store_url, monkeypatch):
    """A newer record schema's field flows into the store without a list of fields to edit."""
    from mwperf.model.record import Record
    from mwperf.model.schema import load_schema
    from mwperf.store import ingest

    run = make_run(tmp_path, "results", lines=2)
    real = ingest.read_records
    newer_schema = load_schema()
    newer_schema["properties"].update(
        energy={"type": "object", "additionalProperties": False,
                "properties": {"joules": {"type": "number"}, "meter": {"type": "string"}}},
        flag={"type": ["integer", "string"]})
    monkeypatch.setattr(ingest, "_record_schema", lambda: newer_schema)

    def newer(path, warn=None):
        return [Record.from_json({**r.json, "energy": {"joules": [3, 2.5][i % 2], "meter": "rapl"},
                                  "flag": [1, "text"][i % 2]}) for i, r in enumerate(real(path, warn=warn))]

    monkeypatch.setattr(ingest, "read_records", newer)
    with opened(store_url, write=True) as conn:
        ingest_dir(conn, run)
        got = conn.execute('SELECT "energy.joules", "energy.meter", flag FROM points ORDER BY seq')
        assert got == [(3.0, "rapl", "1"), (2.5, "rapl", "text")]
        kinds = schema.Columns(conn, "points").kinds
        assert (kinds["energy.joules"], kinds["flag"]) == ("DOUBLE PRECISION", "TEXT")
    frame = mwperf.load(db=store_url)
    assert list(frame["energy.joules"]) == [3, 2.5]


def test_a_store_of_a_newer_version_is_refused(store_url):
    with opened(store_url, write=True) as conn:
        conn.execute("UPDATE mwperf_meta SET value = '7' WHERE key = 'store_version'")
    for write in (False, True):
        with pytest.raises(UsageError, match="store version 7 was written by a newer mwperf"):
            with opened(store_url, write=write):
                pass


def test_an_older_store_is_upgraded_by_its_migrations(tmp_path, store_url, monkeypatch):
    with opened(store_url, write=True):
        pass
    monkeypatch.setattr(schema, "STORE_VERSION", 2)
    with pytest.raises(UsageError, match="store version 1 cannot be upgraded to 2 in place"):
        with opened(store_url, write=True):
            pass
    monkeypatch.setattr(schema, "MIGRATIONS", {1: ["ALTER TABLE runs ADD COLUMN note TEXT"]})
    with pytest.raises(UsageError, match="older than this mwperf's"):
        with opened(store_url):
            pass
    with opened(store_url, write=True) as conn:
        assert conn.execute("SELECT value FROM mwperf_meta WHERE key = 'store_version'") == [("2",)]
        assert "note" in schema.Columns(conn, "runs").kinds


def test_a_database_with_tables_of_others_is_refused(store_url):
    from mwperf.store.connect import connect

    conn = connect(store_url)
    conn.execute("CREATE TABLE points (x INTEGER)")
    conn.close()
    with pytest.raises(UsageError, match="holds tables named points but no mwperf_meta: not an mwperf store"):
        with opened(store_url, write=True):
            pass


def test_records_an_older_mwperf_stored_read_as_the_current_version(tmp_path, store_url):
    """A store filled by the previous release holds version-1 records: they
    come back through the one upgrade step, as from their run directory."""
    from mwperf.results.rundir import read_records
    from mwperf.store.query import stored_points

    run = tmp_path / "v1-run"
    shutil.copytree(FIXTURES / "v1-run", run)
    v1 = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]
    assert {r["schema_version"] for r in v1} == {1}
    with opened(store_url, write=True) as conn:
        assert ingest_dir(conn, run).outcome == "stored"
        for seq, record in enumerate(v1):  # as the previous release stored them
            conn.execute("UPDATE points SET record = ? WHERE seq = ?", [json.dumps(record), seq])
        stored = stored_points(conn)
    assert [s.record for s in stored] == read_records(run)
    assert {s.record.schema_version for s in stored} == {2}
