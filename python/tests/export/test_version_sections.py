"""The report's "versions" section on records with known answers: each build
against the one before it, new/old per point with the launches' spread, and the
defaults that differ; golden text and Markdown."""

from conftest import check_golden, typed
from mwperf.export.summaries import summaries
from mwperf.export.tables import render_markdown, render_text
from mwperf.export.versions import version_sections
from version_records import record


def launches(mw, p50s, rates, **kw):
    return [typed(record(mw, p50, rate=rate, repetition=i + 1, **kw)) for i, (p50, rate) in enumerate(zip(p50s, rates))]


def records():
    return (launches("cyclonedds", [20.0, 22.0, 21.0], [900.0, 1000.0, 1100.0])
            + launches("cyclonedds11", [30.0, 33.0, 31.5], [1000.0, 1000.0, 1000.0])
            + launches("fastdds", [40.0], [500.0], heartbeat_period_ms=3000)
            + launches("fastdds-jazzy", [44.0], [550.0], heartbeat_period_ms=3000)
            + launches("fastdds3", [33.0], [660.0], heartbeat_period_ms=100)
            + [typed(record("udp", 10.0))])


def test_each_build_against_the_one_before_with_the_launch_spread():
    (section,) = version_sections(records())
    rows = {(row.cells[1], row.cells[2]): row.cells for row in section.rows}
    assert set(rows) == {("cyclonedds 0.10.2", "cyclonedds11 11.0.1"), ("fastdds 2.9.1", "fastdds-jazzy 2.14.5"),
                         ("fastdds-jazzy 2.14.5", "fastdds3 3.2.2")}
    cyclone = rows[("cyclonedds 0.10.2", "cyclonedds11 11.0.1")]
    assert cyclone[3:6] == ["21.0", "31.5", "1.50"]  # medians of the launches' p50, new/old
    assert cyclone[6] == "±4.8% / ±4.8%"  # sd/mean of the launches' p50: 1/21, 1.5/31.5
    assert cyclone[7:11] == ["1000", "1000", "1.00", "±10.0% / ±0.0%"]
    assert cyclone[11] == "none"
    assert rows[("fastdds-jazzy 2.14.5", "fastdds3 3.2.2")][11] == "heartbeat_period_ms 3000 vs 100"
    assert rows[("fastdds-jazzy 2.14.5", "fastdds3 3.2.2")][6] == "- / -"  # one launch: no spread


def test_no_section_without_two_builds_of_a_middleware():
    assert version_sections([typed(record(mw)) for mw in ("udp", "fastdds3", "cyclonedds")]) == []


def test_the_section_renders_with_the_report_golden():
    sections = [s for s in summaries(records()) if s.mode == "versions"]
    assert len(sections) == 1
    check_golden("versions.txt", render_text(sections))
    check_golden("versions.md", render_markdown(sections))
