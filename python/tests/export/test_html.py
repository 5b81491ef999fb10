"""report.html: self-contained, every section there, plotted values equal to
results.jsonl, warnings with advice (golden page from the fixture records)."""

import copy
import json
import re
from html.parser import HTMLParser

import pytest

from conftest import FIXTURES, check_golden
from mwperf.export.charts import plot_svgs
from mwperf.export.html import render_html, warnings_for


def fixture_records():
    return [json.loads(l) for l in (FIXTURES / "results.jsonl").read_text().splitlines() if l.strip()]


class Points(HTMLParser):
    """The plotted values: {chart id: [(series, x, y)]}, and the section ids."""

    def __init__(self):
        super().__init__()
        self.chart = None
        self.points: dict[str, list] = {}
        self.cells: dict[str, list] = {}
        self.sections: list[str] = []
        self.external: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.chart = a.get("id")
        elif tag == "section":
            self.sections.append(a.get("id"))
        if "pt" in (a.get("class") or "").split():
            self.points.setdefault(self.chart, []).append((a["data-series"], a["data-x"], float(a["data-y"])))
        if "cell" in (a.get("class") or "").split() and "data-v" in a:
            self.cells.setdefault(self.chart, []).append((float(a["data-row"]), float(a["data-col"]), float(a["data-v"])))
        for key in ("src", "href"):
            if key in a:
                self.external.append(a[key])


def parse(html):
    p = Points()
    p.feed(html)
    return p


def plotted_equals_records(page: "Points", records: list[dict]) -> None:
    """Every plotted value is the figure of an ok record of results.jsonl."""
    ok = [r for r in records if r["status"] == "ok"]
    lat = {(r["mw"], r["size"]): r["latency_us"]["p50"] for r in ok if r["mode"] == "latency"}
    for series, x, y in page.points["latency-size"]:
        assert lat[(series.split(" (")[0], int(float(x)))] == pytest.approx(y)
    assert len(page.points["latency-size"]) == len(lat)
    tput = {(r["mw"], r["size"]): r["mbps"] for r in ok if r["mode"] == "throughput" and r.get("source") is None}
    for series, x, y in page.points["throughput-size"]:
        assert tput[(series.split(" (")[0], int(float(x)))] == pytest.approx(y)
    for chart, cells in page.cells.items():
        mw = chart.removeprefix("loss-heatmap-").split("-")[0]
        for size, rate, v in cells:
            assert any(r["mw"] == mw and r["size"] == size and r["rate_hz"] == rate and r["loss_rate"] == pytest.approx(v)
                       for r in ok if r["mode"] == "rate")


def test_page_is_self_contained_with_every_section():
    records = fixture_records()
    html = render_html(records, None, "mwperf run fixture")
    page = parse(html)
    assert page.sections == ["provenance", "warnings", "throughput", "latency", "rate", "resources", "tables"]
    assert page.external == []  # nothing to fetch: no CDN, no file beside it
    assert "<script" not in html
    plotted_equals_records(page, records)
    check_golden("report.html", html)


def test_every_plot_on_linear_and_log_axes():
    ids = [chart_id for _, chart_id, _ in plot_svgs(fixture_records())]
    for base in ("throughput-size", "latency-size"):
        assert base in ids and f"{base}-log" in ids
    assert any(i.startswith("latency-rate-") for i in ids) and any(i.startswith("loss-heatmap-") for i in ids)
    assert "cpu" in ids and "memory" in ids


def test_latency_bands_are_p50_to_p90_and_p90_to_p99():
    records = [r for r in fixture_records() if r["mode"] == "latency" and r["status"] == "ok" and r["mw"] == "udp"]
    svg = dict((i, s) for _, i, s in plot_svgs(records))["latency-size"]
    assert svg.count('<polygon class="band"') == 2  # two bands for the one series


def test_warnings_say_what_to_do():
    records = fixture_records()
    unpinned = copy.deepcopy(records[0])
    unpinned["cpu"].update(pub=None, sub=None, placement="unpinned")
    run = {"agent": {"build_type": "Debug"}, "governor": "powersave", "sysctl": {"net.core.busy_read": 0}}
    warnings = warnings_for(records + [unpinned], run)
    text = "\n".join(warnings)
    assert "Pin both sides (--cpu 0,1 or 0,0)" in text
    assert "rebuild it Release" in text
    assert "cpupower frequency-set -g performance" in text
    assert "busy_read is 0" in text
    assert re.search(r"\d+ point\(s\) failed", text)
    assert warnings_for([r for r in records if r["status"] == "ok" and r["latency_us"] and
                         (r["latency_us"]["p99"] or 0) <= 5 * (r["latency_us"]["p50"] or 1)],
                        {"agent": {"build_type": "Release"}}) == []


def test_svg_export_writes_each_plot(tmp_path, capsys):
    from mwperf.cli.main import main
    from mwperf.results.rundir import RunDir

    rundir = RunDir(tmp_path).create()
    for r in fixture_records():
        rundir.append(r)
    assert main(["report", str(tmp_path), "--format", "svg"]) == 0
    files = capsys.readouterr().out.split()
    ids = [chart_id for _, chart_id, _ in plot_svgs(fixture_records())]
    assert [f.rsplit("/", 1)[1] for f in files] == [f"{i}.svg" for i in ids]
    for f in files:
        svg = open(f).read()
        assert svg.startswith('<svg xmlns="http://www.w3.org/2000/svg"')
        assert 'fill="none" stroke="#999"' in svg or 'class="cell"' in svg  # styled without the page's CSS
    assert main(["report", str(tmp_path), "--point", "999"]) == 2
    assert "--point 999: no such point" in capsys.readouterr().err
