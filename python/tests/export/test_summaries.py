"""Tables across points (ranges, ROS overhead, fan-out, threads) and the
burst tables, on records with the fields of issues 13 and 15
(fixtures/results-extended.jsonl, made by hand with known answers)."""

import json

import pytest

from conftest import FIXTURES, check_golden, typed_all
from edited import changed
from mwperf.export.like_for_like import like_for_like
from mwperf.export.summaries import fanout, ranges, ros_overhead, summaries, threads
from mwperf.export.tables import build_sections, render_markdown, render_text


def load():
    return [json.loads(l) for l in (FIXTURES / "results-extended.jsonl").read_text().splitlines() if l.strip()]


def rows(section):
    return [row.cells for row in section.rows]


def test_ros_overhead_pairs_ros2_with_fastdds_and_ros1_with_tcp():
    ros2, ros1 = ros_overhead(typed_all(load()))
    assert ros2.title.startswith("ROS overhead: ros2 (udp, fastdds 2.14.5) over fastdds (udp, fastdds 2.14.5)")
    assert ros1.title.startswith("ROS overhead: ros1 (tcpros-nodelay) over tcp (tcp)")
    # p50: ros2 90 / fastdds 40 at 64 B, 110 / 50 at 1 KiB; samples/s 5000 / 12000
    assert rows(ros2) == [["latency", "64", "-", "reliable", "cross-core 0,1", "90.0", "40.0", "2.25", "5000", "12000",
                           "0.42", "-"],
                          ["latency", "1024", "-", "reliable", "cross-core 0,1", "110.0", "50.0", "2.20", "5000",
                           "12000", "0.42", "-"]]
    assert rows(ros1) == [["rate", "1024", "100", "reliable", "cross-core 0,1", "120.0", "60.0", "2.00", "100", "100",
                           "1.00", "-"]]


def test_ros_overhead_needs_the_same_point_on_both():
    records = [r for r in load() if r["mw"] in ("ros2", "fastdds")]
    for r in records:
        if r["mw"] == "ros2":
            r["cpu"]["sub"] = 0  # same-core: not the fastdds points' placement
            r["cpu"]["placement"] = "same-core"
    assert ros_overhead(typed_all(records)) == []


@pytest.mark.parametrize("mw, field, value", [
    ("fastdds", ("adapter", "versions"), {"fastdds": "2.9.1"}),  # Debian's Fast DDS under the base, 2.14.5 under ros2
    ("fastdds", ("transport",), "shm"),                          # shared memory against ros2's UDP
    ("ros1", ("transport",), "tcpros"),                          # Nagle on against tcp with TCP_NODELAY
])
def test_ros_overhead_never_pairs_another_version_or_transport(mw, field, value):
    records = load()
    for r in records:
        if r["mw"] == mw:
            target = r
            for key in field[:-1]:
                target = target[key]
            target[field[-1]] = value
    sections = ros_overhead(typed_all(records))
    assert ("ros2" if mw == "fastdds" else "ros1") not in {s.mw for s in sections}
    # the pair is shown as not compared, with the difference named
    (refused,) = [s for s in sections if s.mode == "ros-overhead-refused"]
    why = {"fastdds": ("ros2 (udp, fastdds 2.14.5)", "fastdds (udp, fastdds 2.9.1)", "fastdds version: ros2 runs on 2.14.5, fastdds on 2.9.1")
           if field[0] == "adapter" else ("ros2 (udp, fastdds 2.14.5)", "fastdds (shm, fastdds 2.14.5)",
                                          "transport: ros2's udp pairs with fastdds's udp, not shm"),
           "ros1": ("ros1 (tcpros)", "tcp (tcp)", "transport: ros1's tcpros pairs with tcp's tcp-nagle, not tcp")}[mw]
    assert rows(refused) == [list(why)]


