"""The max-rate search (mwperf.execute.search) on simulated links whose
capacity the test sets: the answer lies within 10 % below what the
criterion allows, in no more probes than the worst case says; a search
resumed from an interrupted run's records goes on as if never stopped; the
judge counts unsent samples as missing; bad criteria are one UsageError.
Noisy probes: python/tests/stats/test_probing.py."""

import math

import pytest

from conftest import typed
from mwperf.errors import UsageError
from mwperf.execute.search import Cell, Criterion, Search, judge, parse_criterion, worst_case_probes
from mwperf.model.record import Record
from mwperf.plan.options import PlannedPoint, TestPoint


def link_record(rate: float, capacity: float, *, sent_share: float = 1.0, p99: float = 50.0) -> dict:
    """A rate-mode record of 1000 s at ``rate`` over a link carrying ``capacity`` samples/s."""
    scheduled = int(rate * 1000)
    sent = int(scheduled * sent_share)
    received = min(sent, int(capacity * 1000))
    return typed({"status": "ok", "scheduled": scheduled, "sent": sent, "received": received,
                  "loss_rate": (sent - received) / sent, "latency_us": {"p99": p99}})


def search(crit: Criterion, capacity: float, start: float) -> tuple[float | None, int, Cell]:
    cell = Cell(crit, start)
    while not cell.done:
        rate = cell.next
        met, _, _ = judge(link_record(rate, capacity), crit)
        cell.add(rate, met)
    return cell.answer()[0], len(cell.probes), cell


@pytest.mark.parametrize("capacity", [3.7, 117.0, 1172.6, 9000.0, 250_000.0])
@pytest.mark.parametrize("start", [10.0, 1000.0, 500_000.0])
def test_answer_within_ten_percent_below_the_limit(capacity, start):
    crit = Criterion(loss=0.01, step=0.05, bounds_hz=(1.0, 1e6))
    limit = capacity / (1 - crit.loss)  # the highest rate whose shortfall is 1 %
    answer, probes, _ = search(crit, capacity, start)
    assert answer is not None
    assert limit / 1.1 <= answer <= limit * 1.001, (answer, limit)
    assert probes <= worst_case_probes(crit)


def test_answer_at_the_bounds_says_so():
    crit = Criterion(loss=0.01, bounds_hz=(10.0, 1000.0))
    answer, _, cell = search(crit, 5000.0, 100.0)
    assert answer == 1000.0 and "at least" in cell.answer()[2]
    answer, _, cell = search(crit, 2.0, 100.0)
    assert answer is None and "lowest rate" in cell.answer()[2]


def test_worst_case_is_not_exceeded():
    crit = Criterion(loss=0.0, step=0.05, bounds_hz=(1.0, 1e6))
    worst = worst_case_probes(crit)
    assert worst == 30  # 3 x 9 + 3: 2^9 > ln 1e6 / ln 1.05
    assert max(search(crit, c, 1000.0)[1] for c in [1.5 * 1.37 ** k for k in range(45)]) <= worst


def _run(search: Search, capacity: float, stop_after: int | None = None) -> list[dict]:
    records = []
    for job in search:
        record = {**link_record(job.point.rate_hz, capacity).json, "rate_hz": job.point.rate_hz}
        records.append(search.on_record(job, record))
        if stop_after is not None and len(records) == stop_after:
            break  # interrupted
    return records


def test_a_resumed_search_goes_on_where_it_stopped():
    crit = Criterion(loss=0.01)
    cells = [PlannedPoint(None, TestPoint(0, "udp", "rate", (("size", 1024), ("rate", start)))) for start in (1000.0, 50.0)]
    whole = _run(Search(cells, crit), 3000.0)
    first = _run(Search(cells, crit), 3000.0, stop_after=7)
    rest = _run(Search(cells, crit, earlier=[Record.from_json(r) for r in first]), 3000.0)
    assert [r["rate_hz"] for r in first + rest] == [r["rate_hz"] for r in whole]
    assert [r["search"] for r in first + rest] == [r["search"] for r in whole]
    assert sum(r["search"]["done"] for r in whole) == 2


def test_unsent_samples_count_as_missing():
    crit = Criterion(loss=0.01)
    met, why, missing = judge(link_record(1000, 1e9, sent_share=0.9), crit)  # nothing lost, 10 % never sent
    assert not met and math.isclose(missing, 0.1) and "10% of the due samples missing" in why
    assert judge(link_record(1000, 1e9, sent_share=0.995), crit)[0]


def test_p99_and_failed_points():
    crit = Criterion(loss=0.01, p99_us=100.0)
    assert judge(link_record(100, 1e9, p99=90.0), crit)[0]
    met, why, _ = judge(link_record(100, 1e9, p99=120.0), crit)
    assert not met and "p99 120 us > 100 us" in why
    met, why, _ = judge(typed({"status": "failed", "error": "publisher result missing"}), crit)
    assert not met and "publisher result missing" in why


@pytest.mark.parametrize("args, option", [
    (dict(loss=None), "--loss"), (dict(loss="200%"), "--loss"), (dict(loss="%"), "--loss"),
    (dict(loss="nan"), "--loss"), (dict(loss="-1%"), "--loss"), (dict(loss="1%", p99="fast"), "--p99"),
    (dict(loss="1%", step="0"), "--step"), (dict(loss="1%", bounds="100"), "--bounds"),
    (dict(loss="1%", bounds="1k,10"), "--bounds"),
])
def test_bad_criteria(args, option):
    with pytest.raises(UsageError) as exc:
        parse_criterion(**args)
    assert exc.value.option == option


def test_criterion_parsed():
    crit = parse_criterion("1%", "2ms", "10%", "10,100k")
    assert (crit.loss, crit.p99_us, crit.step, crit.bounds_hz) == (0.01, 2000.0, 0.1, (10.0, 100000.0))
