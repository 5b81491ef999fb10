"""report.html in a real headless browser (Debian's chromium): it loads with no
console error, every section is in the rendered DOM, the screenshot is not
blank, and the plotted values in the DOM equal those of results.jsonl."""

import json
import shutil
import struct
import subprocess
import zlib

import pytest

from conftest import FIXTURES
from export.test_html import parse, plotted_equals_records
from mwperf.cli.main import main
from mwperf.results.rundir import RunDir

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/install-deps.sh installs it)")


def chromium(tmp_path, *args):
    done = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120)
    return done


def png_pixels(path):
    """(width, height, distinct byte values of the decoded scanlines) of an 8-bit PNG."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height = struct.unpack(">II", body[:8])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    return width, height, len(set(raw[::97]))


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("run")
    rundir = RunDir(path).create()
    records = [json.loads(l) for l in (FIXTURES / "results.jsonl").read_text().splitlines() if l.strip()]
    for r in records:
        rundir.append(r)
    assert main(["report", str(path)]) == 0
    return path / "report.html", records


def test_loads_without_console_errors_and_shows_every_section(report, tmp_path):
    html, records = report
    done = chromium(tmp_path, "--dump-dom", html.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    console = [l for l in done.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    assert console == []
    page = parse(done.stdout)
    assert page.sections == ["provenance", "warnings", "throughput", "latency", "rate", "resources", "tables"]
    plotted_equals_records(page, records)  # what the browser holds is what results.jsonl says


def test_screenshot_is_not_blank(report, tmp_path):
    html, _ = report
    shot = tmp_path / "shot.png"
    done = chromium(tmp_path, "--window-size=1400,2000", f"--screenshot={shot}", html.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    width, height, distinct = png_pixels(shot)
    assert (width, height) == (1400, 2000)
    assert distinct > 20  # text, axes, lines and bands, not one flat colour


def test_png_export_draws_every_plot(report, capsys):
    html, _ = report
    assert main(["report", str(html.parent), "--format", "png"]) == 0
    files = capsys.readouterr().out.split()
    assert files and all(f.endswith(".png") for f in files)
    for f in files:
        width, height, distinct = png_pixels(__import__("pathlib").Path(f))
        assert (width, height) == (680, 360) and distinct > 3
