import json

from conftest import FIXTURES, check_golden
from mwperf.export.tables import build_sections, point_summary, render_markdown, render_text


def load():
    return [json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines() if line.strip()]


def test_text_golden():
    check_golden("tables.txt", render_text(build_sections(load())))


def test_markdown_golden():
    check_golden("tables.md", render_markdown(build_sections(load())))


def test_sections_grouped_by_mw_and_mode():
    sections = build_sections(load())
    assert [(s.mw, s.mode) for s in sections] == [
        ("udp", "latency"), ("udp", "throughput"), ("udp", "rate"), ("tcp", "latency"), ("tcp", "throughput")]
    assert sections[0].headers[:2] == ["Size", "Ave (us)"]
    assert sections[0].headers[-1] == "99.9999% (us)"
    assert sections[2].headers == ["Size", "Hz", "Speed(Mbps)", "loss-pkt", "send-pkt", "loss-rate", "loop-rate",
                                   "latency(ave)", "latency(max)"]
    assert "latency in us" in sections[2].title


def test_failed_rows():
    sections = build_sections(load())
    rate = sections[2]
    failed = [row for row in rate.rows if row.failure]
    assert len(failed) == 1
    assert failed[0].cells[:2] == ["1024", "10000"]
    assert failed[0].failure.startswith("FAILED: sub: no result after stop")
    text = render_text([rate])
    assert "1024  10000  FAILED: sub: no result" in text
    md = render_markdown(sections)
    assert "FAILED: pub: killed by SIGKILL before its result \\| with a pipe" in md


def test_rate_formats():
    rate = build_sections(load())[2]
    ok = [row for row in rate.rows if not row.failure][0]
    assert ok.cells[5] == "0.0000"  # loss-rate, 4 decimals
    assert ok.cells[6] == "1.0000"  # loop-rate, 4 decimals


def test_point_summary():
    records = {(r["mw"], r["mode"], r["status"]): r for r in load()}
    assert point_summary(records[("udp", "latency", "ok")]).startswith("ok p50 ")
    assert " pkt/s, " in point_summary(records[("udp", "throughput", "ok")])
    assert point_summary(records[("udp", "rate", "ok")]).startswith("ok loop 1.0000")
    assert point_summary(records[("udp", "rate", "failed")]).startswith("FAILED: sub: no result")


def test_empty():
    assert render_text([]) == ""
    assert render_markdown([]) == ""
