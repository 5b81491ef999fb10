"""The discovery section of the report (mwperf.export.discovery_report): the
vs-N tables as text, Markdown and report.html, golden; discovery.jsonl read
back as untrusted input, a bad line skipped with one warning naming it."""

import json

from conftest import check_golden
from mwperf.export.discovery_report import RESULTS, read_discovery, render_page, vs_n_sections
from mwperf.export.tables import render_markdown, render_text

LINK = {"kind": "netns", "profile": "none", "rate_mbit": None, "loss_pct": 0.0, "delay_ms": 0.0, "jitter_ms": 0.0,
        "clock_offset_s": 0}


def record(mw: str, discovery: str, n: int, t: int, match: float, **kw) -> dict:
    r = {"mw": mw, "version": "1.0", "mode": "discovery", "discovery": discovery, "participants": n, "topics": t,
         "participants_as": "processes", "link": LINK, "complete": True, "time_to_match_ms": match,
         "time_to_first_sample_ms": match + 100.5, "remote_pairs": n * (n - 1) * t,
         "pairs_expected": n * (n - 1) * t, "cpu_ms": [3.0 * n] * n, "rss_kb": [8000] * n,
         "traffic": {"udp": {"packets": 30 * n * n, "bytes": 7000 * n * n},
                     "metatraffic_ports": {"packets": 20 * n * n, "bytes": 5000 * n * n}}}
    r.update(kw)
    return r


RECORDS = [record("cyclonedds", "default", n, 1, 2.5 * n * n) for n in (2, 5, 20)] + [
    record("cyclonedds", "tuned", 2, 1, 7.0), record("cyclonedds", "tuned", 20, 1, 210.25),
    record("fastdds", "default", 5, 10, 186.0, complete=False, time_to_first_sample_ms=None),
    record("fastdds", "default", 50, 1, 2999.0, participants_as="threads"),
    record("fastdds", "tuned", 2, 1, 456.0, link=None, traffic=None),
    record("zenoh", "tuned", 5, 1, 17.0, traffic={"udp": {"packets": 3, "bytes": 500},
                                                   "metatraffic_ports": {"packets": 0, "bytes": 0},
                                                   "tcp": {"packets": 70, "bytes": 6900}}),
    {"mw": "fastdds", "discovery": "tuned", "participants": 20, "topics": 1, "link": LINK,
     "error": "participant 0: fastdds: cannot create the participant"},
]


def test_the_discovery_section_golden():
    sections = vs_n_sections(RECORDS)
    check_golden("discovery_vs_n.txt", render_text(sections))
    check_golden("discovery_vs_n.md", render_markdown(sections))
    check_golden("discovery_report.html", render_page(RECORDS, "mwperf discovery <run>"))


def test_discovery_jsonl_is_read_as_untrusted_input(tmp_path):
    good = record("cyclonedds", "default", 2, 1, 5.0)
    lines = [json.dumps(good), "{not json", json.dumps({**good, "cpu_ms": ["<script>"]}),
             json.dumps({**good, "participants": "2"}), json.dumps([1]), "", json.dumps(RECORDS[-1])]
    (tmp_path / RESULTS).write_text("\n".join(lines) + "\n")
    warnings: list[str] = []
    assert read_discovery(tmp_path, warnings.append) == [good, RECORDS[-1]]
    assert warnings == [f"{RESULTS} line 2 skipped: not JSON", f"{RESULTS} line 3 skipped: cpu_ms: not a list of numbers",
                        f"{RESULTS} line 4 skipped: participants: missing or not a int",
                        f"{RESULTS} line 5 skipped: not a JSON object"]


def test_a_discovery_jsonl_that_leads_outside_is_not_read(tmp_path):
    outside = tmp_path / "elsewhere.jsonl"
    outside.write_text(json.dumps(record("cyclonedds", "default", 2, 1, 5.0)) + "\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / RESULTS).symlink_to(outside)
    warnings: list[str] = []
    assert read_discovery(run, warnings.append) == [] and "leads outside the run directory" in warnings[0]


def test_the_end_of_a_sweep_says_its_discovery_points_a_line_a_configuration():
    from mwperf.export.discovery_report import compact_lines

    two = [record("cyclonedds", "tuned", 2, 1, 7.0), record("fastdds", "tuned", 2, 1, 456.0),
           record("ros2", "default", 5, 1, 186.0, complete=False, time_to_first_sample_ms=None, link=None),
           {"mw": "zenoh", "discovery": "default", "participants": 5, "topics": 1, "link": None,
            "error": "participant 0: cannot create the participant"}]
    assert compact_lines(two) == [
        "discovery N=2 T=1 tuned netns:none, ms to match / 1st sample: cyclonedds 7/108, fastdds 456/556",
        "discovery N=5 T=1 default loopback, ms to match / 1st sample: ros2 186/- (incomplete), zenoh failed"]
    # more configurations than two lines, or a line over 100 columns: one line for all (report.html has them)
    assert compact_lines(RECORDS) == ["discovery: 10 points, 8 complete (their tables: report.html)"]
    wide = [record(f"middleware{i}", "default", 2, 1, 1.0) for i in range(5)]
    assert compact_lines(wide) == ["discovery: 5 points, 5 complete (their tables: report.html)"]
