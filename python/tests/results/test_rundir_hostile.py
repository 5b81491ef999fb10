"""A run directory is untrusted input (issue 17): paths in records stay inside
it, files are read with a bound and never hang, every record is checked
against the schema on reading, a bad one is skipped with one warning naming
its line, and no command shows a traceback for any of it."""

from __future__ import annotations

import copy
import json
import os
import struct
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import FIXTURES, typed, written
from hostile_rundir import FORGERIES, forged_rundir
from mwperf.errors import BadInput, Refused
from mwperf.results.rundir import (
    MAX_LINE_BYTES, RunDir, read_records, read_samples, samples_path,
)

SECRET = [123456789, 987654321, 271828182]  # ns: 123456.789 us ... if it were ever read (no repeated digits: plotly's colour scales hold 0.5555555555555556)


def fixture_records() -> list[dict]:
    return [json.loads(line) for line in (FIXTURES / "results.jsonl").read_text().splitlines() if line.strip()]


def ok_latency() -> dict:
    return copy.deepcopy(next(r for r in fixture_records() if r["status"] == "ok" and r["mode"] == "latency"))


def make_run(tmp_path: Path, lines: list[str | bytes], name: str = "run") -> Path:
    """A run directory holding exactly ``lines`` as results.jsonl."""
    run = tmp_path / name
    (run / "samples").mkdir(parents=True)
    data = b"".join((line if isinstance(line, bytes) else line.encode()) + b"\n" for line in lines)
    (run / "results.jsonl").write_bytes(data)
    return run


def with_samples(record: dict, path: str, count: int) -> dict:
    record = copy.deepcopy(record)
    record["samples_file"] = {"path": path, "count": count, "time_ordered": True}
    return record


def secret_file(tmp_path: Path) -> Path:
    path = tmp_path / "secret.i64"
    path.write_bytes(struct.pack(f"<{len(SECRET)}q", *SECRET))
    return path


def collect(directory) -> tuple[list[dict], list[str]]:
    warnings: list[str] = []
    return written(directory, warn=warnings.append), warnings


