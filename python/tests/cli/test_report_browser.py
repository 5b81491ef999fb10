"""report.html in a real headless browser (Debian's chromium): it loads with
no console error and fetches nothing, plotly.js draws every figure, the
values plotly.js holds equal those of results.jsonl, the legend and the
log/linear buttons are there and work, the screenshot is not blank, and the
page weight stays reasonable. The SVG/PNG files of the same figures too.

The page is read through a copy with two small scripts added (one before
everything, catching errors; one after, writing what plotly.js holds into
the DOM), dumped by chromium --dump-dom: the report itself has no test hook.
"""

import json
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from conftest import typed_all
from synthetic import measured_stats
from export.test_html import all_records, every_figure, parse, plotted_equals_records
from mwperf.cli.main import main
from mwperf.export.html import plotly_js

CHROMIUM = shutil.which("chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--proxy-server=http://127.0.0.1:9",  # nothing may leave: a request would fail here, and show below
         "--enable-logging=stderr", "--v=0"]

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/install-deps.sh installs it)")

BEFORE = """<script>
window.__errors = [];
window.addEventListener('error', e => window.__errors.push(String(e.message)));
window.addEventListener('unhandledrejection', e => window.__errors.push('rejection: ' + String(e.reason)));
const __consoleError = console.error;
console.error = (...a) => { window.__errors.push(a.join(' ')); __consoleError(...a); };
</script>"""

