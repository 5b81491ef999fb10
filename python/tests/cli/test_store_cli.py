"""``mwperf db``, ``history``, ``check`` and the store around ``run`` and
``report``: exit codes, one-line errors, stores refused and left as they
are, a run's results never lost to its store, the report's history."""

from __future__ import annotations

import copy
import json

import pytest

from conftest import FIXTURES, check_golden
from synthetic import measured_stats
from mwperf.cli.main import main
from mwperf.results.rundir import RunDir, read_records

UNREACHABLE = "postgresql://alice:s3cret@/mwperf?host=/nonexistent-mwperf-socket-dir"


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("mwperf: error: ") and "Traceback" not in err, err
    return lines[0]


def series_runs(tmp_path, count=12, step_at=6, launches=1, size=64):
    """``count`` run directories of one point, the p50 stepping up by 20 us from run ``step_at + 1``
    (``launches`` a run, their p50 0.1 us apart)."""
    template = json.loads((FIXTURES / "results.jsonl").read_text().splitlines()[0])
    dirs = []
    for i in range(count):
        r = copy.deepcopy(template)
        r["run_id"], r["time"] = f"run{i + 1:02d}", f"2026-11-{i + 1:02d}T12:00:00.000Z"
        r["size"] = size
        rundir = RunDir(tmp_path / r["run_id"]).create()
        for k in range(launches):
            # p99 90 us in every run (above the stepped p50), the rest of the fixture's figures in order around them
            r["latency_us"] = measured_stats(template["latency_us"], scale=False, p99=90.0,
                                             p50=50.0 + 0.5 * (i % 3) + (20.0 if i >= step_at else 0.0) + 0.1 * k)
            r["repetition"] = k if launches > 1 else None
            r["point"] = k
            rundir.append(copy.deepcopy(r))
        rundir.write_run_json({"run_id": r["run_id"], "started": r["time"], "hostname": "h1", "kernel": "6.1"})
        dirs.append(str(rundir.path))
    return dirs


def test_db_ingest_stores_a_run_once_and_info_says_what_is_there(tmp_path, store_url, capsys):
    dirs = series_runs(tmp_path, count=3)
    assert main(["db", "ingest", *dirs, "--db", store_url]) == 0
    assert main(["db", "ingest", dirs[0], "--db", store_url]) == 0
    out = capsys.readouterr().out
    assert out.count("stored: ") == 3 and "unchanged: " in out
    assert UNREACHABLE not in out and "s3cret" not in out
    assert main(["db", "info", "--db", store_url]) == 0
    assert "runs: 3, points: 3, hosts: h1" in capsys.readouterr().out


def test_history_finds_the_step_and_says_so(tmp_path, store_url, capsys):
    assert main(["db", "ingest", *series_runs(tmp_path), "--db", store_url]) == 0
    capsys.readouterr()
    assert main(["history", "--db", store_url, "--json"]) == 0
    (series,) = json.loads(capsys.readouterr().out)
    assert [(c["metric"], c["run"], c["run_id"]) for c in series["change_points"]] == [("p50", 7, "run07")]
    assert series["host"] == "h1" and len(series["runs"]) == 12
    assert main(["history", "--db", store_url, "--mw", "udp", "--size", "64"]) == 0
    text = capsys.readouterr().out
    assert "== udp latency 64 B (best-effort, udp) | host h1 | cross-core 0,1, block, local" in text
    assert "<- p50 50.5 -> 70.5 us, +40% (p=" in text and "1 point(s), 1 change point(s)" in text
    assert main(["history", "--db", store_url, "--mw", "tcp"]) == 0
    assert "no stored point matches" in capsys.readouterr().out


