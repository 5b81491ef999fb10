"""A scenario's tables (export/scenario.py), from its flows' records: each
flow's p50, p99 and loss alone and together with their ratio, x floor, the
totals added up from the flows; text and markdown (golden files, from a real
run: fixtures/scenario-run), the page's section, the CSV's columns."""

import copy
import io
from pathlib import Path

from conftest import check_golden, typed_all
from mwperf.export.csv import to_csv_text
from mwperf.export.floor import Anchors
from mwperf.export.html import render_html
from mwperf.export.scenario import flow_rows, plain, scenario_points, scenario_sections, totals
from mwperf.export.tables import Tables, render_markdown, render_text
from mwperf.results.rundir import RunDir, read_records

RUN = Path(__file__).resolve().parents[1] / "fixtures" / "scenario-run"


def flow(name, together, p50, p99, sent, lost, cpu, status="ok", publishers=1, point=0, run="r"):
    """A flow's record as far as the tables read it (values set here, the ratios known)."""
    return {"run_id": run, "mw": "cyclonedds", "size": 356, "rate_hz": 200.0, "demand": None, "subscribers": 1,
            "latency_us": {"p50": p50, "p99": p99}, "status": status, "error": None if status == "ok" else "boom",
            "sent": sent, "received": sent - lost, "lost": lost, "loss_rate": lost / sent, "mbps": 1.0,
            "scenario": {"name": "s", "hash": "0" * 16, "flow": name, "together": together, "flows": 2,
                         "point": point, "label": "", "publishers": publishers, "publisher_sent": [sent],
                         "per_publisher": None, "payload": "pattern", "payload_check": None, "cpu_s": cpu}}


RECORDS = [flow("imu", True, 80.0, 400.0, 1000, 0, 0.09), flow("camera", True, 2000.0, 30000.0, 150, 15, 0.44,
                                                              publishers=3),
           flow("imu", False, 100.0, 200.0, 1000, 0, 0.08), flow("camera", False, 1600.0, 3000.0, 150, 0, 0.40,
                                                                 publishers=3)]


def test_the_ratio_is_together_over_alone_and_the_totals_are_the_flows_together():
    (point,) = scenario_points(typed_all(RECORDS))
    headers, rows = flow_rows(point)
    imu, camera = (dict(zip(headers, row.cells)) for row in rows[:2])
    assert (imu["p50 x"], imu["p99 x"]) == ("0.80", "2.00")
    assert (camera["N:M"], camera["loss alone"], camera["loss together"]) == ("3:1", "0.00 %", "10.00 %")
    total = dict(zip(headers, rows[-1].cells))
    assert (total["flow"], total["sent"], total["lost"], total["cpu all processes (s)"]) == ("(all)", "1150", "15",
                                                                                             "0.53")
    assert totals(point)["failed"] == []


def test_a_failed_flow_says_why_and_is_named_in_the_title():
    records = copy.deepcopy(RECORDS)
    records[1]["status"] = "failed"
    records[1]["error"] = "publisher result missing"
    (section,) = scenario_sections(typed_all(records))
    assert "failed: camera" in section.title
    assert section.rows[1].note == "together: publisher result missing"


def test_a_failed_flow_has_no_counts_but_dashes():
    """A flow whose subscriber gave no result (received and lost null) shows '-', never 'None'."""
    records = copy.deepcopy(RECORDS)
    records[1].update(status="failed", error="subscriber result missing", received=None, lost=None,
                      latency_us=None)
    (point,) = scenario_points(typed_all(records))
    headers, rows = flow_rows(point)
    camera = dict(zip(headers, rows[1].cells))
    assert (camera["sent"], camera["received"], camera["lost"]) == ("150", "-", "-")
    assert "None" not in " ".join(c for row in rows for c in row.cells)


def test_points_part_by_run_and_scenario_point():
    other = [dict(r, run_id="r2") for r in RECORDS] + [flow("imu", True, 1.0, 2.0, 10, 0, 0.1, point=1)]
    assert len(scenario_points(typed_all(RECORDS + other))) == 3


def test_text_and_markdown_golden_from_a_real_run():
    records = read_records(RUN)
    assert len(records) == 4 and not plain(records)
    sections = scenario_sections(records, Anchors.of(RUN))
    check_golden("scenario/two-flows.txt", render_text(sections))
    check_golden("scenario/two-flows.md", render_markdown(sections))


def test_the_run_tables_show_the_scenario_not_its_flows_as_points():
    out = io.StringIO()
    Tables("text", out).write(read_records(RUN), RunDir(RUN))
    text = out.getvalue()
    assert "== scenario two-flows on cyclonedds" in text and "together x floor" in text
    assert "cyclonedds rate" not in text  # no rate table of the flows as plain points


def test_the_page_has_the_scenario_section_with_its_table_and_figure():
    records = read_records(RUN)
    page = render_html(records, RunDir(RUN).read_run_json(), "t", script="", anchors=Anchors.of(RUN))
    section = page[page.index('<section id="scenario">'):]
    section = section[:section.index("</section>")]
    assert section.count("<table>") == 1 and "<td class=\"l\">status</td>" in section
    assert 'id="figure-scenario-0"' in section and "together x floor" in section


def test_the_csv_has_every_flow_with_its_scenario_columns():
    import csv

    rows = list(csv.DictReader(io.StringIO(to_csv_text(read_records(RUN)))))
    assert [(r["scenario_flow"], r["scenario_together"]) for r in rows] == [
        ("imu", "true"), ("status", "true"), ("imu", "false"), ("status", "false")]
    assert rows[1]["scenario_publisher_sent"] == "100 100" and rows[1]["scenario_publishers"] == "2"
    assert {r["scenario_name"] for r in rows} == {"two-flows"}
