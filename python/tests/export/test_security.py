"""The security table (each DDS Security level against its none twin), on
records made from a fixture record with known answers: the ratios are the
fixture's numbers divided by hand."""

import copy
import json

from conftest import FIXTURES, typed
from mwperf.export.interop import interop
from mwperf.export.security import HEADERS, security
from mwperf.export.summaries import summaries
from mwperf.export.tables import render_markdown, render_text


def point(level, p50=None, p99=None, mbps=None, match=None, mw="fastdds", size=1024, status="ok", peer=None):
    line = (FIXTURES / "results-extended.jsonl").read_text().splitlines()[2]  # fastdds latency 1 KiB reliable udp
    r = copy.deepcopy(json.loads(line))
    assert (r["mw"], r["size"], r["mode"]) == ("fastdds", 1024, "latency")
    r["mw"], r["size"], r["status"], r["peer_mw"] = mw, size, status, peer
    r["qos"]["security"] = level
    r["latency_us"]["p50"], r["latency_us"]["p99"], r["mbps"], r["discovery_ms"] = p50, p99, mbps, match
    r["cpu_us_per_msg"] = {"pub": 10.0 if level == "none" else 15.0, "sub": 8.0 if level == "none" else 16.0}
    if status != "ok":
        r["latency_us"], r["error"] = None, "fastdds: no matching peer within 10 s; Fast DDS said: [SECURITY] bad cert"
    return typed(r)


def test_each_level_against_none_as_ratios():
    records = [point("none", 40.0, 100.0, 20.0, 50.0), point("sign", 50.0, 120.0, 18.0, 300.0),
               point("encrypt", 60.0, 150.0, 16.0, 350.0), point("encrypt", 70.0, 130.0, 15.0, 340.0),
               point("none", 30.0, 60.0, 900.0, 40.0, size=1 << 20), point("encrypt", 90.0, 240.0, 300.0, 400.0,
                                                                              size=1 << 20)]
    (table,) = security(records)
    assert table.headers == HEADERS
    rows = [row.cells for row in table.rows]
    assert rows[0][:4] == ["fastdds", "latency", "1KiB", "none"] and rows[0][5] == "1.00x"
    # encrypt's two launches: their medians (65 us, 140 us, 15.5 Mbit/s, 345 ms)
    assert rows[1] == ["fastdds", "latency", "1KiB", "sign", "50.0", "1.25x", "1.20x", "18.0", "0.90x", "0.00",
                       "1.50x", "2.00x", "300.0", "6.00x"]
    assert rows[2][3:10] == ["encrypt", "65.0", "1.62x", "1.40x", "15.5", "0.78x", "0.00"]
    assert rows[2][12:] == ["345.0", "6.90x"]
    assert rows[4][:9] == ["fastdds", "latency", "1MiB", "encrypt", "90.0", "3.00x", "4.00x", "300.0", "0.33x"]
    assert "DDS Security: each level against none" in render_text(summaries(records))


def test_a_failed_level_says_so_and_a_level_without_its_twin_is_not_shown():
    records = [point("none", 40.0, 100.0, 20.0, 50.0), point("encrypt", status="failed"),
               point("sign", 50.0, 120.0, 18.0, 300.0, mw="cyclonedds")]
    (table,) = security(records)
    assert [row.cells[:4] for row in table.rows] == [["fastdds", "latency", "1KiB", "none"],
                                                     ["fastdds", "latency", "1KiB", "encrypt"]]
    assert "bad cert" in table.rows[1].failure
    text = render_markdown([table])
    assert "| fastdds | latency | 1KiB | encrypt | fastdds: no matching peer" in text
    assert security([point("none", 40.0), point(None, 30.0, mw="cyclonedds")]) == []


def test_the_cross_vendor_matrix_keeps_secured_cells_apart():
    records = [point("none", 40.0, mw="cyclonedds", peer="fastdds"), point("none", 30.0, mw="fastdds"),
               point("encrypt", 80.0, mw="cyclonedds", peer="fastdds"), point("encrypt", 60.0, mw="fastdds")]
    p50s = [s for s in interop(records) if s.title.startswith("Cross-vendor p50")]
    assert sorted(s.qos for s in p50s) == ["reliable, keep-last:10, volatile, udp",
                                           "reliable, keep-last:10, volatile, udp, security encrypt"]
    secured = next(s for s in p50s if "security" in s.qos)
    assert [row.cells for row in secured.rows] == [["cyclonedds", "-", "80.0"], ["fastdds", "-", "60.0"]]
