import csv
import io
import json

from conftest import FIXTURES, check_golden
from mwperf.export.csv import COLUMNS, flatten, to_csv_text


def load():
    return [json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines() if line.strip()]


def test_csv_golden():
    check_golden("results.csv", to_csv_text(load()))


def test_flat_columns():
    for name in ("latency_p50_us", "latency_p999999_us", "latency_count", "latency_exact", "rtt_p99_us",
                 "cpu_pub", "cpu_placement", "cpu_pub_user_s", "rss_sub_kb", "loss_rate", "loop_rate",
                 "adapter_version", "status", "error"):
        assert name in COLUMNS
    assert len(COLUMNS) == len(set(COLUMNS))


def test_one_row_per_record_and_nulls_empty():
    records = load()
    rows = list(csv.DictReader(io.StringIO(to_csv_text(records))))
    assert len(rows) == len(records)
    failed = [row for row in rows if row["status"] == "failed"]
    assert failed and all(row["received"] == "" for row in failed)
    ok = rows[0]
    assert float(ok["latency_p50_us"]) == records[0]["latency_us"]["p50"]
    assert ok["latency_exact"] == "true"


def test_flatten_affinity():
    record = load()[0]
    assert flatten(record)["cpu_pub_affinity"] == " ".join(str(c) for c in record["cpu"]["pub_affinity"])
