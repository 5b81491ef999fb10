"""A scenario's tables (export/scenario.py): each flow's p50, p99 and loss alone
and together with their ratio, the totals; text, markdown (golden files) and
the page."""

import io

from conftest import check_golden
from mwperf.export.scenario import ScenarioReport, flow_rows


def record(size, rate, p50, p99, sent, lost, cpu, status="ok", publishers=1, subscribers=1):
    return {"size": size, "rate_hz": rate, "demand": None, "publishers": publishers, "subscribers": subscribers,
            "latency_us": {"p50": p50, "p99": p99}, "status": status, "sent": sent, "received": sent - lost,
            "lost": lost, "loss_rate": lost / sent, "cpu_total_s": cpu}


DOC = {
    "scenario": "two-flows", "process_model": "one agent process per publisher and per subscriber of every flow",
    "points": [{
        "mw": "cyclonedds", "label": "",
        "together": {"flows": {"imu": record(356, 200.0, 80.0, 400.0, 1000, 0, 0.09),
                               "camera": record(2764892, 30.0, 2000.0, 30000.0, 150, 15, 0.44, publishers=3,
                                                subscribers=2)},
                     "totals": {"flows": 2, "sent": 1150, "received": 1135, "lost": 15, "mbps": None, "cpu_s": 0.53,
                                "failed": []}},
        "alone": {"imu": record(356, 200.0, 100.0, 200.0, 1000, 0, 0.08),
                  "camera": record(2764892, 30.0, 1600.0, 3000.0, 150, 0, 0.40)},
    }],
}


def test_the_ratio_is_together_over_alone():
    headers, rows = flow_rows(DOC["points"][0])
    imu = dict(zip(headers, rows[0]))
    assert (imu["p50 x"], imu["p99 x"]) == ("0.80", "2.00")
    camera = dict(zip(headers, rows[1]))
    assert (camera["N:M"], camera["loss alone"], camera["loss together"]) == ("3:2", "0.00 %", "10.00 %")
    assert rows[-1][0] == "(all)" and rows[-1][-1] == "0.53"


def test_a_failed_flow_has_no_counts_but_dashes():
    """A flow whose subscriber gave no result (its record's received and lost
    are null, as cli/scenario.py writes them) shows '-', never 'None'."""
    failed = {**record(128, 50.0, None, None, 1000, 0, 0.01, status="failed"), "received": None, "lost": None,
              "latency_us": None}
    point = {"together": {"flows": {"b": failed}, "totals": {"flows": 1, "sent": 1000, "received": None,
                                                            "lost": None, "mbps": None, "cpu_s": 0.01,
                                                            "failed": ["b"]}}}
    headers, rows = flow_rows(point)
    for row in rows:
        cells = dict(zip(headers, row))
        assert (cells["sent"], cells["received"], cells["lost"]) == ("1000", "-", "-"), row

def test_text_and_markdown_golden():
    for fmt in ("text", "md"):
        out = io.StringIO()
        ScenarioReport().write_text(DOC, out, fmt=fmt)
        check_golden(f"scenario/two-flows.{'txt' if fmt == 'text' else 'md'}", out.getvalue())


def test_the_page_has_the_table_the_figure_and_says_there_is_no_floor(tmp_path):
    page = ScenarioReport().write_html(DOC, tmp_path).read_text()
    assert page.count("<table>") == 1 and "<td>camera</td>" in page and 'id="figure-scenario-cyclonedds-0"' in page
    assert "no floor was measured" in page
