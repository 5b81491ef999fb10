"""report.html and its figures: self-contained, every section there, the
plotted values equal to results.jsonl, small multiples with shared axes, a
log/linear switch, warnings with advice (golden page and golden plotted data
from the fixture records)."""

import copy
import json
import re
import struct
from html.parser import HTMLParser

import pytest

from conftest import FIXTURES, check_golden, typed, typed_all
from mwperf.export.answer_figures import answer_figures
from mwperf.export.figures import point_figures, run_figures, series_name
from mwperf.export.ranking import rankings
from mwperf.export.html import render_html, warnings_for


def fixture_records(name="results.jsonl"):
    return [json.loads(l) for l in (FIXTURES / name).read_text().splitlines() if l.strip()]


def all_records():
    return fixture_records() + fixture_records("results-extended.jsonl")


class Page(HTMLParser):
    """Section ids, figure divs, what the page would fetch, the scripts."""

    def __init__(self):
        super().__init__()
        self.sections: list[str] = []
        self.figures: list[str] = []
        self.external: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "section":
            self.sections.append(a.get("id"))
        if tag == "div" and "figure" in (a.get("class") or "").split():
            self.figures.append(a["id"].removeprefix("figure-"))
        if tag == "script":
            self.scripts += 1
        for key in ("src", "href", "srcset", "data"):
            if key in a and not (key == "href" and a[key].startswith("#")):  # a place on the page fetches nothing
                self.external.append(a[key])


def parse(html):
    p = Page()
    p.feed(html)
    return p


def traces(fig) -> list[dict]:
    """The traces of a Plotly figure as plain JSON (what the page hands plotly.js)."""
    return json.loads(fig.to_json())["data"]


def plotted_equals_records(plotted: dict[str, list[dict]], records: list[dict]) -> int:
    """Every plotted value of the figures the page holds is the figure of an
    ok record of results.jsonl (medians of one: the fixtures have no
    repetitions). ``plotted``: {figure id: [trace as JSON]}. The number of values checked."""
    ok = [r for r in records if r["status"] == "ok"]
    checked = 0
    for t in plotted.get("latency-size", []):  # one trace per percentile and panel
        key = {"p50": "p50", "p90": "p90", "p99": "p99", "p99.99": "p9999"}[t["name"]]
        for x, y, custom in zip(t["x"], t["y"], t["customdata"]):
            (r,) = [r for r in ok if r["mode"] == "latency" and series_name(typed(r)) == custom[2] and r["size"] == x]
            assert r["latency_us"][key] == pytest.approx(y)
            assert custom[0] == (f"{r['latency_us']['count']:,}" if r["latency_us"]["count"] else "unknown")
            checked += 1
    for mode in ("latency", "throughput", "rate"):  # the headline's figures: every middleware on one axis
        for t in plotted.get(f"answer-{mode}", []):
            if t["name"].startswith(("floor", "memcpy")):
                continue
            for x, y, custom in zip(t["x"], t["y"], t["customdata"]):
                name, metric, size = custom[0], custom[4], custom[5]
                (r,) = [r for r in ok if r["mode"] == mode and series_name(typed(r)) == name and r["size"] == size
                        and (r["rate_hz"] if mode == "rate" else r["size"]) == x]
                want = {"p50": (r["latency_us"] or {}).get("p50"), "p99": (r["latency_us"] or {}).get("p99"),
                        "mbps": r["mbps"], "loss": None if r["loss_rate"] is None else 100 * r["loss_rate"]}[metric]
                assert want == pytest.approx(y), (mode, name, metric, x)
                checked += 1
    for t in plotted.get("rate-loss", []):
        for size, row, crow in zip(t["y"], t["z"], t["customdata"]):
            for hz, v, custom in zip(t["x"], row, crow):
                matches = [r for r in ok if r["mode"] == "rate" and series_name(typed(r)) == t["name"]
                           and f"{r['rate_hz']:g}" == hz and _size_label(r["size"]) == size]
                if v is None:
                    assert matches == []
                else:
                    (r,) = matches
                    assert 100 * r["loss_rate"] == pytest.approx(v) and custom[0] == f"{r['sent']:,}"
                    checked += 1
    for t in plotted.get("rate-latency-rate", []):
        size_label, key = t["name"].rsplit(" ", 1)
        for x, y, custom in zip(t["x"], t["y"], t["customdata"]):
            (r,) = [r for r in ok if r["mode"] == "rate" and series_name(typed(r)) == custom[2] and r["rate_hz"] == x
                    and _size_label(r["size"]) == size_label]
            assert r["latency_us"][key] == pytest.approx(y)
            checked += 1
    for t in plotted.get("burst-demand", []):
        for x, y, custom in zip(t["x"], t["y"], t["customdata"]):
            (r,) = [r for r in ok if r["mode"] == "burst" and series_name(typed(r)) == custom[2] and r["demand"] == x
                    and _size_label(r["size"]) == t["name"]]
            assert r["samples_per_s"] == pytest.approx(y)
            checked += 1
    return checked


