"""The floor in the tables and the report. The "x floor" and "% memcpy"
cells are computation checks (the ratio of two recorded figures); what the
floor itself measures is tested against ground truth in
tests/execute/test_floor.py."""

import json

from conftest import FIXTURES, typed, typed_all
from mwperf.export.floor import PCT_IPERF3, PCT_MEMCPY, X_FLOOR, Anchors, floor_tables
from mwperf.export.html import HtmlReport
from mwperf.export.tables import LATENCY_HEADERS, THROUGHPUT_HEADERS, Tables, build_sections, floor_sections, render_text
from mwperf.results.floor import write_floor
from mwperf.results.rundir import RunDir
from mwperf.model.upgrade import blank
from floor_docs import doc, floor


def load():
    return typed_all(json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines() if line.strip())


def latency_record(p50, size=64, mode="latency", mbps=None, status="ok", error=None):
    """A version-2 record (every field, null where not given) of this point."""
    return typed({**blank(), "mw": "udp", "mode": mode, "size": size, "status": status, "error": error,
            "cpu": {"pub": 0, "sub": 1, "placement": "cross-core"}, "wait": "block",
            "latency_us": {"count": 1000, "p50": p50}, "mbps": mbps, "point": 0, "subscribers": 1,
            "subscribers_as": "processes"})


def column(section, header):
    i = section.headers.index(header)
    return [row.cells[i] for row in section.rows]


def test_x_floor_is_the_points_p50_over_the_floors():
    (section,) = build_sections([latency_record(24.0), latency_record(9.0, size=1024)], Anchors(doc()))
    assert section.headers == LATENCY_HEADERS + [X_FLOOR]
    assert column(section, X_FLOOR) == ["4.0", "-"]  # 24 / 6 (unix, the lowest); no floor at 1024 B


def test_percent_of_memcpy_and_of_iperf3_in_throughput_tables():
    baseline = {"tcp": {"gbps": 20.0}, "udp": {"gbps": 40.0, "lost_percent": 1.0}}
    (section,) = build_sections([latency_record(50.0, mode="throughput", mbps=1800.0)], Anchors(doc(), baseline))
    assert section.headers == THROUGHPUT_HEADERS + [PCT_MEMCPY, PCT_IPERF3]
    assert column(section, PCT_MEMCPY) == ["2.0"]    # 1800 Mbit/s of memcpy's 90 Gbit/s
    assert column(section, PCT_IPERF3) == ["4.5"]    # of the better of iperf3's TCP and UDP (40 Gbit/s)
    (section,) = build_sections([latency_record(50.0, mode="throughput", mbps=1800.0)], Anchors(None, baseline))
    assert section.headers == THROUGHPUT_HEADERS + [PCT_IPERF3]


def test_no_floor_no_columns_and_a_failed_point_keeps_its_reason():
    assert [s.headers for s in build_sections(load(), Anchors())] == [s.headers for s in build_sections(load())]
    failed = latency_record(None, status="failed", error="agent hung")
    (section,) = build_sections([failed], Anchors(doc()))
    assert section.rows[0].failure == "FAILED: agent hung" and len(section.rows[0].cells) == len(section.headers)


def test_the_floor_tables():
    (table,) = floor_tables(doc())
    assert table["title"].startswith("floor: cross-core 0,1, wait block")
    assert table["headers"] == ["Size", "memcpy (Gbit/s)", "shm futex 50% (us)", "shm 99% (us)",
                                "unix stream 50% (us)", "unix 99% (us)", "udp datagram 50% (us)", "udp 99% (us)",
                                "floor 50% (us)"]
    assert table["rows"] == [["64", "90.0", "8.00", "16.0", "6.00", "12.0", "9.00", "18.0", "6.00 (unix)"],
                             ["70000", "-", "-", "-", "-", "-", "-", "-", "-"]]
    text = render_text(floor_sections(doc(floor(entries=[], error="the peer (pid 7): no answer within 1.0 s"))))
    assert "all: FAILED: the peer (pid 7): no answer within 1.0 s" in text


def test_the_report_and_the_terminal_carry_the_floor(tmp_path):
    import io

    rundir = RunDir(tmp_path / "with").create()
    write_floor(rundir, doc())
    (html,) = HtmlReport().write([latency_record(24.0)], rundir)
    page = html.read_text()
    assert '<section id="floor">' in page and "floor: cross-core 0,1, wait block" in page
    assert '<div class="figure" id="figure-floor-figure">' in page and f"<th>{X_FLOOR}</th>" in page
    out = io.StringIO()
    Tables("text", out, headline=False).write([latency_record(24.0)], rundir)
    assert out.getvalue().startswith("== floor: cross-core 0,1") and X_FLOOR in out.getvalue()

    bare = RunDir(tmp_path / "without").create()
    (html,) = HtmlReport().write([latency_record(24.0)], bare)
    page = html.read_text()
    assert '<section id="floor">' in page and "Not measured for this run" in page
    assert f"<th>{X_FLOOR}</th>" not in page
