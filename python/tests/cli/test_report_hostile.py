"""report.html of a hostile run directory (issue 37's stored XSS: baseline.json's
``duration_s`` was written into the page unescaped and Chromium ran
``<img src=x onerror=...>`` from it). The run directory is
:func:`hostile_rundir.hostile_rundir`'s: markup in every string field of every
record, of run.json, baseline.json and floor.json, and in the numbers no reader
checked. The page is opened in headless Chromium: no script of the run
directory's runs, and the markup is on the page as text."""

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from conftest import FIXTURES
from hostile_rundir import MARK, hostile_rundir
from mwperf.cli.main import main

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--proxy-server=http://127.0.0.1:9"]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    path = tmp_path_factory.mktemp("hostile") / "run"
    fields = hostile_rundir(path)
    assert main(["report", str(path)]) == 0
    return path / "report.html", fields


class Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[str] = []
        self.handlers: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on")]


def test_no_markup_of_the_run_directory_is_an_element(page):
    html, _ = page
    tags = Tags()
    tags.feed(html.read_text(encoding="utf-8"))
    assert "img" not in tags.tags and "svg" not in tags.tags and tags.handlers == []


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/install-deps.sh installs it)")
def test_chromium_runs_no_script_of_the_run_directory(page, tmp_path):
    html, fields = page
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=5000",
                           "--dump-dom", html.as_uri()], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    root = re.search(r"<html[^>]*>", done.stdout).group()
    ran = re.search(rf'{MARK}="([^"]*)"', root)
    assert ran is None, "scripts ran from: " + ", ".join(fields[int(n)] for n in ran.group(1).split())
    # the page was drawn, the markup in it as text: baseline.json's duration_s of the probe is dropped
    # (not a number), its tool is shown
    assert "js-plotly-plot" in done.stdout
    baseline = re.search(r'<section id="baseline">.*?</section>', done.stdout, re.S).group()
    assert "&lt;img src=x onerror=" in baseline and ", ? s each" in baseline


def test_a_baseline_without_its_numbers_is_a_page(tmp_path):
    """baseline.json with null numbers (a number of the wrong type reads as missing) was a TypeError."""
    shutil.copy(FIXTURES / "results.jsonl", tmp_path / "results.jsonl")
    (tmp_path / "baseline.json").write_text(json.dumps({"tcp": {"gbps": None}, "udp": {"gbps": None},
                                                        "duration_s": None, "tool": None}))
    assert main(["report", str(tmp_path)]) == 0
    assert "<td>-</td><td>-</td><td>0.00</td>" in (tmp_path / "report.html").read_text()
