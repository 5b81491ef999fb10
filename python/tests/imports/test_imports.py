"""Import of Perftest and ddsperf output (golden), and the Perftest CSV export.

Fixtures: the Perftest tutorial's published tables and RTI's performance page
(from ../shared/reference), and ddsperf 0.10.2 output recorded on this kind of
machine (fixtures/ddsperf-*.txt)."""

import csv
import io
import json
import os

import pytest

from conftest import FIXTURES, check_golden
from mwperf.cli.main import main
from mwperf.export.perftest import LATENCY_HEADER, THROUGHPUT_HEADER, perftest_tables
from mwperf.export.tables import render
from mwperf.imports.ddsperf import parse_ddsperf
from mwperf.imports.perftest import parse_perftest
from conftest import typed, typed_all, written
from mwperf.model.schema import validate_record


def imported(tmp_path, tool, fixture, mw=None):
    out = tmp_path / "imported"
    args = ["import", tool, str(FIXTURES / fixture), "--out", str(out)] + (["--mw", mw] if mw else [])
    assert main(args) == 0
    records = written(out)
    for r in records:
        validate_record(r)
    return out, records


def test_perftest_tutorial_tables(tmp_path):
    out, records = imported(tmp_path, "perftest", "perftest-tutorial.txt", mw="perftest-raw")
    assert [(r["mode"], r["size"]) for r in records[:2]] == [("throughput", 32), ("throughput", 64)]
    assert len(records) == 24
    first = records[0]
    assert (first["received"], first["lost"], first["samples_per_s"], first["mbps"]) == (503906, 975, 25193, 6.4)
    assert first["loss_rate"] == pytest.approx(975 / (503906 + 975))
    last = records[-1]
    assert last["mode"] == "latency" and last["size"] == 63000
    assert last["latency_us"]["p50"] == 6595 and last["latency_us"]["p999999"] == 10706
    assert last["source"] == {"tool": "perftest", "file": "perftest-tutorial.txt", "note": None,
                              "section": "Latency Results -- RAW Transport (UDPv4)"}
    check_golden("import/perftest-tutorial.txt", render(typed_all(records)))


def test_perftest_docs_one_cell_a_line(tmp_path):
    _, records = imported(tmp_path, "perftest", "perftest-docs.txt", mw="connext")
    assert [r["size"] for r in records] == [32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 63000]
    assert records[0]["latency_us"] == {"count": None, "mean": 23, "std": 0.9, "min": 20, "max": 71, "p50": 23,
                                        "p90": 23, "p99": 25, "p9999": 54, "p999999": 71, "p50_ci": None,
                                        "p99_ci": None, "relative_error": None, "ci_confidence": None,
                                        "ci_batches": None,
                                            "p999": None, "p999_ci": None, "ci_method": None, "ci_null": None}
    check_golden("import/perftest-docs.txt", render(typed_all(records)))


def test_perftest_summary_lines():
    text = ("Length:    32  Latency: Ave     23 us  Std    0.9 us  Min     20 us  Max     71 us  50%     23 us  "
            "90%     23 us  99%     25 us  99.99%     54 us  99.9999%     71 us\n"
            "Length:    32  Packets: 503906  Packets/s(ave): 25193  Mbps(ave): 6.4  Lost: 975 (0.19%)\n")
    lat, tput = parse_perftest(text)
    assert lat.latency == {"mean": 23, "std": 0.9, "min": 20, "max": 71, "p50": 23, "p90": 23, "p99": 25,
                           "p9999": 54, "p999999": 71}
    assert (tput.size, tput.packets, tput.pps, tput.mbps, tput.lost) == (32, 503906, 25193, 6.4, 975)


def test_ddsperf_ping_and_sub(tmp_path):
    _, records = imported(tmp_path, "ddsperf", "ddsperf-ping.txt")
    (lat,) = records
    assert lat["mode"] == "latency" and lat["size"] == 1024 and lat["mw"] == "ddsperf"
    assert lat["latency_us"]["count"] > 1000 and lat["latency_us"]["min"] <= lat["latency_us"]["p50"]
    assert "medians of its per-second percentiles" in lat["source"]["note"]
    _, records = imported(tmp_path / "sub", "ddsperf", "ddsperf-sub.txt")
    (tput,) = records
    assert tput["mode"] == "throughput" and tput["size"] == 1024 and tput["samples_per_s"] > 1000
    assert tput["received"] > 0 and tput["lost"] == 0


def test_ddsperf_parser_aggregates_seconds():
    text = ("[1] 1.000  size 32 mean 40.000us min 30.000us 50% 39.000us 90% 45.000us 99% 60.000us max 90.000us cnt 100\n"
            "[1] 2.000  size 32 mean 50.000us min 35.000us 50% 49.000us 90% 55.000us 99% 70.000us max 80.000us cnt 300\n"
            "[1] 3.000  size 32 mean 45.000us min 31.000us 50% 44.000us 90% 50.000us 99% 65.000us max 95.000us cnt 100\n")
    (p,) = parse_ddsperf(text)
    assert p.latency["count"] == 500
    assert p.latency["mean"] == pytest.approx((40 * 100 + 50 * 300 + 45 * 100) / 500)
    assert (p.latency["min"], p.latency["max"], p.latency["p50"]) == (30, 95, 44)


