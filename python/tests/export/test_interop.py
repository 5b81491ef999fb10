"""The cross-vendor matrices (p50 and loss, publisher x subscriber), on
records made from a fixture record with known answers per cell."""

import copy
import json

from conftest import FIXTURES, check_golden, typed
from mwperf.export.interop import interop, interop_figures
from mwperf.export.summaries import summaries
from mwperf.export.tables import render_markdown, render_text
from mwperf.model.labels import point_id


def base():
    line = (FIXTURES / "results-extended.jsonl").read_text().splitlines()[2]  # fastdds latency 1 KiB reliable udp
    record = json.loads(line)
    assert (record["mw"], record["size"], record["transport"]) == ("fastdds", 1024, "udp")
    return record


def cell(pub, sub, p50=None, lost=0.0, status="ok", transport="udp"):
    r = copy.deepcopy(base())
    r["mw"], r["peer_mw"], r["status"], r["transport"] = pub, None if pub == sub else sub, status, transport
    r["adapter"]["name"] = pub
    r["qos"]["receive"] = {"cyclonedds": "listener", "ros2": "waitset"}.get(pub, "waitset")
    r["latency_us"]["p50"] = p50
    r["loss_rate"] = lost / 100
    if status != "ok":
        r["latency_us"], r["error"] = None, "fastdds: no matching peer within 10 s"
    return typed(r)


def rows(section):
    return [row.cells for row in section.rows]


def test_the_matrix_puts_each_pair_in_its_cell():
    records = [cell("cyclonedds", "cyclonedds", 24.2), cell("cyclonedds", "connext", 34.6),
               cell("connext", "cyclonedds", 42.0, lost=1.5), cell("connext", "connext", 56.3)]
    p50, lost = interop(records)
    assert p50.title.startswith("Cross-vendor p50 latency (us, RTT/2): latency, 1KiB (reliable, keep-last:10, volatile, "
                              "udp); rows publish, columns subscribe")
    assert p50.headers == ["pub \\ sub", "connext", "cyclonedds"]
    assert rows(p50) == [["connext", "56.3", "42.0"], ["cyclonedds", "34.6", "24.2"]]
    assert rows(lost) == [["connext", "0.0", "1.5"], ["cyclonedds", "0.0", "0.0"]]
    assert "reliable" in p50.qos and "udp" in p50.qos
    # the tables come with the others, and render
    text = render_text(summaries(records))
    assert "Cross-vendor p50 latency" in text and "56.3" in text


def test_a_failed_pair_says_so_and_a_pair_not_measured_is_blank():
    records = [cell("fastdds", "connext", status="failed"), cell("ros2", "connext", 70.0)]
    p50, lost = interop(records)
    assert p50.headers == ["pub \\ sub", "connext", "fastdds", "ros2"]
    assert rows(p50) == [["connext", "-", "-", "-"], ["fastdds", "failed", "-", "-"], ["ros2", "70.0", "-", "-"]]
    assert rows(lost)[1] == ["fastdds", "failed", "-", "-"]


def test_medians_over_repetitions():
    records = [cell("cyclonedds", "fastdds", v) for v in (10.0, 30.0, 20.0)]
    (p50, _) = interop(records)
    assert rows(p50)[0] == ["cyclonedds", "-", "20.0"]


def test_no_cross_vendor_point_no_matrix_and_another_transport_another_matrix():
    assert interop([cell("cyclonedds", "cyclonedds", 24.2), cell("connext", "connext", 56.3)]) == []
    records = [cell("connext", "fastdds", 40.0), cell("connext", "fastdds", 20.0, transport="shm+udp")]
    tables = interop(records)
    assert len(tables) == 4 and {t.qos for t in tables} == {"reliable, keep-last:10, volatile, udp",
                                                             "reliable, keep-last:10, volatile, shm+udp"}


def test_compare_keeps_cross_vendor_points_apart():
    same, cross = cell("connext", "connext", 56.3), cell("connext", "cyclonedds", 42.0)
    assert point_id(same) != point_id(cross)
    assert "peer-mw cyclonedds" in point_id(cross).others


def test_the_figure_is_the_matrix_as_heatmaps():
    records = [cell("cyclonedds", "connext", 34.6), cell("connext", "cyclonedds", status="failed"),
               cell("connext", "connext", 56.3, lost=2.0)]
    (figure,) = interop_figures(records)
    assert figure.section == "interop" and figure.id == "interop-0"
    p50, lost = figure.fig.data
    assert list(p50.x) == list(p50.y) == ["connext", "cyclonedds"]
    assert [list(row) for row in p50.z] == [[56.3, None], [34.6, None]]  # failed: no colour, "failed" as its text
    assert [list(row) for row in p50.text] == [["56.3", "failed"], ["34.6", "-"]]
    assert [list(row) for row in lost.z] == [[2.0, None], [0.0, None]]


def test_tables_as_text_and_markdown_golden():
    records = [cell(pub, sub, p50=10.0 + 3 * i + j, lost=0.5 * (i == j))
               for i, pub in enumerate(("connext", "cyclonedds", "fastdds", "ros2"))
               for j, sub in enumerate(("connext", "cyclonedds", "fastdds", "ros2"))]
    check_golden("interop.txt", render_text(interop(records)))
    check_golden("interop.md", render_markdown(interop(records)))