def test_history_and_check_print_as_the_golden_files_say(tmp_path, capsys):
    store = str(tmp_path / "s.duckdb")
    assert main(["db", "ingest", *series_runs(tmp_path), "--db", store]) == 0
    capsys.readouterr()
    assert main(["history", "--db", store]) == 0
    check_golden("store/history.txt", capsys.readouterr().out)
    budgets = tmp_path / "b.yaml"
    budgets.write_text('budgets:\n  - {match: {mw: udp}, p50: "<= 50.2us", p99.9999: "<= 1s", loop_rate: ">= 0.99"}\n'
                       '  - {match: {mw: zenoh}, p99: "<= 1ms"}\n')
    assert main(["check", str(budgets), *series_runs(tmp_path / "more", 2, launches=5)]) == 1
    check_golden("store/check.txt", capsys.readouterr().out)


def test_an_unreachable_postgresql_is_one_line_without_the_password(tmp_path, capsys):
    for args in (["db", "ingest", *series_runs(tmp_path, 1)], ["db", "info"], ["history"]):
        assert main([*args, "--db", UNREACHABLE]) == 2
        line = one_line_error(capsys)
        assert "--db postgresql://alice@/mwperf?host=/nonexistent-mwperf-socket-dir: cannot connect" in line
        assert "s3cret" not in line


def test_a_corrupt_duckdb_file_is_refused_and_left_as_it_is(tmp_path, capsys):
    store = tmp_path / "store.duckdb"
    junk = b"not a database\n" * 1000
    store.write_bytes(junk)
    run = series_runs(tmp_path, 1)[0]
    for args in (["db", "ingest", run], ["db", "info"], ["history"], ["check", str(FIXTURES / "x.yaml"), run]):
        if args[0] == "check":
            (tmp_path / "b.yaml").write_text('budgets: [{p99: "<= 1s"}]\n')
            args = ["check", str(tmp_path / "b.yaml"), "--db", str(store)]
            assert main(args) == 2
        else:
            assert main([*args, "--db", str(store)]) == 2
        assert "not a DuckDB database, refused and left as it is" in one_line_error(capsys)
        assert store.read_bytes() == junk
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("store")) == ["store.duckdb"]


def test_a_store_with_a_corrupt_block_is_refused_and_left_as_it_is(tmp_path, capsys):
    store = tmp_path / "s.duckdb"
    runs = series_runs(tmp_path, 2)
    assert main(["db", "ingest", runs[0], "--db", str(store)]) == 0
    with open(store, "r+b") as handle:  # DuckDB's two database headers and the first block after them
        handle.seek(4096)
        handle.write(b"\x5a" * 12288)
    damaged = store.read_bytes()
    capsys.readouterr()
    for args in (["db", "ingest", runs[1]], ["history"]):
        assert main([*args, "--db", str(store)]) == 2
        assert "cannot be read (truncated or damaged?), refused and left as it is (" in one_line_error(capsys)
        assert store.read_bytes() == damaged


def test_check_exits_0_when_every_budget_holds_1_when_one_breaks_2_for_a_bad_file(tmp_path, capsys):
    run = series_runs(tmp_path, 1, launches=5)[0]  # p50 50-50.4 us, p99 90 us, no loss, 13936 samples
    budgets = tmp_path / "b.yaml"
    budgets.write_text('budgets:\n  - match: {mw: udp, size: 64}\n    p50: "<= 100us"\n    loss: "<= 0.1%"\n')
    assert main(["check", str(budgets), run]) == 0
    assert "1 budget(s), 2 check(s): 2 holds" in capsys.readouterr().out
    budgets.write_text('budgets:\n  - match: {mw: udp, size: 64}\n    p50: "<= 50.2us"\n')  # 3 of 5 launches meet it
    assert main(["check", str(budgets), run]) == 3
    assert "CANNOT DECIDE" in capsys.readouterr().out
    one = series_runs(tmp_path / "one", 1)[0]  # one launch: was a pass, now cannot decide
    budgets.write_text('budgets:\n  - match: {mw: udp, size: 64}\n    p50: "<= 100us"\n')
    assert main(["check", str(budgets), one]) == 3
    assert "cannot decide: 1 launches, need 5" in capsys.readouterr().out
    budgets.write_text('budgets:\n  - match: {mw: udp}\n    p99: "<= 50us"\n    p99.9999: "<= 1s"\n')
    assert main(["check", str(budgets), run]) == 1
    out = capsys.readouterr().out
    assert "VIOLATED" in out and "p99 <= 50us" in out and " 90" in out
    assert "NOT MEASURABLE" in out and "13936 samples; p99.9999 needs 1,000,000" in out
    budgets.write_text('budgets:\n  - p99: "<= 2 fortnights"\n')
    assert main(["check", str(budgets), run]) == 2
    assert "budgets[0].p99: <= 2 fortnights: unknown duration unit" in one_line_error(capsys)


