import csv
import io
import json

from conftest import FIXTURES, check_golden, typed_all
from mwperf.export.csv import COLUMNS, to_csv_text


def load():
    return [json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines() if line.strip()]


def test_csv_golden():
    check_golden("results.csv", to_csv_text(typed_all(load())))


def test_flat_columns():
    for name in ("latency_p50_us", "latency_p999999_us", "latency_samples", "rtt_p99_us",
                 "cpu_pub", "cpu_placement", "cpu_pub_user_s", "rss_sub_kb", "loss_rate", "loop_rate",
                 "adapter_version", "status", "error", "qos_history", "qos_durability", "qos_instances",
                 "qos_async", "qos_batch", "qos_receive", "qos_nic", "mw_rss_pub_kb", "mw_rss_sub_kb", "send_lag_p99_us", "send_lag_samples", "latency_count"):
        assert name in COLUMNS
    assert len(COLUMNS) == len(set(COLUMNS))


def test_one_row_per_record_and_nulls_empty():
    records = load()
    rows = list(csv.DictReader(io.StringIO(to_csv_text(typed_all(records)))))
    assert len(rows) == len(records)
    failed = [row for row in rows if row["status"] == "failed" and not row["error"].startswith("no pong")]
    assert failed and all(row["received"] == "" for row in failed)
    total_loss = [row for row in rows if row["error"].startswith("no pong")]
    assert total_loss and total_loss[0]["received"] == "0"
    ok = rows[0]
    assert float(ok["latency_p50_us"]) == records[0]["latency_us"]["p50"]


def test_flatten_affinity():
    record = load()[0]
    (row,) = csv.DictReader(io.StringIO(to_csv_text(typed_all([record]))))
    assert row["cpu_pub_affinity"] == " ".join(str(c) for c in record["cpu"]["pub_affinity"])


def test_qos_columns():
    rows = {(r["mw"], r["mode"], r["point"]): r for r in csv.DictReader(io.StringIO(to_csv_text(typed_all(load()))))}
    udp = next(r for k, r in rows.items() if k[0] == "udp")
    assert (udp["qos_history"], udp["qos_instances"], udp["qos_async"]) == ("", "", "")
    keyed = next(r for k, r in rows.items() if k[0] == "cyclonedds" and k[1] == "throughput")
    assert (keyed["qos_history"], keyed["qos_durability"], keyed["qos_instances"], keyed["qos_async"],
            keyed["qos_receive"]) == ("keep-all", "volatile", "1000", "false", "waitset")
    rate = next(r for k, r in rows.items() if k[0] == "fastdds" and k[1] == "rate")
    assert rate["transport"] == "shm" and rate["reliability"] == "best-effort"
    assert float(rate["send_lag_p50_us"]) > 0
    assert int(rate["mw_rss_pub_kb"]) >= 0