def test_ros2_pairs_with_fastdds_jazzy_and_debian_fastdds_is_refused_naming_both_versions():
    """ros2 runs on the ROS 2 wheels' Fast DDS 2.14.5: its base is fastdds-jazzy (the
    same Fast DDS); the Debian fastdds adapter's 2.9.1 is never paired with it, and the
    table of pairs not compared names both versions."""
    records = load()
    debian = []
    for r in records:
        if r["mw"] == "fastdds":
            r["mw"] = r["adapter"]["name"] = "fastdds-jazzy"
            r["adapter"]["versions"] = {"fastdds": "2.14.5", "fastcdr": "2.2.5"}
            other = json.loads(json.dumps(r))
            other["mw"] = other["adapter"]["name"] = "fastdds"
            other["adapter"]["versions"] = {"fastdds": "2.9.1", "fastcdr": "1.0.26"}
            other["latency_us"]["p50"] = 1.0  # were it paired, the ratio would show it
            debian.append(other)
    sections = ros_overhead(typed_all(records + debian))
    (ros2,) = [s for s in sections if s.mw == "ros2"]
    assert ros2.title.startswith("ROS overhead: ros2 (udp, fastdds 2.14.5) over fastdds-jazzy (udp, fastdds 2.14.5)")
    assert [row[5:8] for row in rows(ros2)] == [["90.0", "40.0", "2.25"], ["110.0", "50.0", "2.20"]]
    (refused,) = [s for s in sections if s.mode == "ros-overhead-refused"]
    assert rows(refused) == [["ros2 (udp, fastdds 2.14.5)", "fastdds (udp, fastdds 2.9.1)",
                              "fastdds version: ros2 runs on 2.14.5, fastdds on 2.9.1"]]


def test_ros_overhead_names_what_else_differs():
    """A pair on one transport and version may still differ (publishing, data path):
    each row names it."""
    records = load()
    for r in records:
        if r["mw"] == "fastdds":
            r["qos"]["async"] = True
        elif r["mw"] == "ros2":
            r["qos"]["async"] = False
    (ros2,) = [s for s in ros_overhead(typed_all(records)) if s.mw == "ros2"]
    assert {row.cells[-1] for row in ros2.rows} == {"sync vs async publishing"}


def test_ros1_with_nagle_pairs_with_tcp_with_nagle():
    records = load()
    for r in records:
        if r["mw"] in ("ros1", "tcp"):
            r["transport"] = "tcpros" if r["mw"] == "ros1" else "tcp-nagle"
    (ros1,) = [s for s in ros_overhead(typed_all(records)) if s.mw == "ros1"]
    assert ros1.title.startswith("ROS overhead: ros1 (tcpros) over tcp (tcp-nagle)")


def test_fanout_median_and_worst_over_subscribers():
    (section,) = fanout(typed_all(load()))
    assert section.title.startswith("fan-out: cyclonedds rate 1KiB 100 Hz")
    assert "subscribers as processes" in section.title
    # 4 subscribers: p50 50, 55, 70, 58 -> median 56.5, worst 70; loss 0, 0, 2, 1 % -> median 0.5, worst 2;
    # CPU: the processes' sum (4 x 5 %)
    assert rows(section) == [["1", "45.0", "45.0", "90.0", "90.0", "0.00", "0.00", "0.00", "19"],
                             ["2", "55.0", "60.0", "120.0", "140.0", "0.50", "1.00", "1.00", "10"],
                             ["4", "56.5", "70.0", "125.0", "200.0", "0.50", "2.00", "2.00", "20"]]


def test_fanout_as_threads_is_a_table_of_its_own_with_the_process_cpu_once():
    records = load()
    four = next(r for r in records if r.get("subscribers") == 4)
    threaded = json.loads(json.dumps(four))
    threaded["subscribers_as"] = "threads"
    threaded["fanout"]["cpu_pct"] = 7.0  # the one process of the four readers
    threaded["per_subscriber"][0]["cpu_pct"] = 7.0
    for row in threaded["per_subscriber"][1:]:
        row["cpu_s"] = row["cpu_pct"] = row["rss_kb"] = None
    processes, threads = fanout(typed_all([r for r in records if r is not four] + [four, threaded]))
    assert "subscribers as processes" in processes.title and "subscribers as threads" in threads.title
    assert [row[0] for row in rows(processes)] == ["1", "2", "4"]
    # one subscriber is the baseline of both; the threads' CPU is the process's, once
    assert rows(threads) == [["1", "45.0", "45.0", "90.0", "90.0", "0.00", "0.00", "0.00", "19"],
                             ["4", "56.5", "70.0", "125.0", "200.0", "0.50", "2.00", "2.00", "7"]]


