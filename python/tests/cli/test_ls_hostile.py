"""`mwperf ls` over hostile run directories: the bounded reader's rules (no
FIFO or device, bounded size and nesting, records checked against the
schema), one bad run never hides the others, killed runs read as killed,
and nothing printed reaches the terminal raw."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path


from conftest import FIXTURES


def ls(folder: Path, memory: int = 2 << 30) -> subprocess.CompletedProcess:
    """``mwperf ls folder`` in 2 GiB of address space at most."""
    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run([sys.executable, "-m", "mwperf", "ls", str(folder)], capture_output=True, text=True,
                          timeout=60, preexec_fn=limit)


def good_lines(n: int = 2) -> list[str]:
    return [line for line in (FIXTURES / "results.jsonl").read_text().splitlines() if '"status":"ok"' in line][:n]


def make_run(folder: Path, name: str, started: str = "2026-11-21T09:30:00Z", lines: list[str] | None = None,
             status: str = "complete") -> Path:
    run = folder / name
    run.mkdir()
    (run / "results.jsonl").write_text("".join(line + "\n" for line in (good_lines() if lines is None else lines)))
    (run / "run.json").write_text(json.dumps({"started": started, "status": status, "command": ["mwperf", "run"]}))
    return run


def rows(done: subprocess.CompletedProcess) -> dict[str, list[str]]:
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return {Path(line.split()[0]).name: line.split()[1:] for line in done.stdout.splitlines()[2:]}


def test_fifos_devices_huge_and_deep_files_list_at_once(tmp_path):
    make_run(tmp_path, "a-good")
    for name in ("results.jsonl", "run.json"):  # the other file is a file: a run
        fifo = make_run(tmp_path, f"b-fifo-{name}")
        (fifo / name).unlink()
        os.mkfifo(fifo / name)
    zero = make_run(tmp_path, "c-zero")
    (zero / "results.jsonl").unlink()
    (zero / "results.jsonl").symlink_to("/dev/zero")
    sparse = make_run(tmp_path, "d-sparse", lines=[])
    with open(sparse / "results.jsonl", "r+b") as handle:
        handle.truncate(10 << 30)  # 10 GiB of zeros, no newline
    deep = make_run(tmp_path, "e-deep", lines=["[" * 100000, *good_lines(1)])
    (deep / "run.json").write_text("[" * 100000)
    found = rows(ls(tmp_path))
    assert sorted(found) == ["a-good", "b-fifo-results.jsonl", "b-fifo-run.json", "c-zero", "d-sparse", "e-deep"]
    assert found["a-good"][3:5] == ["complete", "2"]
    assert found["b-fifo-results.jsonl"][3:5] == ["complete", "0"]
    assert found["b-fifo-run.json"][3:5] == ["-", "2"]
    assert found["e-deep"][3:5] == ["-", "1"]  # run.json unusable: no status; the one good record
    assert found["c-zero"][3:5] == ["complete", "0"]


def test_a_run_without_a_timezone_lists_beside_the_others(tmp_path):
    make_run(tmp_path, "naive", started="2026-11-22T08:00:00")
    make_run(tmp_path, "utc", started="2026-11-21T09:30:00Z")
    found = rows(ls(tmp_path))
    assert found["naive"][:3] == ["2026-11-22", "08:00", "UTC"]
    assert list(found) == ["utc", "naive"]  # oldest first


def test_a_killed_run_reads_killed_not_running(tmp_path):
    killed = make_run(tmp_path, "killed", status="running")
    (killed / ".mwperf.lock").write_text(json.dumps({"pid": 2 ** 22 + 7, "start": 1, "host": os.uname().nodename}))
    assert rows(ls(tmp_path))["killed"][3] == "killed"


def test_only_usable_records_count(tmp_path):
    good = json.loads(good_lines(1)[0])
    broken = [json.dumps({**good, "schema_version": 99}), json.dumps({**good, "size": "big"}),
              '{"status":"ok"}', '{"status":"ok", "point": ' + "1" * 5000 + "}"]
    run = make_run(tmp_path, "mixed", lines=[json.dumps(good), *broken])
    assert (run / "results.jsonl").read_text().count('"status":"ok"') + (run / "results.jsonl").read_text().count(
        '"status": "ok"') == 5
    assert rows(ls(tmp_path))["mixed"][3:5] == ["complete", "1"]


def test_escape_codes_in_names_and_fields_are_shown_escaped(tmp_path):
    run = make_run(tmp_path, "evil\x1b]0;owned\x07\x1b[2J")
    (run / "run.json").write_text(json.dumps({"started": "2026-11-21T09:30:00Z", "status": "\x1b[31mok",
                                              "command": ["mwperf", "run", "\x1b[2J"]}))
    done = ls(tmp_path)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    assert "evil\\x1b]0;owned\\x07\\x1b[2J" in done.stdout and "\\x1b[2J" in done.stdout