def test_perftest_csv_export_round_trip(tmp_path):
    _, records = imported(tmp_path, "perftest", "perftest-tutorial.txt", mw="perftest-raw")
    files = perftest_tables(typed_all(records))
    assert sorted(files) == ["perftest-raw-latency-results-raw-transport-udpv4-unknown-unknown-latency.csv",
                             "perftest-raw-throughput-results-raw-transport-udpv4-unknown-unknown-throughput.csv"]
    for name, text in sorted(files.items()):
        check_golden(f"export/{name}", text)
        rows = list(csv.reader(io.StringIO(text), skipinitialspace=True))
        assert tuple(rows[0]) == (LATENCY_HEADER if name.endswith("latency.csv") else THROUGHPUT_HEADER)
        assert len(rows) == 13
    # what mwperf writes, Perftest's importer reads back to the same points
    again = parse_perftest("\n".join(text for _, text in sorted(files.items())))
    assert [(p.mode, p.size) for p in again] == sorted(((r["mode"], r["size"]) for r in records),
                                                       key=lambda t: (t[0] != "latency", t[1]))


def test_perftest_csv_export_keeps_a_pages_tables_apart(tmp_path):
    _, records = imported(tmp_path, "perftest", "perftest-page-sections.txt", mw="connext")
    files = perftest_tables(typed_all(records))
    assert len(files) == 8  # one per titled table, never four rows per size in one
    assert "connext-keyed-udpv4-10gbps-network-c-98-reliable-unknown-unknown-latency.csv" in files
    for text in files.values():
        sizes = [line.split(",")[0] for line in text.splitlines()[1:]]
        assert len(sizes) == len(set(sizes))


def test_export_of_a_measured_run(tmp_path, capsys):
    records = [json.loads(l) for l in (FIXTURES / "results.jsonl").read_text().splitlines() if l.strip()]
    files = perftest_tables(typed_all(records))
    check_golden("export/perftest-from-fixture.txt",
                 "".join(f"## {name}\n{text}" for name, text in sorted(files.items())))