AFTER = """<script>
(async () => {
  const out = {figures: {}, errors: null, resources: null};
  for (const gd of document.querySelectorAll('.js-plotly-plot')) {
    const fig = {
      traces: gd._fullData.map(t => ({name: t.name, xaxis: t.xaxis, visible: t.visible,
        x: t.x ? Array.from(t.x) : null, y: t.y ? Array.from(t.y) : null,
        z: t.z ? Array.from(t.z, row => Array.from(row)) : null,
        customdata: t.customdata ? Array.from(t.customdata) : null})),
      drawn: gd.querySelectorAll('.main-svg .trace, .main-svg .hm').length,
      legend_items: gd.querySelectorAll('.legend .traces').length,
      buttons: Array.from(gd.querySelectorAll('.updatemenu-button text')).map(e => e.textContent),
      modebar: gd.querySelectorAll('.modebar-btn').length,
    };
    const menus = gd.layout.updatemenus || [];
    if (menus.length) {   // press the second button (log <-> linear) and read the y axis back
      const args = menus[0].buttons[1].args[0];
      const axis = Object.keys(args)[0].split('.')[0];
      const before = gd._fullLayout[axis].type;
      await Plotly.relayout(gd, args);
      fig.y_type = [before, gd._fullLayout[axis].type];
    }
    // hide the first trace as a legend click does
    await Plotly.restyle(gd, {visible: 'legendonly'}, [0]);
    fig.hidden = gd._fullData[0].visible;
    out.figures[gd.id] = fig;
  }
  out.errors = window.__errors;
  out.resources = performance.getEntriesByType('resource').map(e => e.name);
  const pre = document.createElement('pre');
  pre.id = 'mwperf-test';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


#: What a reader sees first, read in a 1400 x 900 window once plotly.js has drawn: where the first mode's
#: rankings and its one-axis figure are, the traces of each headline figure, its legend and plotting area.
FIRST_SCREEN = """<script>
(async () => {
  await new Promise(r => setTimeout(r, 1000));
  const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const out = {window: [window.innerWidth, window.innerHeight], ranks: box(document.querySelector('#answer .ranks')),
               figures: {}};
  for (const gd of document.querySelectorAll('#answer .js-plotly-plot')) {
    const at = gd.getBoundingClientRect(), size = gd._fullLayout._size;
    out.figures[gd.id] = {box: box(gd), traces: gd._fullData.map(t => t.name),
      legend: box(gd.querySelector('.legend')),
      plot: [at.left + size.l, at.top + size.t, at.left + size.l + size.w, at.top + size.t + size.h]};
  }
  const pre = document.createElement('pre');
  pre.id = 'mwperf-test';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""


def chromium(tmp_path, *args):
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=180)


def png_pixels(path):
    """(width, height, distinct byte values of the decoded scanlines) of an 8-bit PNG."""
    data = Path(path).read_bytes()
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
    """A run of the fixture records (both files, with failed points), its first point's samples kept."""
    path = tmp_path_factory.mktemp("run")
    records = all_records()
    records[0]["samples_file"] = {"path": "samples/00000.i64", "count": 4000, "time_ordered": True}
    (path / "samples").mkdir()
    (path / "samples" / "00000.i64").write_bytes(struct.pack("<4000q", *(30_000 + (i * 37) % 9000
                                                                          for i in range(4000))))
    (path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert main(["report", str(path)]) == 0
    return path / "report.html", records


def probed(html: Path, tmp: Path, script: str, *args: str) -> tuple[dict, str]:
    """What ``script`` (added to a copy of the page, before BEFORE) wrote into the DOM, and Chromium's log."""
    import html as htmllib

    page = html.read_text(encoding="utf-8")
    probe = tmp / "probe.html"
    probe.write_text(page.replace("<head>", "<head>" + BEFORE, 1).replace("</body>", script + "</body>", 1),
                     encoding="utf-8")
    done = chromium(tmp, *args, "--virtual-time-budget=20000", "--dump-dom", probe.as_uri())
    assert done.returncode == 0, done.stderr[-2000:]
    start = done.stdout.index('<pre id="mwperf-test">') + len('<pre id="mwperf-test">')
    return json.loads(htmllib.unescape(done.stdout[start:done.stdout.index("</pre>", start)])), done.stderr


@pytest.fixture(scope="module")
def rendered(report, tmp_path_factory):
    html, records = report
    state, log = probed(html, tmp_path_factory.mktemp("browser"), AFTER)
    return state, log, records


def test_loads_without_errors_and_fetches_nothing(rendered, report):
    state, stderr, _ = rendered
    assert state["errors"] == []
    console = [l for l in stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    assert console == []
    assert state["resources"] == []  # no script, style, font or image loaded from anywhere
    assert parse(report[0].read_text()).external == []


def test_every_figure_is_drawn_with_the_values_of_results_jsonl(rendered):
    state, _, records = rendered
    ids = [f.id for f in every_figure(typed_all(records))] + ["point-histogram", "point-time"]
    assert list(state["figures"]) == ids
    for fid, fig in state["figures"].items():
        assert fig["drawn"] > 0, fid
    plotted = {fid: fig["traces"] for fid, fig in state["figures"].items()}
    assert plotted_equals_records(plotted, records) > 60  # what the browser holds is what results.jsonl says
    hist = plotted["point-histogram"][0]
    assert len(hist["x"]) == 4000 and hist["x"][1] == (30_000 + 37) / 1000  # the kept samples, in µs


def test_the_first_screen_ranks_the_middlewares_and_draws_every_one_on_one_axis(report, tmp_path):
    """In a 1400 px wide window, the first 900 px hold the first mode's rankings and its figure; each
    headline figure has a trace of every middleware its mode measured, and its legend is beside the
    plotting area, never over it."""
    html, records = report
    state, _ = probed(html, tmp_path, FIRST_SCREEN, "--window-size=1400,900")
    assert state["window"][0] >= 1380  # the window's width, less a scroll bar
    first = state["figures"]["answer-latency"]
    for left, top, right, bottom in (state["ranks"], first["box"]):
        assert 0 <= left and 0 <= top and right <= state["window"][0] and bottom <= 900, (left, top, right, bottom)
    assert list(state["figures"]) == ["answer-latency", "answer-throughput", "answer-rate"]
    for fid, fig in state["figures"].items():
        mode = fid.removeprefix("answer-")
        measured = {r["mw"] for r in records if r["mode"] == mode and r["status"] == "ok"}
        assert measured and all(any(t == mw or t.startswith(f"{mw} (") for t in fig["traces"]) for mw in measured), (
            fid, measured, fig["traces"])
        (l1, t1, r1, b1), (l2, t2, r2, b2) = fig["legend"], fig["plot"]
        assert r1 <= l2 or r2 <= l1 or b1 <= t2 or b2 <= t1, (fid, fig["legend"], fig["plot"])  # apart


def test_the_first_screen_of_the_quick_plan_holds_its_three_sizes_and_its_figure(tmp_path):
    """The quick plan's run (every middleware, 14, at three sizes; intervals that leave each place a list of
    places it cannot be told from, p99 with wide intervals: the widest cells a run has): its three rankings
    side by side and its one-axis figure within the first 900 px of a 1400 px wide window, every middleware a
    trace, the legend beside the plotting area and no taller than it (plotly.js scrolls a taller one)."""
    from export.test_run import MIDDLEWARES, quick_plan_run

    rundir, _ = quick_plan_run(tmp_path / "run")  # its floor; the records: the fixture's udp ones as each
    udp = {(r["mode"], r["size"]): r for r in all_records() if r["mw"] == "udp" and r["status"] == "ok"}
    lines = []
    for i, mw in enumerate(MIDDLEWARES):
        for mode, rate, size in [(m, None, s) for m in ("latency", "throughput") for s in (32, 1024, 63000)] + [
                ("rate", hz, s) for s in (32, 1024, 63000) for hz in (100.0, 1000.0)]:
            raw = {**udp[mode, 1024 if mode == "latency" else 64], "mw": mw, "size": size, "rate_hz": rate,
                   "point": len(lines), "mbps": 100.0 * (i + 1)}
            raw["latency_us"] = measured_stats(raw["latency_us"], p50=20.0 + i, p50_ci=[17.4 + i, 22.6 + i],
                                               p99=1000.0 + 37 * i, p99_ci=[600.5 + i, 1900.5 + i])
            lines.append(json.dumps(raw) + "\n")
    (rundir.path / "results.jsonl").write_text("".join(lines))
    assert main(["report", str(rundir.path)]) == 0
    state, _ = probed(rundir.path / "report.html", tmp_path, FIRST_SCREEN, "--window-size=1400,900")
    first = state["figures"]["answer-latency"]
    for left, top, right, bottom in (state["ranks"], first["box"]):
        assert 0 <= left and 0 <= top and right <= state["window"][0] and bottom <= 900, (left, top, right, bottom)
    assert all(any(t.startswith(mw) for t in first["traces"]) for mw in MIDDLEWARES), first["traces"]
    legend, plot = first["legend"], first["plot"]
    assert plot[2] <= legend[0] and legend[3] - legend[1] <= plot[3] - plot[1], (legend, plot)  # beside, not taller


def test_legend_toggles_and_log_linear_buttons_work(rendered):
    state, _, _ = rendered
    lat = state["figures"]["latency-size"]
    assert lat["legend_items"] == 4  # p50, p90, p99, p99.99: one entry each for every panel
    assert lat["buttons"] == ["log y", "linear y"] and lat["y_type"] == ["log", "linear"]
    assert state["figures"]["answer-throughput"]["y_type"] == ["log", "linear"]
    assert all(fig["hidden"] == "legendonly" for fig in state["figures"].values())
    assert all(fig["modebar"] > 0 for fig in state["figures"].values())  # zoom, pan, reset, save as SVG


def test_page_weight(report):
    """plotly.js inline is most of it (~4.8 MB); the run's figures and tables add little."""
    html, _ = report
    size = html.stat().st_size
    own = size - len(plotly_js().encode())
    assert size < 6_000_000 and own < 600_000, (size, own)


def test_screenshot_is_not_blank(report, tmp_path):
    html, _ = report
    shot = tmp_path / "shot.png"
    done = chromium(tmp_path, "--window-size=1400,2600", "--virtual-time-budget=10000", f"--screenshot={shot}",
                    html.as_uri())
    assert done.returncode == 0 and shot.exists(), done.stderr[-2000:]
    width, height, distinct = png_pixels(shot)
    assert (width, height) == (1400, 2600)
    assert distinct > 20  # text, axes, lines, not one flat colour


@pytest.mark.parametrize("fmt", ["svg", "png"])
def test_figure_files_from_the_same_definitions(report, capsys, fmt):
    html, records = report
    assert main(["report", str(html.parent), "--format", fmt]) == 0
    files = capsys.readouterr().out.split()
    figures = every_figure(typed_all(records))
    assert [Path(f).name for f in files] == [f"{f.id}.{fmt}" for f in figures] + [f"point-histogram.{fmt}",
                                                                                   f"point-time.{fmt}"]
    for f, figure in zip(files, figures):
        if fmt == "png":
            width, height, distinct = png_pixels(f)
            assert (width, height) == (2 * 1100, 2 * figure.fig.layout.height) and distinct > 3
        else:
            svg = Path(f).read_text()
            assert svg.startswith("<svg") and "http://" not in svg.replace("http://www.w3.org", "")
            assert figure.fig.layout.title.text.split(" (")[0][:30] in svg.replace("&amp;", "&")
