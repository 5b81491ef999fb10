"""mwperf compare on fixtures with known answers: the gates on launches
(regression, pass, cannot decide: exit 1, 0, 3), the four inputs a gate
once passed without testing them, and the provenance refusal. The gates'
false-alarm rate and power: tests/stats/test_gates.py."""

import copy
import io
import json

from conftest import FIXTURES, typed, written
from synthetic import measured_stats
from mwperf.cli.main import main
from mwperf.export.compare import compare_runs
from mwperf.results.rundir import RunDir


def template():
    for line in (FIXTURES / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["mw"] == "udp" and r["mode"] == "latency" and r["size"] == 64:
            return r
    raise AssertionError("fixture missing")


def point(p50, ci, count=5000, loss=0.0, placement=(0, 1), repetition=None, index=0):
    r = copy.deepcopy(template())
    r["point"] = index
    r["latency_us"] = measured_stats(r["latency_us"], p50=p50, count=count, p50_ci=ci, p99_ci=None)
    r["cpu"].update(pub=placement[0], sub=placement[1],
                    placement="same-core" if placement[0] == placement[1] else "cross-core")
    r["lost"] = int(round(loss * r["sent"]))
    r["received"] = r["sent"] - r["lost"]
    r["loss_rate"] = r["lost"] / r["sent"]
    r["repetition"] = repetition
    return r


def run_dir(tmp_path, name, records):
    """A run directory of ``records``; one made of a fixture line twice gets its own index (a launch of a
    run is recorded once: the loader refuses the same launch twice)."""
    rundir = RunDir(tmp_path / name).create()
    used: set[int] = set()
    for r in records:
        r["run_id"] = name
        if r["point"] in used:
            r["point"] = max(used) + 1
        used.add(r["point"])
        rundir.append(r)
    return str(rundir.path)


#: six launches' p50 around 1 (+-1.5 %)
SPREAD = [1.0, 1.012, 0.988, 1.006, 0.994, 1.015]


def launches(p50: float, count: int = 5000, loss: float = 0.0, scale: list[float] = SPREAD) -> list[dict]:
    return [point(p50 * f, [p50 * f * 0.99, p50 * f * 1.01], count=count, loss=loss, repetition=i, index=i)
            for i, f in enumerate(scale)]


def test_a_slowdown_beyond_the_launches_spread_fails_the_gate(tmp_path):
    a = run_dir(tmp_path, "a", launches(30.0))
    b = run_dir(tmp_path, "b", launches(36.0, scale=list(reversed(SPREAD))))
    out = io.StringIO()
    assert compare_runs([a, b], out, fail_if_slower=10) == 1
    text = out.getvalue()
    assert "udp latency 64 B" in text and "1.20" in text and "+20.0 % [" in text and "(6+6 launches)" in text
    assert "REGRESSION: udp latency 64 B (best-effort, udp): p50 +20.0 % (at least +18.7 % at 95 %" in text
    assert "more than the 10 % allowed), 6+6 launches" in text
    # within the allowance: passes, and says the gate could have caught what it must
    out = io.StringIO()
    assert compare_runs([a, b], out, fail_if_slower=25) == 0
    assert "REGRESSION" not in out.getvalue() and "CANNOT DECIDE" not in out.getvalue()


def test_one_launch_a_side_cannot_decide_and_exits_3(tmp_path, capsys):
    a = run_dir(tmp_path, "a", [point(30.0, [29.5, 30.5])])
    b = run_dir(tmp_path, "b", [point(36.0, [35.5, 36.4])])  # today: "95 % CIs apart", a failed gate
    assert main(["compare", a, b, "--fail-if-slower", "5"]) == 3
    out = capsys.readouterr().out
    assert "CANNOT DECIDE: udp latency 64 B (best-effort, udp): cannot decide: 1+1 launches, need 2+2" in out
    assert main(["compare", a, b]) == 0  # no gate: shown, not decided


def test_a_side_under_100_samples_and_b_ten_times_slower_never_passes(tmp_path):
    """Hostile input 1: passed as "too few samples" before."""
    a = run_dir(tmp_path, "a", [point(30.0, [29.9, 30.1], count=50)])
    b = run_dir(tmp_path, "b", [point(300.0, [299.9, 300.1], count=50)])
    out = io.StringIO()
    assert compare_runs([a, b], out, fail_if_slower=1) == 3 and "cannot decide: 1+1 launches" in out.getvalue()
    a = run_dir(tmp_path, "a6", launches(30.0, count=50))
    b = run_dir(tmp_path, "b6", launches(300.0, count=50))
    assert compare_runs([a, b], io.StringIO(), fail_if_slower=1) == 1  # launches decide: a regression
    # every launch of both sides too short for a p50 (under 20 samples): it could not test, so never a pass
    a = run_dir(tmp_path, "a5", launches(30.0, count=5))
    b = run_dir(tmp_path, "b5", launches(300.0, count=5))
    out = io.StringIO()
    assert compare_runs([a, b], out, fail_if_slower=1) == 3
    assert "cannot decide: none of the 12 launches has a p50 from 20 samples or more" in out.getvalue()
    out = io.StringIO()  # A measured it, B only from too few samples: a failure
    assert compare_runs([run_dir(tmp_path, "a50", launches(30.0)), b], out, fail_if_slower=1) == 1
    assert "B's launches have no p50 from 20 samples or more where A has 6 launch(es)" in out.getvalue()


def test_b_ok_with_its_latency_null_fails(tmp_path):
    """Hostile input 2: every ping lost, the point ok, its latency null."""
    lost = [point(30.0, [29.5, 30.5], loss=1.0, repetition=i, index=i) for i in range(6)]
    for r in lost:
        r["latency_us"] = None
    out = io.StringIO()
    assert compare_runs([run_dir(tmp_path, "a", launches(30.0)), run_dir(tmp_path, "b", lost)], out,
                        fail_if_slower=5) == 1
    assert "REGRESSION: udp latency 64 B (best-effort, udp): no latency measured in B" in out.getvalue()


def test_b_holding_the_point_twice_x1_and_x100_never_passes(tmp_path):
    """Hostile input 3: "not significant, t test 1+2 launches, p=0.667" passed a 50x regression."""
    a = run_dir(tmp_path, "a", [point(30.0, [29.5, 30.5])])
    b = run_dir(tmp_path, "b", [point(30.0, [29.5, 30.5]), point(3000.0, [2990, 3010], index=1)])
    out = io.StringIO()
    assert compare_runs([a, b], out, fail_if_slower=5) == 3
    assert "cannot decide: 1+2 launches, need 2+2" in out.getvalue()
    a = run_dir(tmp_path, "a2", [point(30.0, [29.5, 30.5]), point(30.3, [29.8, 30.8], index=1)])
    out = io.StringIO()
    assert compare_runs([a, b], out, fail_if_slower=5) == 3  # 2+2: far too wide a spread to tell
    assert "cannot decide: 2+2 launches, need more than 10000 a side" in out.getvalue()


def test_lossier_gate(tmp_path):
    a = run_dir(tmp_path, "a", launches(30.0, loss=0.001))
    b = run_dir(tmp_path, "b", launches(30.0, loss=0.05))
    out = io.StringIO()
    assert compare_runs([a, b], out, fail_if_lossier=1) == 1
    assert "REGRESSION: udp latency 64 B (best-effort, udp): loss +4.90 points (at least +4.90 points at 95 %" in out.getvalue()
    assert compare_runs([a, b], io.StringIO(), fail_if_lossier=10) == 0
    one = run_dir(tmp_path, "one", [point(30.0, [29, 31], loss=0.05)])
    assert compare_runs([run_dir(tmp_path, "a1", [point(30.0, [29, 31])]), one], io.StringIO(), fail_if_lossier=1) == 3


def test_different_placement_is_refused_unless_forced(tmp_path, capsys):
    a = run_dir(tmp_path, "a", [point(30.0, [29, 31], placement=(0, 1))])
    b = run_dir(tmp_path, "b", [point(5.0, [4.9, 5.1], placement=(0, 0))])
    assert main(["compare", a, b]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mwperf: error: compare ") and "not comparable" in err and "--force" in err
    assert main(["compare", a, b, "--force"]) == 0
    assert "[forced: " in capsys.readouterr().out


def test_bad_input(tmp_path, capsys):
    assert main(["compare", str(tmp_path)]) == 2
    assert "give two run directories or more" in capsys.readouterr().err
    assert main(["compare", str(tmp_path), str(tmp_path), "--fail-if-slower", "lots"]) == 2
    assert "lots: not a percentage" in capsys.readouterr().err


def test_imported_tables_are_kept_apart(tmp_path):
    """Two titled tables of one Perftest page (1 Gbit/s, 10 Gbit/s) at the same size are two points."""
    one, ten = point(30.0, [29.5, 30.5], index=0), point(10.0, [9.5, 10.5], index=1)
    one["source"] = {"tool": "perftest", "file": "x.txt", "note": None, "section": "UDPv4 1Gbps"}
    ten["source"] = {"tool": "perftest", "file": "x.txt", "note": None, "section": "UDPv4 10Gbps"}
    import json as _json
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.jsonl").write_text("".join(_json.dumps(r) + "\n" for r in (one, ten)))
    out = io.StringIO()
    assert compare_runs([str(tmp_path / "a"), str(tmp_path / "b")], out) == 0
    text = out.getvalue()
    assert "udp latency 64 B (best-effort, udp; UDPv4 1Gbps)" in text
    assert "udp latency 64 B (best-effort, udp; UDPv4 10Gbps)" in text
    rows = [l.split(")", 1)[1].split() for l in text.splitlines() if l.startswith("udp latency")]
    assert [(r[0], r[1], r[2]) for r in rows] == [("30.0", "30.0", "1.00"), ("10.0", "10.0", "1.00")]


def test_batched_and_unbatched_points_are_kept_apart(tmp_path):
    """A sweep over batch: [false, true] makes two rows, in the record's qos,
    its label, the CSV and compare (issue 22: compare pooled them)."""
    from mwperf.export.csv import to_csv_text
    from mwperf.model.labels import qos_label

    plain, batched = point(10.0, [9.5, 10.5]), point(20.0, [19.5, 20.5], index=1)
    for r, on in ((plain, False), (batched, True)):
        r.update(mw="cyclonedds", reliability="reliable", transport="udp", mode="throughput", latency_count=10000)
        r["qos"].update(history="keep-last:10", durability="volatile", instances=0, batch=on, receive="listener")
    assert qos_label(typed(batched)) == "reliable, keep-last:10, batch, listener, udp"
    assert qos_label(typed(plain)) == "reliable, keep-last:10, listener, udp"
    rows = to_csv_text([typed(plain), typed(batched)]).splitlines()
    column = rows[0].split(",").index("qos_batch")
    assert [row.split(",")[column] for row in rows[1:]] == ["false", "true"]
    a = run_dir(tmp_path, "a", [copy.deepcopy(plain), copy.deepcopy(batched)])
    b = run_dir(tmp_path, "b", [plain, batched])
    out = io.StringIO()
    assert compare_runs([a, b], out) == 0
    text = out.getvalue()
    assert "batch, listener, udp" in text and text.count("cyclonedds throughput 64 B") == 2


def test_a_gate_fails_on_baseline_points_the_other_run_lacks_or_cannot_read(tmp_path, capsys):
    a = run_dir(tmp_path, "a", [point(30.0, [29.5, 30.5]), point(30.0, [29.5, 30.5], index=1)])
    a_other = json.loads((tmp_path / "a" / "results.jsonl").read_text().splitlines()[1])
    a_other["size"] = 128
    (tmp_path / "a" / "results.jsonl").write_text(
        (tmp_path / "a" / "results.jsonl").read_text().splitlines()[0] + "\n" + json.dumps(a_other) + "\n")
    b = run_dir(tmp_path, "b", [point(30.0, [29.5, 30.5])])
    assert main(["compare", a, b]) == 0  # no gate: said, not failed
    assert "(1 baseline point(s) not in" in capsys.readouterr().out
    assert main(["compare", a, b, "--fail-if-slower", "5"]) == 1
    out = capsys.readouterr().out
    assert f"REGRESSION: udp latency 128 B (best-effort, udp): no usable ok point in {b}" in out
    # the same point there, but its record corrupted: named on stderr, and the gate fails
    good = (tmp_path / "b" / "results.jsonl").read_text()
    corrupt = json.dumps({**a_other, "run_id": "b", "sent": "many"})
    (tmp_path / "b" / "results.jsonl").write_text(good + corrupt + "\n")
    assert main(["compare", a, b, "--fail-if-lossier", "1"]) == 1
    captured = capsys.readouterr()
    assert "results.jsonl:2: sent: 'many' is not of type" in captured.err
    assert "REGRESSION: udp latency 128 B (best-effort, udp): no usable ok point" in captured.out


def test_imported_perftest_latency_cannot_be_decided(tmp_path, capsys):
    table = ("One-Way Latency Results:\n"
             "Length (Bytes), Ave (us), Std (us), Min (us), Max (us), 50% (us), 90% (us), 99% (us), 99.99% (us), "
             "99.9999% (us)\n"
             "32, {p}, 1.0, 9.0, 30.0, {p}, 12.0, 14.0, 20.0, 30.0\n")
    for name, p50 in (("a", 10.0), ("b", 12.0)):
        (tmp_path / f"{name}.txt").write_text(table.format(p=p50))
        assert main(["import", "perftest", str(tmp_path / f"{name}.txt"), "--out", str(tmp_path / name)]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--fail-if-slower", "5"]) == 3
    out = capsys.readouterr().out
    assert "+20.0 % (1+1 launches: no interval)" in out  # one table a side: one launch each
    assert "CANNOT DECIDE: perftest latency 32 B" in out and "cannot decide: 1+1 launches, need 2+2" in out
    assert main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "--fail-if-slower", "25"]) == 3


def test_each_row_names_what_its_points_were_measured_through_differently(tmp_path):
    """Synthetic runs of one point: B on another version, socket buffer and
    data path, then (forced) another wait: each difference is named on the row."""
    a = point(30.0, [29.5, 30.5])
    b = point(30.2, [29.6, 30.7])
    a["adapter"]["versions"], b["adapter"]["versions"] = {"udp": "6.1"}, {"udp": "6.2"}
    b["adapter"]["sub_config"] = {"so_rcvbuf": 212992, "so_sndbuf": 212992}
    b["adapter"]["zero_copy"] = {"path": "loan", "source": "middleware"}
    out = io.StringIO()
    assert compare_runs([run_dir(tmp_path, "a", [a]), run_dir(tmp_path, "b", [b])], out) == 0
    row = out.getvalue().splitlines()[3]
    assert "copy (network stack) vs zero-copy loan; network vs shared memory transport; udp 6.1 vs 6.2; " \
           "socket receive buffer 4 MiB vs 106496 B" in row, row  # what each set: half what getsockopt read back
    c = point(30.1, [29.6, 30.6])
    c["wait"] = "spin"
    out = io.StringIO()
    assert compare_runs([run_dir(tmp_path, "a2", [point(30.0, [29.5, 30.5])]), run_dir(tmp_path, "c", [c])], out,
                        force=True) == 0
    assert "blocking wait vs busy-poll" in out.getvalue()
    # alike: nothing named
    out = io.StringIO()
    compare_runs([run_dir(tmp_path, "a3", [point(30.0, [29.5, 30.5])]), run_dir(tmp_path, "d", [point(30.1, None)])],
                 out)
    assert out.getvalue().splitlines()[3].rstrip().endswith(" -")


def test_a_scenarios_flows_pair_by_scenario_flow_and_together(tmp_path):
    """fixtures/scenario-run against itself with imu's p50 together doubled: compare pairs each flow together
    with itself together and alone with itself alone (4 rows), never a flow together with it alone."""
    from mwperf.model.labels import point_id

    records = written(FIXTURES / "scenario-run")
    keys = [point_id(typed(r)) for r in records]
    assert len(set(keys)) == 4
    assert keys[0].label.endswith("[two-flows: imu together]")
    assert keys[2].label.endswith("[two-flows: imu alone]")
    slower = copy.deepcopy(records)
    slower[0]["latency_us"] = measured_stats(slower[0]["latency_us"], p50=2 * slower[0]["latency_us"]["p50"])
    out = io.StringIO()
    compare_runs([run_dir(tmp_path, "a", copy.deepcopy(records)), run_dir(tmp_path, "b", slower)], out)
    rows = [line for line in out.getvalue().splitlines() if "[two-flows:" in line]
    assert len(rows) == 4
    (imu,) = [r for r in rows if "imu together" in r]
    assert "2.00" in imu and not any("2.00" in r for r in rows if r is not imu)


def test_a_run_over_a_shaped_link_against_one_on_loopback_is_marked_unlike(tmp_path):
    """Issue 45.11: a run over a netns link compared with a loopback run printed without the "unlike" mark
    other mismatched conditions get. The link (kind, rate, delay, loss) is part of like for like."""
    from mwperf.plan.where import parse_link

    shaped = parse_link("netns:rate=100mbit,delay=5ms,loss=1%").as_dict()
    a = run_dir(tmp_path, "a", launches(30.0))
    b = run_dir(tmp_path, "b", [{**r, "link": shaped} for r in launches(30.0)])
    c = run_dir(tmp_path, "c", launches(30.0))
    out = io.StringIO()
    compare_runs([a, b], out)
    text = out.getvalue()
    assert "link loopback vs netns (rate 100 Mbit/s, delay 5 ms, loss 1 %)" in text, text
    out = io.StringIO()
    compare_runs([a, c], out)
    assert "link " not in out.getvalue()  # alike: no mark


def test_the_like_for_like_table_names_a_link_two_rows_differ_in():
    from mwperf.export.like_for_like import like_for_like
    from mwperf.plan.where import parse_link

    near, far = point(30.0, None), {**point(30.0, None, index=1), "mw": "tcp", "transport": "tcp",
                                    "link": parse_link("netns:gige").as_dict()}
    far["adapter"] = {**far["adapter"], "name": "tcp"}
    (section,) = like_for_like([typed(near), typed(far)])
    rows = [row.cells for row in section.rows]
    assert ["latency", "link", "loopback: udp (best-effort, udp); netns (rate 1000 Mbit/s): tcp (best-effort, tcp)"] \
        in rows, rows
