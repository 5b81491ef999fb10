"""``mwperf report DIR``: re-print the tables, regenerate results.csv and
write report.html from results.jsonl (the one source of truth of a run
directory); ``--format svg`` also writes every plot as DIR/plots/ID.svg."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TextIO

from mwperf.export.html import chosen_point, plot_svgs, point_svgs, render_html
from mwperf.export.tables import render
from mwperf.options import UsageError
from mwperf.plots import H, W
from mwperf.rundir import RESULTS_JSONL, RunDir, read_records, read_samples

__all__ = ["report", "write_html"]

REPORT_HTML = "report.html"


def _rasterize(svg_file: Path, png_file: Path) -> None:
    """PNG of an SVG by headless Chromium (Debian's chromium; scripts/install-deps.sh installs it)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise UsageError("--format png: needs chromium to draw the plots (apt-get install chromium), "
                         "or use --format svg")
    with tempfile.TemporaryDirectory(prefix="mwperf-chromium-") as profile:
        done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--disable-background-networking", "--disable-component-update", "--disable-sync",
                               f"--user-data-dir={profile}", f"--window-size={W},{H}", "--hide-scrollbars",
                               f"--screenshot={png_file}", svg_file.resolve().as_uri()],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    if done.returncode != 0 or not png_file.exists():
        raise UsageError(f"--format png: chromium could not draw {svg_file.name} (exit {done.returncode})")


def export_plots(path: Path, plots: list[tuple[str, str, str]], fmt: str) -> list[Path]:
    """Every plot as DIR/plots/ID.svg, or .png (drawn from the SVG)."""
    directory = path / "plots"
    directory.mkdir(exist_ok=True)
    written = []
    for _, chart_id, svg in plots:
        svg_file = directory / f"{chart_id}.svg"
        svg_file.write_text(svg + "\n", encoding="utf-8")
        if fmt == "png":
            png_file = directory / f"{chart_id}.png"
            _rasterize(svg_file, png_file)
            svg_file.unlink()
            written.append(png_file)
        else:
            written.append(svg_file)
    return written


def _point_plots(path: Path, records: list[dict], point: int | None) -> list[tuple[str, str, str]]:
    record = chosen_point(records, point)
    samples = read_samples(path, record) if record else None
    return point_svgs(record, samples) if samples else []


def write_html(path: Path, records: list[dict], run: dict | None, point: int | None = None) -> Path:
    """DIR/report.html, written whole (a reader never sees half a page);
    ``point`` picks the point whose samples are plotted."""
    target = path / REPORT_HTML
    tmp = target.with_suffix(".html.tmp")
    from mwperf.baseline import read_baseline

    html = render_html(records, run, f"mwperf run {path.name}", _point_plots(path, records, point),
                       baseline=read_baseline(path))
    tmp.write_text(html, encoding="utf-8")
    tmp.replace(target)
    return target


def report(directory: str, fmt: str = "text", out: TextIO | None = None, err: TextIO | None = None,
           point: int | None = None) -> int:
    out = out or sys.stdout
    err = err or sys.stderr
    path = Path(directory)
    if not (path / RESULTS_JSONL).is_file():
        raise UsageError(f"report {directory}: no {RESULTS_JSONL} there")
    records = read_records(path, warn=lambda m: err.write(f"mwperf: warning: {m}\n"))
    usable = [r for r in records if all(k in r for k in ("mw", "mode", "size"))]
    if len(usable) != len(records):
        err.write(f"mwperf: warning: {len(records) - len(usable)} record(s) without mw/mode/size skipped\n")
    try:
        RunDir(path).regenerate_csv()
    except OSError as exc:
        err.write(f"mwperf: warning: cannot rewrite results.csv: {exc.strerror or exc}\n")
    run = RunDir(path).read_run_json()
    if point is not None and not any(r.get("point") == point for r in usable):
        raise UsageError(f"--point {point}: no such point in {directory} (points 0-{len(records) - 1})")
    if run and run.get("status") not in (None, "complete"):
        err.write(f"mwperf: note: this run is '{run.get('status')}'\n")
    if fmt in ("svg", "png"):
        for file in export_plots(path, plot_svgs(usable) + _point_plots(path, usable, point), fmt):
            out.write(f"{file}\n")
    else:
        out.write(render(usable, fmt))
    try:
        html = write_html(path, usable, run, point)
    except OSError as exc:
        err.write(f"mwperf: warning: cannot write {REPORT_HTML}: {exc.strerror or exc}\n")
    else:
        err.write(f"report: {html}\n")
    return 0
