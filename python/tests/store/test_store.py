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
    monkeypatch.setattr("mwperf.store.query.record_ok", lambda r: True)  # this mwperf reads the newer records
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


# -- issue 45.12: a stored run is never changed by a second ingest --------------------------------

def _lines(path):
    return [json.loads(line) for line in (path / "results.jsonl").read_text().splitlines()]


def _write(path, records):
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def _stored_p50s(conn) -> list:
    return [json.loads(text)["latency_us"]["p50"] if json.loads(text)["latency_us"] else None
            for (text,) in conn.execute("SELECT record FROM points ORDER BY seq")]


@pytest.mark.parametrize("change", ["a p50 changed", "a launch dropped", "two launches swapped",
                                    "run.json changed alone"])
def test_a_modified_copy_of_a_stored_run_is_refused_and_the_stored_run_stays(tmp_path, store_url, change):
    """A modified copy of a stored run (same run id, host and start) silently replaced it: now one line,
    and the stored run as it was."""
    run = make_run(tmp_path, "results")
    with opened(store_url, write=True) as conn:
        assert ingest_dir(conn, run).outcome == "stored"
        before = _stored_p50s(conn)
        copy = tmp_path / "copy"
        shutil.copytree(run, copy)
        records = _lines(copy)
        if change == "a p50 changed":
            records[3]["latency_us"]["p50"] = records[3]["latency_us"]["p90"]  # still in order: a forgery
            said = "point 3 (udp throughput 1024 B (best-effort, udp)) differs from the stored one"
        elif change == "a launch dropped":
            records = records[:-1]
            said = "the store has 16 launches of it, this directory 15"
        elif change == "two launches swapped":
            records[0], records[1] = records[1], records[0]
            said = "point 1 (udp latency 1024 B (best-effort, udp)) differs from the stored one"
        else:
            doc = json.loads((copy / "run.json").read_text())
            (copy / "run.json").write_text(json.dumps({**doc, "kernel": "6.6.6-forged"}))
            said = "its launches are the stored ones, its run.json is not"
        _write(copy, records)
        with pytest.raises(UsageError) as caught:
            ingest_dir(conn, copy)
        text = str(caught.value)
        assert text.startswith(f"db ingest {copy}: run fixture is stored (from ") and said in text, text
        assert "a stored run is never changed" in text and "\n" not in text
        assert _stored_p50s(conn) == before
        assert conn.execute("SELECT kernel FROM runs") == [("6.1.0-test",)]


def test_a_run_ingested_while_it_ran_takes_its_new_launches_and_its_last_word(tmp_path, store_url):
    run = make_run(tmp_path, "results", lines=5)
    doc = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**doc, "status": "running"}))
    with opened(store_url, write=True) as conn:
        assert ingest_dir(conn, run).outcome == "stored"
        first = conn.execute("SELECT seq, record FROM points ORDER BY seq")
        (run / "run.json").write_text(json.dumps({**doc, "status": "complete"}))  # it finished, nothing new
        assert ingest_dir(conn, run).outcome == "updated"
        _write(run, [json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines()])
        assert ingest_dir(conn, run).outcome == "updated"
        assert conn.execute("SELECT seq, record FROM points ORDER BY seq")[:5] == first  # the stored ones as they were
        assert conn.execute("SELECT count(*), count(DISTINCT seq) FROM points") == [(16, 16)]
        assert conn.execute("SELECT status FROM runs") == [("complete",)]


# -- issue 45.14: the store's readers check what they read as the loader does --------------------

def test_a_store_changed_by_other_hands_is_refused_by_its_readers(tmp_path, store_url):
    from mwperf.errors import Refused
    from mwperf.store.query import stored_points

    run = make_run(tmp_path, "results")
    with opened(store_url, write=True) as conn:
        ingest_dir(conn, run)
        assert len(stored_points(conn)) == 16
        (text,) = conn.execute("SELECT record FROM points WHERE seq = 0")[0]
        forged = json.loads(text)
        forged["latency_us"]["p50"] = -5.0
        conn.execute("UPDATE points SET record = ? WHERE seq = 0", (json.dumps(forged),))
        with pytest.raises(Refused, match=r": run fixture: point 0 \(udp latency 64 B .*\): latency_us.p50 -5: "
                                          r"negative"):
            stored_points(conn)
    with pytest.raises(Refused):
        mwperf.load(db=store_url)
    with opened(store_url, write=True) as conn:
        conn.execute("UPDATE points SET record = ? WHERE seq = 0", (text,))
        conn.execute("UPDATE points SET record = ? WHERE seq = 1", (text,))  # one launch stored twice
        with pytest.raises(Refused, match="repeated: the same record of this launch came before"):
            stored_points(conn)
        conn.execute("UPDATE points SET record = ? WHERE seq = 1", ('{"schema_version": 2, "evil": 1}',))
        with pytest.raises(Refused, match="a stored record that is not one of the results schema"):
            stored_points(conn)