def _size_label(size):
    from mwperf.units import format_size

    return format_size(size)


def every_figure(records):
    """The headline's figures, then the detail's: what the page draws."""
    return answer_figures(rankings(records)) + run_figures(records)


def figures_json(figures) -> dict:
    return {f.id: traces(f.fig) for f in figures}


def test_page_is_self_contained_with_every_section():
    records = all_records()
    html = render_html(typed_all(records), None, "mwperf run fixture", script="/* plotly.js */")
    page = parse(html)
    assert page.sections == ["answer", "warnings", "provenance", "latency", "rate", "burst", "fanout", "resources",
                             "tables"]
    assert page.external == []  # nothing to fetch: no CDN, no file beside it
    assert page.figures == ["answer-latency", "answer-throughput", "answer-rate"] + [
        f.id for f in run_figures(typed_all(records))]
    assert page.scripts == 1 + len(page.figures)  # plotly.js once, then one per figure
    # golden: the page without plotly.js and without the figures' JSON (plotly's version writes it); the
    # figures' plotted data have a golden of their own
    skeleton = re.sub(r'(<div id="[^"]+" class="plotly-graph-div"[^>]*></div>).*?</script>', r"\1<script/>",
                      html, flags=re.S)
    check_golden("report.html", skeleton)
    plotted = {fid: [{k: t.get(k) for k in ("name", "x", "y", "z") if k in t} for t in ts]
               for fid, ts in figures_json(every_figure(typed_all(records))).items()}
    check_golden("report-figures.json", json.dumps(plotted, indent=1, sort_keys=True) + "\n")


def test_plotted_values_are_the_records():
    records = all_records()
    assert plotted_equals_records(figures_json(every_figure(typed_all(records))), records) > 60


def test_small_multiples_share_their_axes_and_switch_log_linear():
    figs = {f.id: f.fig for f in run_figures(typed_all(all_records()))}
    lat = figs["latency-size"]
    panels = {t.xaxis for t in lat.data}
    assert len(panels) == len({series_name(typed(r)) for r in all_records() if r["mode"] == "latency"
                               and r["status"] == "ok"})  # one panel per middleware and QoS
    layout = lat.layout
    for axis in ("xaxis", "yaxis"):  # every panel's axis follows one (zoom one, zoom all)
        matches = [layout[f"{axis}{'' if i == 1 else i}"].matches for i in range(1, len(panels) + 1)]
        (anchor,) = set(matches) - {None}
        assert matches.count(None) == 1 and matches.index(None) + 1 == int(anchor[1:] or 1)
    assert all(layout[f"yaxis{'' if i == 1 else i}"].type == "log" for i in range(1, len(panels) + 1))
    (menu,) = layout.updatemenus
    assert [b.label for b in menu.buttons] == ["log y", "linear y"]
    assert menu.buttons[1].args[0] == {f"yaxis{'' if i == 1 else i}.type": "linear"
                                       for i in range(1, len(panels) + 1)}
    # one legend entry per percentile: hiding p99 hides it in every panel
    assert [t.name for t in lat.data if t.showlegend] == ["p50", "p90", "p99", "p99.99"]
    assert {t.legendgroup for t in lat.data if t.name == "p99"} == {"p99"}


