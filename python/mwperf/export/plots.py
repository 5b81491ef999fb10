"""Every plot of a run as a file of its own, for documents:
DIR/plots/ID.svg, or ID.png drawn from the SVG by headless Chromium."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from mwperf.errors import UsageError
from mwperf.export.charts import plot_svgs, point_charts
from mwperf.export.exporter import Exporter
from mwperf.export.svg import H, W
from mwperf.results.rundir import RunDir

__all__ = ["PlotFiles"]


def _rasterize(svg_file: Path, png_file: Path) -> None:
    """PNG of an SVG by headless Chromium (Debian's chromium; scripts/install-deps.sh installs it)."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        raise UsageError("--format", "png", "needs chromium to draw the plots (apt-get install chromium), "
                                            "or use --format svg")
    with tempfile.TemporaryDirectory(prefix="mwperf-chromium-") as profile:
        done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                               "--disable-background-networking", "--disable-component-update", "--disable-sync",
                               f"--user-data-dir={profile}", f"--window-size={W},{H}", "--hide-scrollbars",
                               f"--screenshot={png_file}", svg_file.resolve().as_uri()],
                              stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    if done.returncode != 0 or not png_file.exists():
        raise UsageError("--format", "png", f"chromium could not draw {svg_file.name} (exit {done.returncode})")


class PlotFiles(Exporter):
    """DIR/plots/ID.svg or .png: the report's charts and the chosen point's."""

    def __init__(self, fmt: str, point: int | None = None):
        self.name = fmt  # svg or png
        self.point = point

    def write(self, records: list[dict], rundir: RunDir) -> list[Path]:
        directory = rundir.path / "plots"
        directory.mkdir(exist_ok=True)
        written = []
        for _, chart_id, svg in plot_svgs(records) + point_charts(rundir.path, records, self.point):
            svg_file = directory / f"{chart_id}.svg"
            svg_file.write_text(svg + "\n", encoding="utf-8")
            if self.name == "png":
                png_file = directory / f"{chart_id}.png"
                _rasterize(svg_file, png_file)
                svg_file.unlink()
                written.append(png_file)
            else:
                written.append(svg_file)
        return written
