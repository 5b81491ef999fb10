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


def test_a_point_that_is_not_there_names_the_points_that_are(tmp_path, capsys):
    (tmp_path / "results.jsonl").write_text("not a record\n")  # no usable point left
    assert main(["report", str(tmp_path), "--point", "3"]) == 2
    assert capsys.readouterr().err.endswith(f"mwperf: error: --point 3: no such point in {tmp_path} "
                                            "(it holds no usable point)\n")
    shutil.copy(FIXTURES / "results.jsonl", tmp_path / "results.jsonl")
    assert main(["report", str(tmp_path), "--point", "99"]) == 2
    assert capsys.readouterr().err.endswith(f"no such point in {tmp_path} (points 0-15)\n")
