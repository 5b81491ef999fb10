"""The headline (mwperf.export.ranking): per mode and size the middlewares
ranked on the mode's figure, with the places each cannot be told from and
its ratio to the floor, on records made here with known figures and
intervals; the terminal's tables of it (golden, from the fixture records)."""

import json

import pytest

from conftest import FIXTURES, check_golden, typed, typed_all
from floor_docs import doc
from mwperf.export.floor import Anchors
from mwperf.export.ranking import headline_sections, places_text, rankings
from mwperf.export.tables import render_markdown, render_text
from mwperf.model.upgrade import blank


def record(mw, mode="latency", size=64, p50=None, ci=None, mbps=None, loss=0.0, rate=None, received=None,
           scheduled=None, status="ok", repetition=None):
    return typed({**blank(), "mw": mw, "mode": mode, "size": size, "status": status, "point": 0,
                  "error": None if status == "ok" else "agent hung", "subscribers": 1, "subscribers_as": "processes",
                  "cpu": {"pub": 0, "sub": 1, "placement": "cross-core"}, "wait": "block", "rate_hz": rate,
                  "latency_us": {"count": 1000, "p50": p50, "p99": None if p50 is None else 3 * p50, "p50_ci": ci,
                                 "ci_confidence": 0.95, "ci_method": "woodruff-batch-means"},
                  "mbps": mbps, "loss_rate": loss, "received": received, "scheduled": scheduled,
                  "repetition": repetition})


def places(ranking):
    return [(e.label, e.place, e.same, e.unknown) for e in ranking.entries]


def test_ranked_lowest_p50_first_each_with_the_places_it_cannot_be_told_from():
    (ranking,) = rankings([record("c", p50=30.0, ci=[29.0, 31.0]), record("a", p50=20.0, ci=[19.0, 21.0]),
                           record("d", p50=25.0), record("b", p50=20.5, ci=[20.0, 22.0]),
                           record("e", status="failed")])
    assert places(ranking) == [("a", 1, (2,), (3,)),  # a and b overlap; d has no interval and is in neither
                               ("b", 2, (1,), (3,)),
                               ("d", 3, (), (1, 2, 4)),
                               ("c", 4, (), (3,)),  # apart from a and b
                               ("e", 5, (), ())]
    assert ranking.entries[-1].failed == "agent hung"
    assert places_text((1, 2, 3, 5, 7, 8)) == "1-3, 5, 7-8"


def test_throughput_highest_first_rate_on_what_was_delivered_then_its_p50():
    (tput,) = rankings([record("a", "throughput", mbps=500.0), record("b", "throughput", mbps=900.0, loss=0.1)])
    assert [e.label for e in tput.entries] == ["b", "a"]
    assert tput.entries[0].figures["loss"].value == 0.1
    (rate,) = rankings([record("a", "rate", rate=100.0, p50=30.0, ci=[29.0, 31.0], received=990, scheduled=1000),
                        record("b", "rate", rate=100.0, p50=44.0, ci=[42.0, 47.0], received=1000, scheduled=1000),
                        record("c", "rate", rate=100.0, p50=40.0, ci=[38.0, 45.0], received=1000, scheduled=1000),
                        record("d", "rate", rate=100.0, p50=60.0, ci=[59.0, 61.0], received=1000, scheduled=1000)])
    # all delivered: in the order of their p50, not told apart where neither tells them apart; 99 % delivered
    # is last, told apart from the others by its p50 alone
    assert [(e.label, e.same, e.unknown) for e in rate.entries] == [
        ("c", (2,), ()), ("b", (1,), ()), ("d", (), ()), ("a", (), ())]
    assert rate.where == "64 B at 100 Hz"


def test_launches_of_a_point_are_one_entry_and_each_row_has_its_ratio_to_the_floor():
    launches = [record("a", p50=v, repetition=i) for i, v in enumerate((27.0, 24.0, 30.0))]
    (ranking,) = rankings(launches + [record("b", p50=12.0, ci=[11.0, 13.0])], Anchors(doc()))
    a = next(e for e in ranking.entries if e.label == "a")
    assert len(a.launches) == 3 and a.figures["p50"].kind == "launches"
    assert (a.figures["p50"].value, a.figures["p50"].low, a.figures["p50"].high) == (27.0, 24.0, 30.0)
    assert [(e.label, e.floor) for e in ranking.entries] == [("b", "2.0"), ("a", "4.5")]  # over the floor's 6.0 µs


def test_a_series_is_named_by_its_middleware_unless_two_share_it():
    two = [typed({**r.json, "reliability": how}) for r, how in ((record("a", p50=20.0), "reliable"),
                                                                 (record("a", p50=30.0), "best-effort"),
                                                                 (record("b", p50=25.0), "reliable"))]
    assert [e.label for e in rankings(two)[0].entries] == ["a (reliable)", "b", "a (best-effort)"]


def fixture():
    records = [json.loads(line) for name in ("results.jsonl", "results-extended.jsonl")
               for line in (FIXTURES / name).read_text().splitlines() if line.strip()]
    return typed_all(records)


def test_the_terminals_headline_golden():
    sections = headline_sections(fixture(), Anchors(doc()))
    assert [s.mode for s in sections] == ["headline-latency", "headline-throughput", "headline-rate"]
    check_golden("headline.txt", render_text(sections))
    check_golden("headline.md", render_markdown(sections))


@pytest.mark.parametrize("mode", ["burst"])
def test_modes_it_does_not_rank_have_no_headline(mode):
    assert headline_sections([record("a", mode, p50=20.0)]) == []
