"""A point's headline figure and interval (mwperf.model.headline): the one
function the report ranks on. Records made here with known figures and
intervals: the figure and the interval are the record's own (one launch) or
the median and the range of the launches (repetitions), and "not told apart"
is overlap, or not known."""

import pytest

from conftest import typed
from mwperf.model.headline import Headline, delivered, headline, indistinguishable


def latency(p50, p99=None, p50_ci=None, p99_ci=None, status="ok", why=None):
    return typed({"mode": "latency", "status": status, "latency_us": {
        "count": 10_000, "p50": p50, "p99": p99, "p50_ci": p50_ci, "p99_ci": p99_ci, "ci_confidence": 0.95,
        "ci_method": "woodruff-batch-means", "ci_null": why}})


def test_one_launch_takes_its_own_interval_and_says_which():
    h = headline([latency(20.0, 90.0, [19.0, 21.5], None, why={"p99_ci": "too few samples beyond the quantile"})],
                 "p50")
    assert (h.value, h.low, h.high, h.kind, h.launches) == (20.0, 19.0, 21.5, "within-launch", 1)
    assert h.about == "95 % interval within the launch (woodruff-batch-means)"
    h = headline([latency(20.0, 90.0, [19.0, 21.5], None, why={"p99_ci": "too few samples beyond the quantile"})],
                 "p99")
    assert (h.value, h.low, h.high, h.kind) == (90.0, None, None, "none")
    assert h.about == "no interval (too few samples beyond the quantile)"


def test_launches_give_their_median_and_range():
    launches = [latency(21.0), latency(20.0, p50_ci=[19.9, 20.1]), latency(26.0, p50_ci=[25.9, 26.1])]
    h = headline(launches, "p50")
    assert (h.value, h.low, h.high, h.kind, h.launches) == (21.0, 20.0, 26.0, "launches", 3)
    assert h.about == "lowest to highest of 3 launches (75 % for their median)"
    failed = latency(None, status="failed")
    assert headline([failed], "p50") == Headline(None, None, None, "none", 0, "not measured")
    assert headline(launches[:2] + [failed], "p50").launches == 2  # a failed launch has no figure


def throughput(mbps, loss, rate=None, loss_look=None):
    look = {"p50_ci": None, "p99_ci": None, "batches": 8, "look": 3, "after_s": 2.0, "count": 1000,
            "needed_s": None, "why": {}, "rate": rate, "loss": loss_look}
    return typed({"mode": "throughput", "status": "ok", "mbps": mbps, "loss_rate": loss,
                  "adaptive": {"converged_after_s": 2.0, "at_convergence": look, "last_look": look,
                               "stopped_early": True, "needed_s": None, "needed_note": None}})


def test_a_throughput_point_takes_the_adaptive_stops_last_interval_around_its_figure():
    r = throughput(800.0, 0.02, rate={"est": 100_000.0, "lo": 95_000.0, "hi": 110_000.0},
                   loss_look={"est": 0.03, "lo": 0.01, "hi": 0.04})
    mbps, loss = headline([r], "mbps"), headline([r], "loss")
    assert (mbps.low, mbps.high) == pytest.approx((760.0, 880.0))  # the look's -5 % / +10 % of the final figure
    assert (loss.low, loss.high) == pytest.approx((0.0, 0.03))  # its distances, kept within 0..1
    assert mbps.about == loss.about == "interval within the launch (the adaptive stop's last look)"
    plain = headline([throughput(800.0, 0.0)], "mbps")
    assert (plain.low, plain.kind, plain.about) == (None, "none", "no interval (one launch, none made within it)")


def test_delivered_is_what_arrived_of_what_was_due():
    assert delivered(typed({"mode": "rate", "received": 990, "scheduled": 1000, "rate_hz": 500.0})) == 0.99
    assert delivered(typed({"mode": "rate", "samples_per_s": 450.0, "rate_hz": 500.0})) == 0.9  # no count of due
    assert delivered(typed({"mode": "rate"})) is None


def h(value, low=None, high=None):
    return Headline(value, low, high, "within-launch" if low is not None else "none", 1, "")


@pytest.mark.parametrize("a, b, told", [
    (h(20, 19, 21), h(22, 21.5, 23), False),  # apart
    (h(20, 19, 21), h(22, 20.5, 23), True),  # they meet
    (h(20, 19, 21), h(20.5), True),  # one holds the other's figure: whatever its interval, they meet
    (h(20, 19, 21), h(25), None),  # not known: no interval on one side
    (h(20), h(25), None),
    (h(20), h(20), True),  # equal figures (all delivered, none lost)
    (h(None), h(20, 19, 21), None),
])
def test_indistinguishable_is_overlap_or_not_known(a, b, told):
    assert indistinguishable(a, b) is told and indistinguishable(b, a) is told
