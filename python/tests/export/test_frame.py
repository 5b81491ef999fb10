"""mwperf.load and mwperf export --format parquet on a sweep with failed and
imported points: one row per point, dotted columns, the values of
results.jsonl; one row per subscriber on request."""

import json
import math

import pandas as pd
import pytest

import mwperf
from conftest import FIXTURES
from mwperf.cli.main import main


def lines(name):
    return [json.loads(l) for l in (FIXTURES / name).read_text().splitlines() if l.strip()]


@pytest.fixture
def sweep(tmp_path):
    """A run directory: measured points (some failed) and points imported from Perftest's tutorial."""
    assert main(["import", "perftest", str(FIXTURES / "perftest-tutorial.txt"), "--out", str(tmp_path / "imp"),
                 "--mw", "connext"]) == 0
    imported = [json.loads(l) for l in (tmp_path / "imp" / "results.jsonl").read_text().splitlines()]
    records = lines("results.jsonl") + lines("results-extended.jsonl") + imported
    run = tmp_path / "sweep"
    run.mkdir()
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return run, records


def test_one_row_per_point_with_the_records_values(sweep):
    run, records = sweep
    df = mwperf.load(run)
    assert len(df) == len(records)
    assert list(df.columns[:7]) == ["run_id", "point", "time", "status", "mw", "peer_mw", "mode"]
    for (_, row), r in zip(df.iterrows(), records):
        assert (row["mw"], row["mode"], row["size"], row["status"]) == (r["mw"], r["mode"], r["size"], r["status"])
        p50 = (r.get("latency_us") or {}).get("p50")
        assert (math.isnan(row["latency_us.p50"]) if p50 is None else row["latency_us.p50"] == p50)
        assert (pd.isna(row["cpu.pub"]) if r["cpu"]["pub"] is None else row["cpu.pub"] == r["cpu"]["pub"])
    assert str(df["time"].dtype).startswith("datetime64")
    assert df["subscribers"].tolist() == [r.get("subscribers", 1) for r in records]


def test_failed_and_imported_points_are_there_to_filter(sweep):
    run, records = sweep
    df = mwperf.load(run)
    failed = df[df["status"] == "failed"]
    assert len(failed) == sum(r["status"] == "failed" for r in records) == 4  # grep -c '"status":"failed"': 3 + 1
    assert failed["error"].str.len().gt(0).all()
    imported = df[df["source.tool"] == "perftest"]
    assert len(imported) == 24 and set(imported["mw"]) == {"connext"}
    assert set(imported["source.section"]) == {"Throughput Results-- RAW Transport (UDPv4)",
                                               "Latency Results -- RAW Transport (UDPv4)"}
    lat = imported[imported["mode"] == "latency"].set_index("size")
    assert lat.loc[63000, "latency_us.p50"] == 6595  # the tutorial's table


def test_per_subscriber_rows(sweep):
    run, records = sweep
    subs = mwperf.load(run, subscribers=True)
    ok = [r for r in records if r["status"] == "ok"]
    assert len(subs) == sum(len(r.get("per_subscriber") or [0]) for r in ok)
    four = subs[subs["subscribers"] == 4]
    assert four["subscriber.index"].tolist() == [0, 1, 2, 3]
    assert four["subscriber.latency_us.p50"].tolist() == [50.0, 55.0, 70.0, 58.0]
    assert four["subscriber.lost"].tolist() == [0, 0, 4, 2]
    one = subs[(subs["mw"] == "udp") & (subs["mode"] == "latency")]
    first = next(r for r in ok if r["mw"] == "udp" and r["mode"] == "latency")
    assert one["subscriber.latency_us.p50"].iloc[0] == first["latency_us"]["p50"]  # a point is its own subscriber


def test_several_runs_and_bad_paths(sweep, tmp_path):
    run, records = sweep
    both = mwperf.load([run, FIXTURES / "results.jsonl"])
    assert len(both) == len(records) + len(lines("results.jsonl"))
    with pytest.raises(FileNotFoundError, match="nowhere: no results.jsonl there"):
        mwperf.load(tmp_path / "nowhere")


def test_parquet_export_is_the_frame(sweep, capsys):
    run, records = sweep
    assert main(["export", str(run), "--format", "parquet"]) == 0
    files = capsys.readouterr().out.split()
    assert [f.rsplit("/", 1)[1] for f in files] == ["results.parquet", "subscribers.parquet"]
    back = pd.read_parquet(files[0])
    df = mwperf.load(run)
    assert list(back.columns) == list(df.columns) and len(back) == len(records)
    for column in ("mw", "mode", "size", "status", "latency_us.p50", "mbps", "source.section", "subscribers"):
        pd.testing.assert_series_equal(back[column], df[column], check_dtype=False)
    # lists and objects are JSON text: the affinities of the first point
    assert json.loads(back["cpu.pub_affinity"].iloc[0]) == records[0]["cpu"]["pub_affinity"]
    subs = pd.read_parquet(files[1])
    assert subs[subs["subscribers"] == 4]["subscriber.loss_rate"].tolist() == [0.0, 0.0, 0.02, 0.01]
