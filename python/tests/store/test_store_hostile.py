"""The store under records and run.json files made to break it (issue 37's
probe), on DuckDB and PostgreSQL: a record's free-form section of thousands
of keys became thousands of columns for good (10,000 keys did not finish in
120 s); ``HOSTNAME`` next to ``hostname`` in run.json made a run impossible to
ingest (DuckDB's column names ignore case); ``sent: 10**30`` or ``size:
2**63`` crashed ``db ingest``. The columns are now the record schema's and
RUN_COLUMNS (a free-form section is one JSON column), and a record with an
integer beyond 64 bits is skipped with one warning naming its line."""

from __future__ import annotations

import json

from conftest import FIXTURES
from mwperf.store import opened
from mwperf.store import ingest
from mwperf.store.ingest import ingest_dir
from mwperf.store.schema import TABLES, Columns


def fixture_lines() -> list[str]:
    return [l for l in (FIXTURES / "results.jsonl").read_text().splitlines() if l.strip()]


def run_dir(tmp_path, name: str, records: list[dict], run: dict | None = None):
    path = tmp_path / name
    path.mkdir()
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    if run is not None:
        (path / "run.json").write_text(json.dumps(run))
    return path


def test_a_free_form_section_of_many_keys_is_one_json_column(tmp_path, store_url):
    plain = [json.loads(l) for l in fixture_lines()[:2]]
    plain[0]["adapter"]["versions"] = {"lib": "1.0"}
    crafted = [json.loads(l) for l in fixture_lines()[:2]]
    for r in crafted:
        r["run_id"] = "crafted"
        # 300 keys (the probe's 3,000 took 18 s and 3,138 columns), two of them differing only in case
        r["adapter"]["config"] = {**{f"key{i}": i for i in range(300)}, "Key1": "x"}
        r["adapter"]["versions"] = {f"lib{i}": "1.0" for i in range(50)}
    with opened(store_url, write=True) as conn:
        ingest_dir(conn, run_dir(tmp_path, "plain", plain))
        columns = dict(Columns(conn, "points").kinds)
        assert ingest_dir(conn, run_dir(tmp_path, "crafted", crafted)).outcome == "stored"
        assert Columns(conn, "points").kinds == columns  # not one column more
        (config,) = conn.execute('SELECT "adapter.config" FROM points WHERE run_id = ? AND seq = 0', ("crafted",))[0]
        assert json.loads(config) == crafted[0]["adapter"]["config"]
        stored = conn.execute("SELECT record FROM points WHERE run_id = ? ORDER BY seq", ("crafted",))
        assert [json.loads(r)["adapter"]["config"]["Key1"] for (r,) in stored] == ["x", "x"]


def test_run_json_keys_that_differ_only_in_case_ingest(tmp_path, store_url):
    run = {"run_id": "fixture", "hostname": "host-a", "HOSTNAME": "HOST-B", "Kernel": "upper", "kernel": "6.1",
           "Agent": {"x": 1}, "agent": {"build_type": "Release"}, **{f"extra{i}": i for i in range(100)}}
    path = run_dir(tmp_path, "run", [json.loads(l) for l in fixture_lines()[:2]], run)
    with opened(store_url, write=True) as conn:
        assert ingest_dir(conn, path).outcome == "stored"
        assert conn.execute('SELECT hostname, kernel, "agent.build_type" FROM runs') == [("host-a", "6.1", "Release")]
        assert json.loads(conn.execute("SELECT run_json FROM runs")[0][0])["HOSTNAME"] == "HOST-B"
        fixed = {name for name, _ in TABLES["runs"] if name != "PRIMARY KEY"}
        assert set(Columns(conn, "runs").kinds) <= fixed | set(ingest.RUN_COLUMNS)


def test_an_integer_beyond_64_bits_is_skipped_with_one_warning(tmp_path, store_url):
    records = [json.loads(l) for l in fixture_lines()[:3]]
    records[0]["sent"] = 10 ** 30
    records[1]["size"] = 2 ** 63
    warnings: list[str] = []
    with opened(store_url, write=True) as conn:
        done = ingest_dir(conn, run_dir(tmp_path, "run", records), warn=warnings.append)
        assert done.points == 1 and conn.execute("SELECT point FROM points") == [(records[2]["point"],)]
    assert [w.split("results.jsonl:")[1] for w in warnings] == ["1: sent: an integer beyond 64 bits, skipped",
                                                                 "2: size: an integer beyond 64 bits, skipped"]


def test_a_truncated_duckdb_store_says_so_and_is_left_as_it_is(tmp_path, capsys):
    """Issue 37: a store cut short (the last sixth of its file gone, as a copy interrupted) reported
    "Current transaction is aborted (please ROLLBACK)": the first error of the ingest (DuckDB cannot read
    a block) was hidden by the one after it."""
    from mwperf.cli.main import main

    store = tmp_path / "store.duckdb"
    first = run_dir(tmp_path, "first", [json.loads(l) for l in fixture_lines()])
    second = [json.loads(l) for l in fixture_lines()[:3]]
    for r in second:
        r["run_id"] = "second"
    assert main(["db", "ingest", str(first), "--db", str(store)]) == 0
    size = store.stat().st_size
    with open(store, "r+b") as handle:
        handle.truncate(size * 5 // 6)
    cut = store.read_bytes()
    capsys.readouterr()
    assert main(["db", "ingest", str(run_dir(tmp_path, "second", second)), "--db", str(store)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "cannot be read (truncated or damaged?), refused and left as it is" in err, err
    assert "Current transaction is aborted" not in err
    assert store.read_bytes() == cut