@pytest.mark.parametrize("args, expected", [
    (["import", "iperf", "x.txt"], "import iperf: unknown tool (choose from perftest, ddsperf)"),
    (["import", "perftest", "/no/such/file"], "import perftest /no/such/file: cannot read"),
    (["export", "/no/such/dir", "--format", "perftest-csv"], "export /no/such/dir: no results.jsonl there"),
])
def test_bad_input(args, expected, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mwperf: error: {expected}") and err.count("\n") == 1


def test_nothing_to_import(tmp_path, capsys):
    empty = tmp_path / "empty.txt"
    empty.write_text("no tables here\n")
    assert main(["import", "ddsperf", str(empty), "--out", str(tmp_path / "o")]) == 2
    assert "no ddsperf results found" in capsys.readouterr().err


def test_a_page_of_several_tables_keeps_them_apart(tmp_path):
    """RTI's performance page (as text): unkeyed and keyed, 1 and 10 Gbit/s, best effort and reliable."""
    _, records = imported(tmp_path, "perftest", "perftest-page-sections.txt", mw="connext")
    sections = list(dict.fromkeys(r["source"]["section"] for r in records))
    assert sections == [f"{keyed}, UDPv4 {speed} Network, C++98 / {rel}"
                        for keyed in ("Unkeyed", "Keyed") for speed in ("1Gbps", "10Gbps")
                        for rel in ("Best Effort", "Reliable")]
    assert len(records) == 108
    # as the page prints it (its line 2625 and on): Keyed, 10 Gbps, reliable, 32 bytes
    first = next(r for r in records if r["source"]["section"] == sections[-1])
    assert first["size"] == 32 and first["latency_us"] == {
        "count": None, "mean": 23, "std": 1.4, "min": 22, "max": 206, "p50": 23, "p90": 24, "p99": 30, "p9999": 53,
        "p999999": 206, "p50_ci": None, "p99_ci": None, "relative_error": None, "ci_confidence": None,
        "ci_batches": None,
                                            "p999": None, "p999_ci": None, "ci_method": None, "ci_null": None}
    text = render(typed_all(records))
    assert text.count("== connext latency") == 8  # one table each, never four rows per size in one
    for section in sections:
        assert f"table '{section}'" in text
    assert len([r for r in records if r["size"] == 32]) == 8


@pytest.mark.parametrize("row, value, reason", [
    ("64,nan,11.6,1608,0.35", "nan", "not a finite number (column 'Packets')"),
    ("64,454201,inf,11.6,1608,0.35", "inf", "not a finite number (column 'Packets/s (ave)')"),
    ("64,454201,22697,11.6,-3,0.35", "-3", "negative (column 'Lost')"),
])
def test_non_finite_and_negative_values_are_refused_with_their_line(tmp_path, capsys, row, value, reason):
    bad = tmp_path / "bad.txt"
    bad.write_text('"Size", "Packets", "Packets/s (ave)", "Mbps (ave)", "Lost", "Lost (%)"\n'
                   "32, 503906, 25193, 6.4, 975, 0.19\n" + row + "\n")
    assert main(["import", "perftest", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err == f"mwperf: error: import perftest {bad}:3: {value}: {reason}\n"
    assert not (tmp_path / "o" / "results.jsonl").exists()


def test_negative_values_in_one_cell_a_line_tables_and_ddsperf(tmp_path, capsys):
    page = (FIXTURES / "perftest-docs.txt").read_text().splitlines()
    at = page.index("0.9")  # the first row's std
    page[at] = "-0.9"
    bad = tmp_path / "page.txt"
    bad.write_text("\n".join(page) + "\n")
    assert main(["import", "perftest", str(bad), "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err == f"mwperf: error: import perftest {bad}:{at + 1}: -0.9: negative (column 'Std (μs)')\n"
    dds = tmp_path / "dds.txt"
    dds.write_text("[1] 1.000  size 32 mean 40.000us min -30.000us 50% 39.000us 90% 45.000us 99% 60.000us "
                   "max 90.000us cnt 100\n")
    assert main(["import", "ddsperf", str(dds), "--out", str(tmp_path / "d")]) == 2
    assert capsys.readouterr().err == f"mwperf: error: import ddsperf {dds}:1: -30.000: negative (column 'min')\n"


def test_300000_lines_import_in_seconds(tmp_path):
    """Perftest's per-second lines of a long run, and its summary line per size: one write, not one per point."""
    import time

    lines = []
    for size in (32, 64, 128, 256, 512, 1024):
        lines += ["Packets:     1000  Packets/s:    25000  Packets/s(ave):    25193  Mbps:    6.4  Mbps(ave):    6.4"
                  "  Lost:     0 (0.00%)"] * 50_000
        lines.append(f"Length: {size:>5}  Packets: 503906  Packets/s(ave): 25193  Mbps(ave): 6.4  Lost: 975 (0.19%)")
    big = tmp_path / "long-run.txt"
    big.write_text("\n".join(lines) + "\n")
    started = time.monotonic()
    assert main(["import", "perftest", str(big), "--out", str(tmp_path / "o")]) == 0
    assert time.monotonic() - started < 60  # ~5 s on this project's 2-vCPU machine
    records = written(tmp_path / "o")
    assert [(r["size"], r["received"], r["lost"]) for r in records] == [
        (s, 503906, 975) for s in (32, 64, 128, 256, 512, 1024)]


HOSTILE_TABLE = ("One-Way Latency Results:\n"
                 "Length (Bytes), Ave (us), Std (us), Min (us), Max (us), 50% (us), 90% (us), 99% (us), "
                 "99.99% (us), 99.9999% (us)\n{size}, 1, 1, 1, 1, {p50}, 1, 1, 1, 1\n")


@pytest.mark.parametrize("size, p50, expected", [
    ("1" + "0" * 30, "2", "page.txt:3: 100000000000...(31 digits): larger than any message (4 GiB, column 'size')"),
    ("32", "1e308", "page.txt:3: 1e308: larger than any measurement (column '50% (us)')"),
    # past float's range: infinite, its 309 digits shown short as the others
    ("32", "2" + "0" * 308, "page.txt:3: 200000000000...(309 digits): not a finite number (column '50% (us)')"),
    ("32", "-" + "1" * 100, "page.txt:3: -11111111111...(101 digits): negative (column '50% (us)')"),
])
def test_values_beyond_any_measurement_are_refused_with_their_line(tmp_path, capsys, size, p50, expected):
    page = tmp_path / "page.txt"
    page.write_text(HOSTILE_TABLE.format(size=size, p50=p50))
    assert main(["import", "perftest", str(page), "--out", str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err == f"mwperf: error: import perftest {tmp_path}/{expected}\n"
    assert not (tmp_path / "run").exists()


def test_a_device_a_fifo_or_a_huge_file_is_one_line(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    huge = tmp_path / "huge.txt"
    with open(huge, "wb") as handle:
        handle.truncate(300 << 20)  # sparse: no disk used
    for path, reason in (("/dev/zero", "not a regular file (a tool's output saved to a file)"),
                         (str(fifo), "not a regular file (a tool's output saved to a file)"),
                         (str(huge), "larger than 256 MiB: no tool's output is")):
        assert main(["import", "perftest", path, "--out", str(tmp_path / "run")]) == 2
        assert capsys.readouterr().err == f"mwperf: error: import perftest {path}: {reason}\n"


def test_a_huge_number_in_a_record_is_shown_short(tmp_path):
    record = json.loads((FIXTURES / "results.jsonl").read_text().splitlines()[0])
    record["latency_us"]["p50"] = 1e308
    text = render([typed(record)])
    assert "1e+308" in text and "0" * 30 not in text