def mwperf(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mwperf", *args], capture_output=True, text=True, timeout=timeout)


# -- paths inside records --------------------------------------------------------------

@pytest.mark.parametrize("path", ["../secret.i64", "../../../../etc/passwd", "/etc/passwd", "samples/../../secret.i64",
                                  "samples/00000.i64/../../../secret.i64", "/dev/zero", "samples/x\x1b[31m.i64"])
def test_a_samples_path_outside_the_directory_skips_its_record_naming_line_and_value(tmp_path, path):
    secret_file(tmp_path)
    good = ok_latency()
    run = make_run(tmp_path, [json.dumps(good), json.dumps(with_samples(good, path, 3))])
    records, warnings = collect(run)
    assert records == [good]
    assert len(warnings) == 1
    assert f"{run / 'results.jsonl'}:2: samples_file.path " in warnings[0] and "skipped" in warnings[0]
    assert "\x1b" not in warnings[0]  # shown escaped, never raw
    assert read_samples(run, typed(with_samples(good, path, 3))) is None


def test_a_samples_file_that_is_a_symlink_out_of_the_directory_is_not_read(tmp_path):
    secret = secret_file(tmp_path)
    record = with_samples(ok_latency(), samples_path(0), 3)
    run = make_run(tmp_path, [json.dumps(record)])
    (run / samples_path(0)).symlink_to(secret)
    assert written(run) == [record]  # the record is fine; its file is not followed
    assert read_samples(run, typed(record)) is None
    (run / samples_path(0)).unlink()
    (run / samples_path(0)).symlink_to("/dev/zero")
    assert read_samples(run, typed(record)) is None


def test_a_samples_file_that_is_a_fifo_or_a_device_does_not_hang(tmp_path):
    record = with_samples(ok_latency(), samples_path(0), 3)
    run = make_run(tmp_path, [json.dumps(record)])
    os.mkfifo(run / samples_path(0))
    started = time.monotonic()
    assert read_samples(run, typed(record)) is None
    assert time.monotonic() - started < 2


def test_samples_are_read_up_to_the_records_count(tmp_path):
    values = [1000 * (i + 1) for i in range(10)]
    record = with_samples(ok_latency(), samples_path(0), 4)
    run = make_run(tmp_path, [json.dumps(record)])
    with open(run / samples_path(0), "wb") as handle:
        handle.write(struct.pack("<10q", *values))
        handle.truncate(8 << 30)  # 8 GiB, sparse: more than any report may read
    assert read_samples(run, typed(record)) == [1.0, 2.0, 3.0, 4.0]


def test_a_symlinked_samples_file_inside_the_directory_is_read(tmp_path):
    record = with_samples(ok_latency(), samples_path(1), 2)
    run = make_run(tmp_path, [json.dumps(record)])
    (run / "samples" / "real.i64").write_bytes(struct.pack("<2q", 5000, 7000))
    (run / samples_path(1)).symlink_to("real.i64")
    assert read_samples(run, typed(record)) == [5.0, 7.0]


# -- results.jsonl itself ---------------------------------------------------------------

@pytest.mark.parametrize("target", ["/dev/zero", "/dev/urandom", "outside"])
def test_results_jsonl_that_leads_out_of_the_directory_or_to_a_device_is_not_read(tmp_path, target):
    run = tmp_path / "run"
    run.mkdir()
    if target == "outside":
        (tmp_path / "elsewhere.jsonl").write_text(json.dumps(ok_latency()) + "\n")
        target = str(tmp_path / "elsewhere.jsonl")
    (run / "results.jsonl").symlink_to(target)
    started = time.monotonic()
    records, warnings = collect(run)
    assert records == [] and len(warnings) == 1 and "not read" in warnings[0]
    assert time.monotonic() - started < 2


def test_results_jsonl_that_is_a_fifo_does_not_hang(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "results.jsonl")
    records, warnings = collect(run)
    assert records == [] and "not a regular file" in warnings[0]


def another_launch(record: dict, point: int = 1) -> dict:
    """The record as another launch of its run would have it (its own index): one launch twice is refused."""
    return {**copy.deepcopy(record), "point": point}


def test_an_endless_line_is_skipped_and_what_follows_is_read(tmp_path):
    good, other = ok_latency(), another_launch(ok_latency())
    run = make_run(tmp_path, [json.dumps(good), b"[" * (MAX_LINE_BYTES + 10), json.dumps(other)])
    records, warnings = collect(run)
    assert records == [good, other]
    assert len(warnings) == 1 and ":2: longer than 1 MiB" in warnings[0]


# -- corrupted records: each skipped with one warning naming its line -----------------------

def _mutated(change) -> str:
    record = ok_latency()
    change(record)
    return json.dumps(record)


CORRUPT = {
    "binary": (b"\x00\x01\xff\xfe binary \x1b[2J", "not a JSON record"),
    "size as text": (_mutated(lambda r: r.update(size="big")), "size: 'big' is not of type 'integer'"),
    "NaN": (_mutated(lambda r: r["latency_us"].update(p50=float("nan"))), "NaN is not a number JSON allows"),
    "Infinity": (_mutated(lambda r: r.update(mbps=float("inf"))), "Infinity is not a number JSON allows"),
    "1e999": (_mutated(lambda r: r.update(mbps=1.5)).replace('"mbps": 1.5', '"mbps": 1e999'), "out of range"),
    "schema 3": (_mutated(lambda r: r.update(schema_version=3)), "schema_version 3: this mwperf reads version 1, 2"),
    "schema '1'": (_mutated(lambda r: r.update(schema_version="1")), "schema_version '1': not a schema version"),
    "no schema": (_mutated(lambda r: r.pop("schema_version")), "no schema_version"),
    "a list": ("[1, 2, 3]", "not a JSON object"),
    "a number": ("42", "not a JSON object"),
    "deep": ("[" * 100_000 + "]" * 100_000, "not a JSON record"),
    "huge int": ('{"schema_version": 1, "size": ' + "9" * 5000 + "}", "not a JSON record"),
    "cpu a string": (_mutated(lambda r: r.update(cpu="0,1")), "cpu: '0,1' is not of type 'object'"),
    "stats wrong": (_mutated(lambda r: r["latency_us"].update(p99=[1])), "latency_us/p99"),
    "extra field": (_mutated(lambda r: r.update(evil="x")), "evil"),
    "torn": ('{"schema_version": 1, "run_', "not a JSON record"),
}


@pytest.mark.parametrize("name", list(CORRUPT))
def test_a_corrupted_record_is_skipped_with_one_warning_naming_its_line(tmp_path, name):
    line, fragment = CORRUPT[name]
    good, other = ok_latency(), another_launch(ok_latency())
    run = make_run(tmp_path, [json.dumps(good), line, json.dumps(other)])
    records, warnings = collect(run)
    assert records == [good, other]
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith(f"{run / 'results.jsonl'}:2: ") and warnings[0].endswith("skipped")
    assert fragment in warnings[0], warnings[0]
    assert "\x1b" not in warnings[0] and len(warnings[0]) < 400


def test_each_bad_line_is_named_once_however_often_it_is_read(tmp_path):
    run = make_run(tmp_path, [json.dumps(ok_latency()), "garbage"])
    warnings: list[str] = []
    for _ in range(3):  # the runner reads results.jsonl again after every point
        read_records(run, warn=warnings.append)
    assert len(warnings) == 1


def test_every_fixture_record_reads_back(tmp_path):
    records = fixture_records()
    run = make_run(tmp_path, [json.dumps(r) for r in records])
    assert collect(run) == (records, [])


# -- run.json and baseline.json --------------------------------------------------------------

@pytest.mark.parametrize("text", ['["a list"]', "garbage", '{"agent": "x", "sysctl": 3, "git": [], "command": "rm",'
                                  ' "adapters": [1, {"name": "udp"}], "points": {"total": "many"}, "status": 5}',
                                  '{"vcpus": NaN}', "{" * 50_000])
def test_a_hostile_run_json_reads_as_what_can_be_used(tmp_path, text):
    run = make_run(tmp_path, [json.dumps(ok_latency())])
    (run / "run.json").write_text(text)
    doc = RunDir(run).read_run_json()
    assert doc is None or (isinstance(doc, dict) and not isinstance(doc.get("agent"), str)
                           and doc.get("adapters", []) in ([], [{"name": "udp"}]))


def test_run_json_larger_than_the_bound_is_not_read(tmp_path):
    run = make_run(tmp_path, [json.dumps(ok_latency())])
    (run / "run.json").write_text('{"x": "' + "a" * (5 << 20) + '"}')
    assert RunDir(run).read_run_json() is None
    (run / "run.json").unlink()
    (run / "run.json").symlink_to("/dev/zero")
    assert RunDir(run).read_run_json() is None


def test_a_hostile_baseline_reads_as_what_can_be_used(tmp_path):
    run = make_run(tmp_path, [json.dumps(ok_latency())])
    (run / "baseline.json").write_text('{"tcp": 5, "udp": {"gbps": "fast", "lost_percent": 1.5}, "link": []}')
    assert RunDir(run).read_baseline() == {"tcp": None, "udp": {"lost_percent": 1.5}, "link": None} or \
        RunDir(run).read_baseline() == {"udp": {"lost_percent": 1.5}}


def test_every_field_a_reader_shows_is_typed_at_every_depth(tmp_path):
    """Issue 37: baseline.json's duration_s (a string of markup reached the page) and the
    nested fields of run.json were never checked for their type."""
    run = make_run(tmp_path, [json.dumps(ok_latency())])
    (run / "baseline.json").write_text(json.dumps({
        "duration_s": "<img src=x onerror=alert(1)>", "tool": ["iperf3"], "time": 5, "link": {"profile": {}},
        "tcp": {"gbps": None}, "udp": {"gbps": True, "lost_percent": 0.5}}))
    assert RunDir(run).read_baseline() == {"link": {}, "tcp": {"gbps": None}, "udp": {"lost_percent": 0.5}}
    (run / "run.json").write_text(json.dumps({
        "vcpus": "<b>2</b>", "agent": {"build_type": ["Debug"], "version": "1"}, "git": {"sha": 5, "dirty": "yes"},
        "adapters": [{"name": 1, "version": "2", "license": {}}, "udp"], "sysctl": {"a": [1], "b": 2},
        "imported": {"tool": 3, "file": "f"}, "command": ["run", 5], "hostname": 7}))
    assert RunDir(run).read_run_json() == {
        "agent": {"version": "1"}, "git": {}, "adapters": [{"version": "2"}], "sysctl": {"b": 2},
        "imported": {"file": "f"}, "command": ["run"]}


def test_run_json_that_says_running_with_no_writer_left_reads_as_killed(tmp_path):
    run = make_run(tmp_path, [json.dumps(ok_latency())])
    (run / "run.json").write_text(json.dumps({"status": "running"}))
    (run / ".mwperf.lock").write_text(json.dumps({"pid": 2 ** 22 + 7, "start": 1, "host": os.uname().nodename}))
    assert RunDir(run).read_run_json()["status"] == "killed"
    (run / ".mwperf.lock").write_text(json.dumps({"pid": os.getpid(), "start": None, "host": os.uname().nodename}))
    assert RunDir(run).read_run_json()["status"] == "running"  # its writer (this process) is alive


# -- the commands: warnings, never a traceback, nothing read from outside -------------------

def hostile_dir(tmp_path: Path) -> Path:
    """Every kind of bad line of CORRUPT, a path out of the directory, beside good records."""
    secret_file(tmp_path)
    good = fixture_records()
    lines = [json.dumps(r) for r in good[:3]]
    lines += [line for line, _ in CORRUPT.values()]
    lines.append(json.dumps(with_samples(good[0], "../secret.i64", 3)))
    lines.append(json.dumps(with_samples(good[0], "samples/../../secret.i64", 3)))
    lines.append(json.dumps(good[9]))
    run = make_run(tmp_path, lines)
    (run / "run.json").write_text('{"agent": "Debug", "adapters": "all", "status": "running", "git": 1}')
    (run / "baseline.json").write_text('{"tcp": {"gbps": "x"}, "udp": 7}')
    return run


def test_report_of_a_hostile_directory(tmp_path):
    run = hostile_dir(tmp_path)
    done = mwperf("report", str(run))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    bad = len(CORRUPT) + 2
    warned = [line for line in done.stderr.splitlines() if line.startswith("mwperf: warning: ")]
    assert len(warned) == bad, done.stderr  # one a bad line, not more
    assert "\x1b" not in done.stderr + done.stdout
    from mwperf.export.html import plotly_js

    html = (run / "report.html").read_text().replace(plotly_js(), "")  # the library's own digits are no leak
    for value in SECRET:  # as a plotted value (µs, full precision) or as read (ns)
        assert repr(value / 1000) not in html and str(value) not in html


def test_compare_and_export_of_a_hostile_directory(tmp_path):
    run = hostile_dir(tmp_path)
    done = mwperf("compare", str(run), str(run))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    done = mwperf("export", str(run), "--format", "perftest-csv", "--out", str(tmp_path / "pt"))
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr


@pytest.mark.e2e
@pytest.mark.side_by_side  # loopback, counts and warnings
@pytest.mark.usefixtures("no_packet_leaves_loopback")
def test_resume_over_corrupted_records_runs_exactly_the_points_without_a_usable_record(tmp_path):
    from conftest import real_agent_path

    agent = real_agent_path()
    if agent is None:
        pytest.skip("the agent binary is not built yet (agent/build/mwperf-agent)")
    plan = tmp_path / "plan.yaml"
    plan.write_text("mw: udp\nmode: latency\nsize: [32, 64, 128]\nduration: 200ms\nwarmup: 0s\n")
    run = tmp_path / "run"
    done = mwperf("sweep", str(plan), "--out", str(run), "--agent", str(agent))
    assert done.returncode == 0, done.stderr
    lines = (run / "results.jsonl").read_text().splitlines()
    second = json.loads(lines[1])
    second["size"] = "big"  # a record of the wrong type: as good as missing
    third = lines[2].replace('"received":', '"received":NaN,"x":', 1)
    (run / "results.jsonl").write_text("\n".join([lines[0], json.dumps(second), third, "\x00\xff garbage"]) + "\n")
    done = mwperf("sweep", "--resume", str(run), "--agent", str(agent))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    warned = [line for line in done.stderr.splitlines() if line.startswith("mwperf: warning: ")]
    assert [w.split("results.jsonl:")[1].split(":")[0] for w in warned] == ["2", "3", "4"], warned
    records, _ = collect(run)
    assert [r["size"] for r in records] == [32, 64, 128]  # the first kept, the two unusable measured again
    assert records[0] == json.loads(lines[0])


@pytest.mark.parametrize("command", [["report", "{}"], ["export", "{}", "--format", "parquet"], ["compare", "{}", "{}"],
                                     ["db", "ingest", "{}", "--db", "{}/store.duckdb"], ["check", "{}/b.yaml", "{}"]])
def test_a_results_jsonl_that_is_no_file_is_named_for_what_it_is(tmp_path, capsys, command):
    """Issue 37: a FIFO results.jsonl was reported as 'no results.jsonl there'."""
    from mwperf.cli.main import main

    (tmp_path / "b.yaml").write_text('budgets:\n  - p99: "<= 1s"\n')
    for made, kind in ((lambda p: os.mkfifo(p), "a FIFO (named pipe)"), (lambda p: p.mkdir(), "a directory"),
                       (lambda p: p.symlink_to(tmp_path / "gone"), None)):
        target = tmp_path / "results.jsonl"
        made(target)
        assert main([part.format(tmp_path) for part in command]) == 2
        err = capsys.readouterr().err.strip()
        why = f"results.jsonl there is {kind}, not a file" if kind else "results.jsonl there is a link to nothing"
        assert err.endswith(f"{tmp_path}: {why}"), err
        target.rmdir() if target.is_dir() and not target.is_symlink() else target.unlink()


# -- issue 45.2, 45.4: forged numbers and repeated launches refuse the run directory ---------------

@pytest.mark.parametrize("forgery", list(FORGERIES))
def test_a_forged_or_repeated_launch_refuses_the_run_directory_naming_point_and_field(tmp_path, forgery):
    run = tmp_path / "run"
    said = forged_rundir(run, forgery)
    with pytest.raises(Refused) as caught:
        read_records(run)
    text = str(caught.value)
    assert text.startswith(f"{run}: point ") and said in text and text.endswith("refused"), text
    assert isinstance(caught.value, BadInput) and "\n" not in text


def test_the_six_good_launches_load_and_a_record_without_a_launch_id_still_does(tmp_path):
    forged_rundir(tmp_path / "good", "none")
    records = read_records(tmp_path / "good")
    assert [r.launch_id for r in records] == [f"{i + 1:016x}" for i in range(6)]
    lines = (tmp_path / "good" / "results.jsonl").read_text().splitlines()
    old = [json.loads(line) for line in lines]
    for r in old:
        del r["launch_id"]  # written before the field was added
    (tmp_path / "good" / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
    assert [r.launch_id for r in read_records(tmp_path / "good")] == [None] * 6


def test_a_samples_file_that_holds_other_than_its_count_refuses_the_run(tmp_path):
    record = with_samples(ok_latency(), samples_path(0), 3)
    run = make_run(tmp_path, [json.dumps(record)])
    (run / samples_path(0)).write_bytes(b"\0" * 8 * 5)
    with pytest.raises(Refused, match=r"samples_file.count 3: samples/00000.i64 holds 40 bytes, not 24"):
        read_records(run)
    (run / samples_path(0)).write_bytes(b"\0" * 8 * 3)
    assert len(read_records(run)) == 1


# every reader that shows numbers reads through the one loader: each refuses, one line, exit 2
READERS = [["report", "{}"], ["compare", "{}", "{}"], ["check", "{b}", "{}"],
           ["export", "{}", "--format", "perftest-csv", "--out", "{o}"], ["db", "ingest", "{}", "--db", "{d}"]]


@pytest.mark.parametrize("forgery", ["one launch copied six times", "a negative p50", "received above sent"])
@pytest.mark.parametrize("reader", READERS, ids=lambda r: r[0])
def test_every_reader_refuses_a_forged_run_in_one_line(tmp_path, capsys, forgery, reader):
    from mwperf.cli.main import main

    run = tmp_path / "run"
    said = forged_rundir(run, forgery)
    (tmp_path / "b.yaml").write_text('budgets: [{p99: "<= 1s"}]\n')
    argv = [a.format(str(run), b=tmp_path / "b.yaml", o=tmp_path / "out.csv", d=tmp_path / "s.duckdb")
            for a in reader]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and err.startswith(f"mwperf: error: {run}: point ") and said in err, err
    assert not (tmp_path / "out.csv").exists() and not (tmp_path / "s.duckdb").exists()


def test_ls_shows_a_forged_run_as_refused_beside_the_others(tmp_path, capsys):
    """ls lists a folder of runs: a forged one is listed as refused, no count of it shown, its reason one
    warning line; the others as they are."""
    from mwperf.cli.main import main

    said = forged_rundir(tmp_path / "results" / "forged", "one launch copied six times")
    forged_rundir(tmp_path / "results" / "good", "none")
    assert main(["ls", str(tmp_path / "results")]) == 0
    out, err = capsys.readouterr()
    forged, good = (next(line for line in out.splitlines() if f"/{name} " in line) for name in ("forged", "good"))
    assert " refused " in forged and " 6 " not in forged and " complete " in good and " 6 " in good, out
    assert err.count("\n") == 1 and err.startswith(f"mwperf: warning: {tmp_path / 'results' / 'forged'}: ") \
        and said in err, err


def test_a_mean_within_a_nanosecond_of_whole_nanosecond_bounds_is_a_measurement(tmp_path):
    """The agent's min and max are whole nanoseconds, its mean is not: one sample of 91308.5 ns reads mean
    91.3085 us, min and max 91.308 us (a real Fast DDS throughput point's pings)."""
    record = ok_latency()
    record["latency_us"].update(count=1, min=91.308, max=91.308, mean=91.3085, p50=91.308, p90=91.308,
                                p99=None, p9999=None, p999999=None, std=0.0)
    run = make_run(tmp_path, [json.dumps(record)])
    assert len(read_records(run)) == 1
    record["latency_us"]["mean"] = 91.3105  # 2.5 ns above: not a mean of these samples
    run = make_run(tmp_path, [json.dumps(record)], name="other")
    with pytest.raises(Refused, match=r"latency_us.mean 91.3105 outside \[91.308, 91.308\]"):
        read_records(run)