def test_check_on_the_store_takes_the_newest_run(tmp_path, capsys):
    store = str(tmp_path / "s.duckdb")
    assert main(["db", "ingest", *series_runs(tmp_path, launches=5), "--db", store]) == 0  # the last 6 at 70 us
    budgets = tmp_path / "b.yaml"
    budgets.write_text('budgets: [{p50: "<= 60us"}]\n')
    assert main(["check", str(budgets), "--db", store]) == 1
    out = capsys.readouterr().out
    assert "run12" in out and "1 check(s): 1 violated" in out
    # hostile input 4: the newest run lacks the budget's point, an older one has it ("1 holds" on run12 before)
    newer = series_runs(tmp_path / "newer", 13, launches=5, size=128)[-1:]  # run13: 128 B only
    assert main(["db", "ingest", *newer, "--db", store]) == 0
    budgets.write_text('budgets: [{match: {size: 64}, p50: "<= 100us"}]\n')
    capsys.readouterr()
    assert main(["check", str(budgets), "--db", store]) == 1
    out = capsys.readouterr().out
    assert "NO POINT MATCHED" in out and "not in the newest run (run13); run run12 has it" in out


def test_report_with_a_store_shows_the_history_of_the_runs_points(tmp_path, capsys):
    store = str(tmp_path / "s.duckdb")
    dirs = series_runs(tmp_path)
    assert main(["db", "ingest", *dirs, "--db", store]) == 0
    assert main(["report", dirs[-1], "--db", store]) == 0
    html = (tmp_path / "run12" / "report.html").read_text()
    assert 'id="figure-history"' in html and "change point" in html and "run run07" in html
    assert main(["report", dirs[-1]]) == 0
    assert 'id="figure-history"' not in (tmp_path / "run12" / "report.html").read_text()


def fake_run(fake_agent, out, *extra):
    return main(["run", "--agent", str(fake_agent), "--mw", "udp", "--mode", "latency", "--size", "64",
                 "--duration", "300ms", "--warmup", "0", "--out", str(out), *extra])


def test_a_run_ingests_into_its_store_and_a_broken_store_loses_nothing(tmp_path, fake_agent, capsys):
    store = tmp_path / "s.duckdb"
    assert fake_run(fake_agent, tmp_path / "one", "--db", str(store)) == 0
    assert "store: stored in" in capsys.readouterr().err
    assert main(["db", "info", "--db", str(store)]) == 0 and "runs: 1, points: 1" in capsys.readouterr().out
    # an explicit store that cannot be used: refused before measuring
    assert fake_run(fake_agent, tmp_path / "two", "--db", UNREACHABLE) == 2
    assert "cannot connect" in one_line_error(capsys) and not (tmp_path / "two").exists()
    # a store that breaks after the run started: a warning, the run's results and exit code stay
    junk = b"x" * 5000
    store.write_bytes(junk)
    import mwperf.cli.db as db

    real = db.check_run_store
    db.check_run_store = lambda option, out: option  # as if it broke while the run measured
    try:
        assert fake_run(fake_agent, tmp_path / "three", "--db", str(store)) == 0
    finally:
        db.check_run_store = real
    err = capsys.readouterr().err
    assert "mwperf: warning: not stored in" in err and "the results are in" in err
    assert len(read_records(tmp_path / "three")) == 1 and store.read_bytes() == junk


