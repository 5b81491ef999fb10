import shutil

from conftest import FIXTURES, GOLDEN, check_golden
from mwperf.cli.main import main


def test_report_reprints_and_regenerates_csv(tmp_path, capsys):
    shutil.copy(FIXTURES / "results.jsonl", tmp_path / "results.jsonl")
    assert main(["report", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith((GOLDEN / "tables.txt").read_text())  # the tables, then the headline
    check_golden("report.txt", out)
    assert (tmp_path / "results.csv").read_text() == (GOLDEN / "results.csv").read_text()


def test_report_markdown(tmp_path, capsys):
    shutil.copy(FIXTURES / "results.jsonl", tmp_path / "results.jsonl")
    (tmp_path / "run.json").write_text('{"status": "interrupted"}')
    assert main(["report", str(tmp_path), "--format", "md"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith((GOLDEN / "tables.md").read_text())
    check_golden("report.md", captured.out)
    assert "interrupted" in captured.err
