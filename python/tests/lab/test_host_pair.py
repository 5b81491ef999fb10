"""A lab's records carry their pair of hosts (``host_pair``): report's tables, compare's and history's points
and the store group by it, and filter by it. Records as a lab sweep writes them: the fixture's, each pair's
copy tagged with its pair (and its own latency, so that a mixed group would show)."""

from __future__ import annotations

import copy
import json

from conftest import FIXTURES, typed
from synthetic import measured_stats
from mwperf.analysis.history import build_series
from mwperf.cli.main import main
from mwperf.export.tables import build_sections
from mwperf.model.labels import point_id
from mwperf.model.schema import validate_record
from mwperf.store import opened
from mwperf.store.ingest import ingest_dir
from mwperf.store.query import Stored, stored_points

PAIRS = {"pc:pi": 80.0, "pi:pc": 120.0}


def records() -> list[dict]:
    base = json.loads((FIXTURES / "results.jsonl").read_text().splitlines()[0])  # udp latency 64 B
    out = []
    for i, (pair, p50) in enumerate(PAIRS.items()):
        r = copy.deepcopy(base)
        r["point"], r["host_pair"], r["point_key"] = i, pair, f"{i:016x}"
        r["latency_us"] = measured_stats(r["latency_us"], p50=p50)
        validate_record(r)
        out.append(r)
    return out


def run_dir(tmp_path):
    path = tmp_path / "lab-run"
    path.mkdir()
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records()))
    return path


def test_a_table_and_a_point_per_pair():
    typed_records = [typed(r) for r in records()]
    assert len({point_id(r) for r in typed_records}) == 2
    assert [point_id(r).label.rsplit(" on ", 1)[1] for r in typed_records] == list(PAIRS)
    sections = build_sections(typed_records)
    assert [s.title.split(" (")[0] for s in sections] == ["udp latency on pc:pi", "udp latency on pi:pc"]
    assert [len(s.rows) for s in sections] == [1, 1]


def test_history_follows_each_pair_apart():
    entries = [Stored(typed(r), f"run{i}", f"run{i}", "controller", f"/r/{i}", {}) for i, r in
               enumerate(records() * 2)]
    series = build_series(entries)
    assert sorted((s.host, len(s.runs)) for s in series) == [("pc:pi", 2), ("pi:pc", 2)]


def test_the_store_has_a_host_pair_column_and_filters_by_it(tmp_path):
    url = str(tmp_path / "store.duckdb")
    with opened(url, write=True) as conn:
        ingest_dir(conn, run_dir(tmp_path))
        grouped = sorted(conn.execute('SELECT host_pair, count(*) FROM points GROUP BY host_pair'))
        assert grouped == [("pc:pi", 1), ("pi:pc", 1)]
        (only,) = stored_points(conn, host_pair=["pi:pc"])
        assert only.record.latency_us.p50 == 120.0


def test_report_shows_the_pairs_asked_and_refuses_one_the_run_lacks(tmp_path, capsys):
    path = run_dir(tmp_path)
    assert main(["report", str(path), "--host-pair", "pi:pc"]) == 0
    out = capsys.readouterr().out
    assert "udp latency on pi:pc" in out and "on pc:pi" not in out
    assert main(["report", str(path), "--host-pair", "pc:nas"]) == 2
    err = capsys.readouterr().err
    assert err == (f"mwperf: error: --host-pair pc:nas: pc:nas is not a host pair of {path} (its pairs: pc:pi, "
                   f"pi:pc)\n")
