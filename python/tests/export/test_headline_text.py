"""The headline as the terminal shows it (mwperf.export.headline_text): goldens of the quick plan's run
as measured here and of the fixture records (QoS in the labels, failures, a rate sweep), the short
figures, and what a table too wide for the screen leaves to the report."""

import io

from rich.cells import cell_len

from conftest import typed
from export.test_ranking import fixture, record
from export.test_run import quick_run
from conftest import check_golden
from mwperf.export.floor import Anchors
from mwperf.export.headline_text import WIDTH, compact_headline, lost, short
from mwperf.export.tables import Tables


def test_the_quick_plans_headline_is_two_tables_of_at_most_100_columns(tmp_path):
    rundir, records = quick_run(tmp_path / "run")
    text = compact_headline(records, Anchors.of(rundir.path))
    check_golden("headline-compact.txt", text)
    assert max(cell_len(line) for line in text.splitlines()) <= WIDTH
    assert text.count("\nMiddleware ") == 2 and "not here" not in text


def test_the_fixtures_headline_names_its_failures_and_what_is_left_to_the_report():
    text = compact_headline(fixture())
    check_golden("headline-compact-fixture.txt", text)
    assert max(cell_len(line) for line in text.splitlines()) <= WIDTH
    assert "udp rate at 1KiB at 10000 Hz FAILED: sub: no result after stop" in text


def test_a_group_too_wide_keeps_the_sizes_that_fit_and_names_the_others():
    long = "a-middleware-with-a-name-of-forty-letters"
    records = [record(long if i % 2 else "b", size=size, p50=20.0 + i, ci=[19.0 + i, 21.0 + i])
               for i, size in enumerate((32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384))]
    text = compact_headline(records)
    assert max(cell_len(line) for line in text.splitlines()) <= WIDTH
    assert "in the report, not here: latency µs p50/p99 at 16KiB" in text and "8KiB" not in text.split("\n")[2]


def test_the_text_tables_end_with_the_compact_headline_markdown_with_the_wide_one(tmp_path):
    rundir, records = quick_run(tmp_path / "run")
    text, md = io.StringIO(), io.StringIO()
    Tables("text", text, verbose=False).write(records, rundir)
    Tables("md", md, verbose=False).write(records, rundir)
    assert text.getvalue() == compact_headline(records, Anchors.of(rundir.path))
    assert md.getvalue().count("### headline: ") == 3


def test_figures_in_four_characters_and_shares_lost():
    assert [short(v) for v in (None, 2.4, 9.996, 19.44, 99.96, 510.7, 999.6, 2562.0, 81799.0, 999_600.0, 1.2e6,
                               3.4e9)] == ["-", "2.40", "10.0", "19.4", "100", "511", "1.0k", "2.6k", "82k", "1.0M",
                                           "1.2M", "3.4G"]
    assert [lost(v) for v in (None, 0.0, -0.001, 0.0001, 0.0112, 0.1199, 0.996, 1.0)] == [
        "-", "0%", "0%", "<.1%", "1.1%", "12%", ">99%", "100%"]


def test_a_rate_cell_says_the_share_of_the_due_samples_not_delivered():
    due = [typed({**record("a", "rate", rate=100.0, p50=30.0, ci=[29.0, 31.0]).json, "received": 990,
                  "scheduled": 1000, "loss_rate": 0.0})]
    assert "30.0 1.0% 1" in compact_headline(due)  # sent 990 of the 1000 due, lost none of them


def test_rows_of_one_middleware_are_named_by_what_tells_them_apart():
    from mwperf.export.headline_text import short_labels

    q = "reliable, keep-last:10, listener"
    labels = ["iceoryx", f"cyclonedds ({q}, udp)", f"cyclonedds ({q}, udp, security encrypt)", f"fastdds ({q}, shm+udp)",
              f"fastdds ({q}, udp)", f"fastdds ({q}, udp, security encrypt)", "fastdds3"]
    assert list(short_labels(labels).values()) == ["iceoryx", "cyclonedds", "cyclonedds encrypt", "fastdds shm+udp",
                                                   "fastdds udp", "fastdds udp encrypt", "fastdds3"]
    # two labels that would meet keep their full names
    same = [f"zenoh ({q}, a b)", f"zenoh ({q}, a, b)"]
    assert short_labels(same) == {label: label for label in same}