def test_the_default_store_is_the_results_folders_and_none_turns_it_off(tmp_path, fake_agent, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MWPERF_DB", raising=False)
    assert fake_run(fake_agent, "results/mine") == 0
    assert (tmp_path / "results" / "mwperf.duckdb").is_file()
    assert fake_run(fake_agent, "elsewhere/mine") == 0  # not the results folder: no store
    assert fake_run(fake_agent, "results/off", "--db", "none") == 0
    capsys.readouterr()
    assert main(["db", "info"]) == 0 and "runs: 1, points: 1" in capsys.readouterr().out
    assert not (tmp_path / "elsewhere" / "mwperf.duckdb").exists()


@pytest.mark.parametrize("args, expected", [
    (["db"], "db: what: ingest DIR..., info or upgrade"),
    (["db", "ingest", "/no/such/run"], "db ingest /no/such/run: no results.jsonl there"),
    (["check", "b.yaml"], "give run directories or --db"),
    (["history", "--size", "1parsec"], "--size 1parsec"),
])
def test_bad_input_is_one_line(tmp_path, capsys, monkeypatch, args, expected):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "b.yaml").write_text('budgets: [{p99: "<= 1s"}]\n')
    assert main(args) == 2
    assert expected in one_line_error(capsys)


def test_a_scenario_runs_flows_are_stored_with_their_scenario(tmp_path, store_url, capsys):
    """fixtures/scenario-run: its 4 flow records (2 flows, together and alone) are points of the store, each with
    its scenario columns, and load back as the run directory has them."""
    import shutil

    from mwperf import load

    run = tmp_path / "scenario-run"
    shutil.copytree(FIXTURES / "scenario-run", run)
    assert main(["db", "ingest", str(run), "--db", store_url]) == 0
    assert "4 points" in capsys.readouterr().out
    frame = load(db=store_url)
    assert sorted(zip(frame["scenario.flow"], frame["scenario.together"])) == [
        ("imu", False), ("imu", True), ("status", False), ("status", True)]
    assert set(frame["scenario.name"]) == {"two-flows"}
    labels = sorted(frame["point_label"]) if "point_label" in frame else []
    assert not labels or any("[two-flows: imu together]" in label for label in labels)


def test_compare_pools_the_gates_spread_with_the_stored_history(tmp_path, capsys):
    """One launch a side cannot be decided on its own; with --db, the point's stored runs (5 launches
    each, 0.1 us apart) give the spread, the gate decides and says where its spread came from."""
    store = str(tmp_path / "s.duckdb")
    assert main(["db", "ingest", *series_runs(tmp_path / "stored", 4, launches=5), "--db", store]) == 0
    a, b = series_runs(tmp_path / "a", 1)[0], series_runs(tmp_path / "b", 12)[-1]  # 50 us, then 70.5 us
    capsys.readouterr()
    assert main(["compare", a, b, "--fail-if-slower", "5"]) == 3
    assert "cannot decide: 1+1 launches, need 2+2" in capsys.readouterr().out
    assert main(["compare", a, b, "--fail-if-slower", "5", "--db", store]) == 1
    out = capsys.readouterr().out
    assert "REGRESSION: udp latency 64 B" in out and "(spread pooled with the store's history of the point: 12 df)" in out  # run01 is A's: not pooled
    assert main(["compare", a, a, "--fail-if-slower", "5", "--db", store]) == 0


def test_history_keeps_one_value_per_launch(tmp_path, capsys):
    store = str(tmp_path / "s.duckdb")
    assert main(["db", "ingest", *series_runs(tmp_path, 3, launches=5), "--db", store]) == 0
    capsys.readouterr()
    assert main(["history", "--db", store, "--json"]) == 0
    (series,) = json.loads(capsys.readouterr().out)
    first = series["runs"][0]
    assert first["repetitions"] == 5 and first["launches"]["p50"] == pytest.approx([50.0, 50.1, 50.2, 50.3, 50.4])
    assert first["p50"] == pytest.approx(50.2)  # their median, in the series the change points are found in