def test_percentiles_without_enough_samples_are_not_plotted():
    """p99.99 needs 10^4 samples: only the points that have them show it."""
    figs = {f.id: f.fig for f in run_figures(typed_all(all_records()))}
    shown = {(c[2], x) for t in figs["latency-size"].data if t.name == "p99.99" for c, x in zip(t.customdata, t.x)}
    assert shown == {(series_name(typed(r)), r["size"]) for r in all_records() if r["mode"] == "latency"
                     and r["status"] == "ok" and r["latency_us"]["count"] >= 10_000}
    assert ("cyclonedds (reliable, keep-last:10, waitset, udp)", 1024) not in shown  # 7883 samples


def test_hover_names_the_exact_value_and_its_samples():
    figs = {f.id: f.fig for f in run_figures(typed_all(all_records()))}
    hover = figs["latency-size"].data[0].hovertemplate
    assert "%{y:.4g} µs" in hover and "%{customdata[0]} samples" in hover


def test_figures_of_issue_13_and_15():
    figs = {f.id: f.fig for f in run_figures(typed_all(fixture_records("results-extended.jsonl")))}
    burst = figs["burst-demand"]
    assert {t.name for t in burst.data} == {"48", "32"}
    t16 = next(t for t in burst.data if t.name == "48")
    assert list(t16.x) == [10, 110] and list(t16.y) == [500.0, 5496.0]
    fan = figs["fanout"]
    worst_p50 = next(t for t in fan.data if t.name.endswith(" worst") and t.xaxis == "x")
    assert list(worst_p50.x) == [1, 2, 4] and list(worst_p50.y) == [45.0, 60.0, 70.0]
    threads = figs["threads"]
    own = next(t for t in threads.data if t.name == "mwperf's own threads")
    mw = next(t for t in threads.data if t.name == "middleware threads")
    at = list(zip(*own.x)).index(("cyclonedds (reliable, keep-last:10, waitset, udp)", "subscriber"))
    assert (own.y[at], mw.y[at]) == (8.0, 12.0)


def test_point_figures_from_the_kept_samples(tmp_path):
    records = fixture_records()
    r = records[0]
    r["samples_file"] = {"path": "samples/00000.i64", "count": 3000, "time_ordered": True}
    (tmp_path / "samples").mkdir()
    values = [10_000 + (i % 100) * 10 for i in range(3000)]  # ns
    (tmp_path / "samples" / "00000.i64").write_bytes(struct.pack("<3000q", *values))
    hist, time_series = point_figures(tmp_path, typed_all(records), None)
    assert list(hist.fig.data[0].x) == [v / 1000 for v in values]
    assert len(time_series.fig.data[0].x) == 1500  # at most 2000 drawn: every second of 3000
    assert time_series.fig.data[0].y[1] == values[2] / 1000


def test_warnings_say_what_to_do():
    records = fixture_records()
    unpinned = copy.deepcopy(records[0])
    unpinned["cpu"].update(pub=None, sub=None, placement="unpinned")
    run = {"agent": {"build_type": "Debug"}, "governor": "powersave", "sysctl": {"net.core.busy_read": 0}}
    warnings = warnings_for(typed_all(records + [unpinned]), run)
    text = "\n".join(warnings)
    assert "Pin both sides (--cpu 0,1 or 0,0)" in text
    assert "rebuild it Release" in text
    assert "cpupower frequency-set -g performance" in text
    assert "busy_read is 0" in text
    assert re.search(r"\d+ point\(s\) failed", text)
    assert warnings_for(typed_all(r for r in records if r["status"] == "ok" and r["latency_us"] and
                                  (r["latency_us"]["p99"] or 0) <= 5 * (r["latency_us"]["p50"] or 1)),
                        {"agent": {"build_type": "Release"}}) == []


def test_provenance_names_the_license_an_adapter_runs_under():
    run = {"adapters": [{"name": "udp", "version": "linux"},
                        {"name": "connext", "version": "Connext DDS 6.1.2.21",
                         "license": "RTI Software License for Non-Commercial Use #4040"}]}
    html = render_html(typed_all(all_records()), run, "mwperf run fixture", script="")
    assert "<th class=\"l\">connext license</th><td class=\"l\">RTI Software License for Non-Commercial Use #4040" in html
    assert "udp license" not in html
