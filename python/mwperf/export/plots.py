"""Every figure of the report as a file of its own, for documents:
DIR/plots/ID.svg or ID.png, from the same figure definitions as the page
(:mod:`mwperf.export.figures`), drawn by kaleido in the system's headless
Chromium.

Nothing is fetched: plotly.js is the plotly package's own file, MathJax is
off (kaleido would load it from a CDN), and Chromium gets a proxy that
refuses every connection, so no request can leave the machine.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from mwperf.errors import UsageError
from mwperf.extras import need
from mwperf.export.answer_figures import answer_figures
from mwperf.export.exporter import Exporter
from mwperf.export.floor import Anchors
from mwperf.export.ranking import rankings
from mwperf.export.figures import WIDTH, Figure, point_figures, run_figures
from mwperf.results.confined import make_dirs, write_inside
from mwperf.model.record import Record
from mwperf.results.rundir import RunDir

__all__ = ["PlotFiles", "write_figures", "NO_NETWORK_PROXY", "PLOTS_DIR"]

#: The figure files' folder in the run directory.
PLOTS_DIR = "plots"

#: A proxy nothing listens on (the discard port of loopback): any request Chromium makes fails here.
NO_NETWORK_PROXY = "http://127.0.0.1:9"


def _browser() -> str:
    browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if browser is None:
        raise UsageError("--format", "svg/png", "needs chromium to draw the figures (apt-get install chromium)")
    return browser


def _for_paper(figure: Figure):
    """The figure without its on-screen buttons."""
    import plotly.graph_objects as go

    fig = go.Figure(figure.fig)
    fig.update_layout(updatemenus=[])
    return fig


def write_figures(figures: list[Figure], directory: Path, fmt: str, folder: str = "") -> list[Path]:
    """``directory/folder/ID.fmt`` for each figure, in one Chromium session; PNG at twice the pixels (print).
    Chromium draws into a private folder; the files reach ``folder`` through
    :mod:`mwperf.results.confined` (never through a link)."""
    if not figures:
        return []
    need("kaleido", "--format", fmt)  # before anything is made: the extra to install, in one line
    make_dirs(directory, folder)
    with tempfile.TemporaryDirectory(prefix="mwperf-plots-") as drawn:
        names = [f"{figure.id}.{fmt}" for figure in figures]
        _draw(figures, [Path(drawn, name) for name in names], fmt)
        return [write_inside(directory, str(Path(folder, name)), Path(drawn, name).read_bytes()) for name in names]


def _draw(figures: list[Figure], paths: list[Path], fmt: str) -> None:
    """Each figure to its path, by kaleido in one Chromium session; UsageError in one line otherwise."""
    import kaleido
    from plotly.offline import get_plotlyjs  # noqa: F401 - plotly's presence; its file is what kaleido loads
    import plotly

    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    jobs = [{"fig": _for_paper(figure), "path": path,
             "opts": {"format": fmt, "width": WIDTH, "height": int(figure.fig.layout.height or 500),
                      "scale": 2 if fmt == "png" else 1}} for figure, path in zip(figures, paths)]
    try:
        kaleido.write_fig_from_object_sync(jobs, kopts={"mathjax": False, "plotlyjs": str(plotly_js),
                                                        "path": _browser(), "proxy_server": NO_NETWORK_PROXY})
    except UsageError:
        raise
    except Exception as exc:  # kaleido / Chromium failing is the figure files' problem, said in one line
        raise UsageError("--format", fmt,
                         f"chromium could not draw the figures: {' '.join(str(exc).split())[:300]}") from None
    missing = [p for p in paths if not p.is_file()]
    if missing:
        raise UsageError("--format", fmt, f"chromium drew no {missing[0].name}")


class PlotFiles(Exporter):
    """DIR/plots/ID.svg or .png: the report's figures (the headline's first) and the chosen point's."""

    def __init__(self, fmt: str, point: int | None = None):
        self.name = fmt  # svg or png
        self.point = point

    def write(self, records: list[Record], rundir: RunDir) -> list[Path]:
        anchors = Anchors.of(rundir.path)
        figures = (answer_figures(rankings(records, anchors), anchors) + run_figures(records)
                   + point_figures(rundir.path, records, self.point))
        return write_figures(figures, rundir.path, self.name, PLOTS_DIR)
