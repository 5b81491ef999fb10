"""mwperf ls: the runs of a folder with their date, status, points and command;
mwperf --help with examples; mwperf completion bash."""

import json
import shutil
import subprocess

import pytest

from conftest import FIXTURES
from mwperf.cli.main import main


def make_run(path, started, argv, records, status="complete"):
    path.mkdir(parents=True)
    (path / "results.jsonl").write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
    (path / "run.json").write_text(json.dumps({"started": started, "command": argv, "status": status}))


def test_runs_oldest_first_with_points_and_command(tmp_path, capsys):
    records = [json.loads(l) for l in (FIXTURES / "results.jsonl").read_text().splitlines()]
    make_run(tmp_path / "b", "2026-11-22T10:00:00Z", ["/usr/bin/mwperf", "sweep", "plans/quick.yaml"], records)
    make_run(tmp_path / "a", "2026-11-21T09:30:00Z", ["mwperf", "run", "--mw", "udp"], records[:2],
             status="interrupted")
    assert main(["import", "perftest", str(FIXTURES / "perftest-docs.txt"), "--out", str(tmp_path / "c")]) == 0
    (tmp_path / "not-a-run").mkdir()
    capsys.readouterr()
    assert main(["ls", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["run", "started", "status", "points", "failed", "command"]
    a, b, c = (line.split() for line in lines[2:])
    # fixtures/results.jsonl: 16 points, 3 failed (grep -c '"status":"failed"')
    assert a == [str(tmp_path / "a"), "2026-11-21", "09:30", "UTC", "interrupted", "2", "mwperf", "run", "--mw",
                 "udp"]
    assert b == [str(tmp_path / "b"), "2026-11-22", "10:00", "UTC", "complete", "16", "3", "mwperf", "sweep",
                 "plans/quick.yaml"]
    assert c[0] == str(tmp_path / "c") and c[4:6] == ["complete", "12"]
    assert c[6:] == ["mwperf", "import", "perftest", str(FIXTURES / "perftest-docs.txt")]
    assert len(lines) == 5  # the folder without results is no run


def test_one_run_directory_and_bad_input(tmp_path, capsys):
    shutil.copy(FIXTURES / "results.jsonl", tmp_path / "results.jsonl")  # no run.json: the file's time
    assert main(["ls", str(tmp_path)]) == 0
    row = capsys.readouterr().out.splitlines()[2].split()
    assert row[0] == str(tmp_path) and row[5:7] == ["16", "3"]
    assert main(["ls", str(tmp_path / "nowhere")]) == 2
    assert capsys.readouterr().err == f"mwperf: error: ls {tmp_path / 'nowhere'}: no such folder\n"


def test_help_has_examples(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "examples:" in out and "mwperf ls results/" in out and 'mwperf.load("results/mine")' in out
    for command in ("run", "sweep", "report", "ls", "compare", "export", "import", "completion"):
        assert f"\n    {command}" in out


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_bash_completion(capsys, tmp_path):
    assert main(["completion", "bash"]) == 0
    script = tmp_path / "mwperf.bash"
    script.write_text(capsys.readouterr().out)
    # complete "mwperf re" and "mwperf export x --format " in bash itself
    probe = (f'source {script}\n'
             'COMP_WORDS=(mwperf re); COMP_CWORD=1; COMP_LINE="mwperf re"; COMP_POINT=${#COMP_LINE}\n'
             '_shtab_mwperf; echo "${COMPREPLY[@]}"\n'
             'COMP_WORDS=(mwperf export x --format ""); COMP_CWORD=4; COMP_LINE="mwperf export x --format "; '
             'COMP_POINT=${#COMP_LINE}\n'
             '_shtab_mwperf; echo "${COMPREPLY[@]}"\n')
    done = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, timeout=30)
    first, second = done.stdout.splitlines()[-2:]
    assert first.split() == ["report"]
    assert sorted(second.split()) == ["parquet", "perftest-csv"]
    assert main(["completion", "fish"]) == 2


def test_a_scenario_run_shows_its_points_and_flow_records(tmp_path, capsys):
    """fixtures/scenario-run: one scenario point of 2 flows, each together and alone: 4 records."""
    shutil.copytree(FIXTURES / "scenario-run", tmp_path / "s")
    records = [json.loads(l) for l in (FIXTURES / "results.jsonl").read_text().splitlines()]
    make_run(tmp_path / "p", "2020-01-01T00:00:00Z", ["mwperf", "run"], records[:2])
    assert main(["ls", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:6] == ["run", "started", "status", "points", "failed", "scenario"]
    plain, scenario = lines[2], lines[3]
    assert "two-flows: 1 point, 4 flow records" in scenario and " 4 " in scenario
    assert "two-flows" not in plain