def test_threads_own_apart_from_the_middlewares():
    by_mw = {s.mw: s for s in threads(typed_all(load()))}
    assert rows(by_mw["cyclonedds"]) == [["pub", "mwperf-main", "mwperf", "1", "5.0", "5.0", "4"],
                                         ["pub", "dq.rcv-recv", "middleware", "2", "7.5", "7.5", "4"],
                                         ["sub", "mwperf-main", "mwperf", "1", "8.0", "8.0", "4"],
                                         ["sub", "dq.rcv-recv", "middleware", "2", "12.0", "12.0", "4"]]


def test_burst_tables_in_connext_micros_layout():
    pub, sub = [s for s in build_sections(typed_all(load())) if s.mode == "burst"]
    assert pub.headers[:7] == ["Size", "Demand", "Samples", "Samples/sec", "Mbit/sec", "Samples lost",
                               "Samples rejected"]
    assert pub.headers[7:] == ["CPU (%)", "Memory (MiB)"]
    # publisher: 110 x 100 bursts = 11000 written in 2 s; 5500/s of 48 B = 2.11 Mbit/s
    assert rows(pub)[3] == ["48", "110", "11000", "5500.00", "2.11", "-", "-", "12.5", "10.0"]
    # subscriber: 8 lost, 2 rejected; first / last sample of a burst
    assert rows(sub)[3] == ["48", "110", "10992", "5496.00", "2.11", "8", "2", "20.0", "20.0", "41.0", "25.0", "52.0",
                            "200.0"]
    assert pub.rows[-1].failure == sub.rows[-1].failure == "FAILED: sub: no result after stop"


def test_ranges():
    (section,) = ranges(typed_all(load()))
    by = {(r.cells[0], r.cells[1], r.cells[2]): r.cells for r in section.rows}
    assert by[("fastdds", "latency", "reliable, keep-last:10, waitset, udp")][3:8] == [
        "2 ok", "64-1KiB", "40.0-50.0", "120.0-150.0", "98.3"]
    assert by[("cyclonedds", "burst", "reliable, keep-last:10, waitset, udp")][3] == "4 ok, 1 failed"
    assert by[("cyclonedds", "rate", "reliable, keep-last:10, waitset, udp; 4 subscribers")][8] == "2.00"


def test_older_records_have_none_of_them():
    old = [json.loads(l) for l in (FIXTURES / "results.jsonl").read_text().splitlines() if l.strip()]
    assert [s.mode for s in summaries(typed_all(old))] == ["like-for-like"]  # the fields it needs were always there


def test_like_for_like_names_each_difference_with_its_rows():
    """Synthetic records, one per kind of difference: each is named with the rows on either side."""
    base = next(r for r in load() if r["mw"] == "fastdds" and r["mode"] == "latency")

    def variant(mw, **changes):
        return changed(base, mw=mw, **changes)

    records = [variant("fastdds", transport="shm"), variant("iceoryx", transport="shm", adapter__versions={}),
               variant("connext", wait="spin", qos__async=True, adapter__versions={"connext": "6.1.2"},
                       transport="udp"),
               variant("ros2", adapter__versions={"fastdds": "2.9.1"})]
    (section,) = like_for_like(typed_all(records))
    found = {row.cells[1]: row.cells[2] for row in section.rows}
    assert "zero-copy loan: iceoryx" in found["data path"]
    assert "shared memory: fastdds" in found["data path"]
    assert found["transport"].startswith("network: connext")
    assert found["wait"].startswith("blocking wait: ") and "; busy-poll: connext (" in found["wait"]
    assert "async: connext" in found["publishing"]
    assert found["fastdds version"] == ("2.14.5: fastdds (reliable, keep-last:10, waitset, shm); "
                                        "2.9.1: ros2 (reliable, keep-last:10, waitset, udp)")
    assert all(row.cells[0] == "latency" for row in section.rows)
    # alike rows: nothing to say
    assert like_for_like(typed_all([variant("fastdds"), variant("ros2")])) == []


def test_golden():
    records = load()
    sections = build_sections(typed_all(records)) + summaries(typed_all(records)) + ranges(typed_all(records))
    check_golden("tables-extended.txt", render_text(sections))
    check_golden("tables-extended.md", render_markdown(sections))
