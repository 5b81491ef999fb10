"""Budgets: units, verdicts against values set in the records (each
record five launches of a point of its own, unless said), "not measurable"
for figures a point cannot have, "cannot decide" with too few launches or
launches on both sides of a limit, and bad files refused naming the key and
the value."""

import json

import pytest

from conftest import FIXTURES, typed
from edited import changed
from mwperf.analysis.budgets import CANNOT_DECIDE, HOLDS, NOT_MEASURABLE, VIOLATED, evaluate, parse_budgets
from mwperf.errors import PlanError


def record(**changes):
    return changed(json.loads((FIXTURES / "results.jsonl").read_text().splitlines()[0]), **changes)  # udp latency 64 B


def launched(records, launches=5):
    """Each record ``launches`` launches of a point of its own (a run each)."""
    return [({**r, "run_id": f"run{i}", "repetition": k}) for i, r in enumerate(records) for k in range(launches)]


def verdicts(budgets: dict, *records, host=None, launches=5):
    return [(c.limit.name if c.limit else None, c.verdict) for c in
            evaluate(parse_budgets(budgets, "b.yaml"), [(typed(r), host) for r in launched(records, launches)])]


def test_limits_take_the_fields_units():
    r = record(latency_us__p99=1500.0, loss_rate=0.002, rss_kb__sub=30 * 1024, discovery_ms=800.0, loop_rate=None)
    assert verdicts({"budgets": [{"p99": "<= 2ms", "loss": "<= 0.1%", "rss_kb.sub": "<= 20MiB",
                                  "discovery_ms": "<= 1s", "latency_us.p50": "< 35"}]}, r) == [
        ("p99", HOLDS), ("loss", VIOLATED), ("rss_kb.sub", VIOLATED), ("discovery_ms", HOLDS),
        ("latency_us.p50", HOLDS)]  # the fixture's p50 is 34.911 us


def test_a_figure_the_point_cannot_have_is_not_measurable_never_a_pass():
    few = record(latency_us__count=5000, latency_us__p999999=40.0)  # as an agent that filled it in would
    assert verdicts({"budgets": [{"p99.9999": "<= 1ms", "p99": "<= 1s", "loop_rate": ">= 0.99"}]}, few) == [
        ("p99.9999", NOT_MEASURABLE), ("p99", HOLDS), ("loop_rate", NOT_MEASURABLE)]


def test_match_selects_the_points_and_a_failed_point_violates():
    a, b = record(size=1024), record(size=64, mw="tcp")
    failed = record(size=1024, status="failed", error="no peer matched")
    got = verdicts({"budgets": [{"match": {"size": "1k", "mw": ["udp", "x"]}, "p50": "<= 1ms"}]}, a, b, failed)
    assert got == [("p50", HOLDS), ("p50", VIOLATED)]
    assert verdicts({"budgets": [{"match": {"host": "robot"}, "p50": "<= 1ms"}]}, a, host="robot") == [("p50", HOLDS)]
    assert verdicts({"budgets": [{"match": {"mw": "zenoh"}, "p50": "<= 1ms"}]}, a) == [(None, "no point matched")]


def test_cpu_per_sample_and_cpu_percent_are_derived():
    r = record(sent=1000, cpu_s__pub={"user": 0.01, "sys": 0.02})
    (check,) = evaluate(parse_budgets({"budgets": [{"cpu_per_sample.pub": "<= 31"}]}, "b"),
                        [(typed(x), None) for x in launched([r])])
    assert (check.verdict, check.value, check.launches) == (HOLDS, pytest.approx(30.0), 5)


def test_launches_decide_and_too_few_cannot():
    r = record(latency_us__p99=1500.0)
    assert verdicts({"budgets": [{"p99": "<= 2ms"}]}, r, launches=4) == [("p99", CANNOT_DECIDE)]
    (check,) = evaluate(parse_budgets({"budgets": [{"p99": "<= 2ms"}]}, "b"), [(typed(x), None) for x in launched([r], 1)])
    assert check.note == "cannot decide: 1 launches, need 5"  # one launch was a pass before
    spread = [changed(x, latency_us__p99=p99) for x, p99 in zip(launched([r]), [1500.0, 2500, 1800, 2100, 1900])]
    (check,) = evaluate(parse_budgets({"budgets": [{"p99": "<= 2ms"}]}, "b"), [(typed(x), None) for x in spread])
    assert check.verdict == CANNOT_DECIDE and "3 of 5 launches meet it" in check.note and check.value == 1900.0
    above = [changed(x, latency_us__p99=p99) for x, p99 in zip(launched([r]), [2500.0, 2600, 2200, 2100, 3000])]
    assert [c.verdict for c in evaluate(parse_budgets({"budgets": [{"p99": "<= 2ms"}]}, "b"),
                                        [(typed(x), None) for x in above])] == [VIOLATED]


BAD = [
    ({"budget": []}, None, "expected one key, 'budgets:'"),
    ({"budgets": [{"p99x": "<= 1ms"}]}, "budgets[0].p99x: <= 1ms", "not a numeric figure"),
    ({"budgets": [{"mw": "<= 1"}]}, "budgets[0].mw: <= 1", "not a numeric figure"),
    ({"budgets": [{"p99": "2ms"}]}, "budgets[0].p99: 2ms", "expected OP VALUE"),
    ({"budgets": [{"p99": "<= 2parsecs"}]}, "budgets[0].p99: <= 2parsecs", "unknown duration unit"),
    ({"budgets": [{"loss": "<= lots"}]}, "budgets[0].loss: <= lots", "not a number or a percentage"),
    ({"budgets": [{"match": {"mww": "udp"}, "p99": "<= 1ms"}]}, "budgets[0].match.mww: udp", "no such field"),
    ({"budgets": [{"match": {"size": "1parsec"}, "p99": "<= 1ms"}]}, "budgets[0].match.size: 1parsec", "unit"),
    ({"budgets": [{"match": {"mw": "udp"}}]}, "budgets[0]", "no figure to check"),
]


@pytest.mark.parametrize("doc, named, reason", BAD, ids=[str(b[1]) for b in BAD])
def test_a_bad_budgets_file_is_refused_naming_key_and_value(doc, named, reason):
    with pytest.raises(PlanError) as err:
        parse_budgets(doc, "b.yaml")
    text = str(err.value)
    assert text.startswith("b.yaml: ") and reason in text
    if named:
        assert named in text
