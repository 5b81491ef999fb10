import re
import json

from conftest import FIXTURES, check_golden, typed, typed_all
from mwperf.export.tables import build_sections, point_summary, render_markdown, render_text
from mwperf.model.labels import qos_label


def load():
    return [json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines() if line.strip()]


def test_text_golden():
    check_golden("tables.txt", render_text(build_sections(typed_all(load()))))


def test_markdown_golden():
    check_golden("tables.md", render_markdown(build_sections(typed_all(load()))))


def test_sections_grouped_by_mw_qos_and_mode():
    sections = build_sections(typed_all(load()))
    assert [(s.mw, s.qos, s.mode) for s in sections] == [
        ("udp", "best-effort, udp", "latency"), ("udp", "best-effort, udp", "throughput"),
        ("udp", "best-effort, udp", "rate"),
        ("tcp", "reliable, tcp", "latency"), ("tcp", "reliable, tcp", "throughput"),
        ("cyclonedds", "reliable, keep-last:10, waitset, udp", "latency"),
        ("cyclonedds", "reliable, keep-all, keyed 1000, waitset, udp", "throughput"),
        ("fastdds", "reliable, keep-last:10, waitset, shm+udp", "latency"),
        ("fastdds", "reliable, keep-last:10, waitset, shm+udp", "throughput"),
        ("fastdds", "best-effort, keep-last:10, waitset, shm", "rate")]
    assert sections[5].title.startswith("cyclonedds latency (reliable, keep-last:10, waitset, udp) (latency in us")
    assert sections[0].headers[:2] == ["Size", "Ave (us)"]
    assert sections[0].headers[-2:] == ["99.9999% (us)", "Samples"]
    assert sections[2].headers == ["Size", "Hz", "Speed(Mbps)", "loss-pkt", "send-pkt", "loss-rate", "loop-rate",
                                   "latency(ave)", "latency(max)"]
    assert "latency in us" in sections[2].title


def test_failed_rows():
    sections = build_sections(typed_all(load()))
    rate = sections[2]
    failed = [row for row in rate.rows if row.failure]
    assert len(failed) == 1
    assert failed[0].cells[:2] == ["1024", "10000"]
    assert failed[0].failure.startswith("FAILED: sub: no result after stop")
    text = render_text([rate])
    assert re.search(r"^1024  10000 +FAILED$", text, re.M)  # the row keeps its place, the reason goes under it
    assert "  1024 10000: FAILED: sub: no result" in text
    md = render_markdown(sections)
    assert "FAILED: pub: killed by SIGKILL before its result \\| with a pipe" in md


def test_rate_formats():
    rate = build_sections(typed_all(load()))[2]
    ok = [row for row in rate.rows if not row.failure][0]
    assert ok.cells[5] == "0.0000"  # loss-rate, 4 decimals
    assert ok.cells[6] == "1.0000"  # loop-rate, 4 decimals


def test_point_summary():
    records = {(r["mw"], r["mode"], r["status"]): r for r in load()}
    assert point_summary(typed(records[("udp", "latency", "ok")])).startswith("ok p50 ")
    assert " pkt/s, " in point_summary(typed(records[("udp", "throughput", "ok")]))
    assert point_summary(typed(records[("udp", "rate", "ok")])).startswith("ok loop 1.0000")
    assert point_summary(typed(records[("udp", "rate", "failed")])).startswith("FAILED: sub: no result")


def test_empty():
    assert render_text([]) == ""
    assert render_markdown([]) == ""


def test_qos_label_hides_defaults_only():
    record = {"transport": "udp", "reliability": "reliable",
              "qos": {"history": "keep-last:1", "durability": "transient-local", "instances": 100000,
                      "async": True, "receive": "listener"}}
    assert qos_label(typed(record)) == "reliable, keep-last:1, transient-local, keyed 100000, async, listener, udp"
    record["qos"] = {"history": "keep-last:10", "durability": "volatile", "instances": 0, "async": False,
                     "receive": "waitset"}
    assert qos_label(typed(record)) == "reliable, keep-last:10, waitset, udp"  # the receive path is always shown
    assert qos_label(typed({"transport": "udp", "reliability": "best-effort"})) == "best-effort, udp"  # older records


def test_failed_point_joins_its_section():
    """A failed point knows only what was requested (durability null): same section as the ok ones."""
    records = [r for r in load() if r["mw"] == "fastdds" and r["mode"] == "latency"]
    assert {r["status"] for r in records} == {"ok", "failed"}
    records[1]["qos"] = dict(records[1]["qos"], durability=None)
    sections = build_sections(typed_all(records))
    assert len(sections) == 1 and len(sections[0].rows) == 2


def test_text_tables_hold_the_cells_of_the_sections():
    """What rich draws is the sections' cells, in order, nothing lost or cut."""
    sections = build_sections(typed_all(load()))
    text = render_text(sections)
    blocks = text.split("\n\n")
    assert len(blocks) == len(sections)
    for block, section in zip(blocks, sections):
        lines = block.splitlines()
        assert lines[0] == f"== {section.title} =="
        assert lines[1].split() == " ".join(section.headers).split()
        assert set(lines[2]) <= {"-", " "}
        for line, row in zip(lines[3:], section.rows):
            expected = row.cells if row.failure is None else [c for c in row.cells if c] + ["FAILED"]
            assert line.split() == expected


def test_a_latency_censored_at_the_ping_timeout_is_said():
    records = load()
    latency = dict(next(r for r in records if (r["mw"], r["mode"], r["status"]) == ("udp", "latency", "ok")),
                   ping_lost=3, late_pongs=2, ping_timeout_s=1.0)
    text = render_text(build_sections(typed_all([latency])))
    size = latency["size"]
    assert (f"  {size}: 3 ping(s) without a pong within 1 s (2 came back later): the latency is censored there, "
            "those round trips are not in it") in text
    assert f"* {size}: 3 ping(s) without a pong within 1 s" in render_markdown(build_sections(typed_all([latency])))
    assert point_summary(typed(latency)).endswith("; 3 ping(s) beyond the 1 s timeout (censored)")
    assert "censored" not in render_text(build_sections(typed_all([dict(latency, ping_lost=0)])))


def test_the_progress_line_says_what_the_adaptive_stop_found():
    base = next(r for r in load() if (r["mw"], r["mode"], r["status"]) == ("udp", "rate", "ok"))
    def adaptive(**a):
        return dict(base, precision=0.05, adaptive={"converged_after_s": None, "needed_s": None,
                                                    "needed_note": None, **a})
    assert point_summary(typed(adaptive(converged_after_s=1.25))).endswith("; +-5% after 1.2 s")
    assert point_summary(typed(adaptive(needed_s=42.4))).endswith("; +-5% not reached, would need ~42 s")
    assert point_summary(typed(adaptive(needed_s=7300.0))).endswith("would need ~2h02m")
    assert point_summary(typed(adaptive(needed_note="p99_ci: correlation too long for the run"))).endswith(
        "; +-5% not reached (p99_ci: correlation too long for the run)")
    assert "+-" not in point_summary(typed(dict(base, adaptive=None)))
