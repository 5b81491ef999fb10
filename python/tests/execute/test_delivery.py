"""execute/delivery.py: what subscribers counted against what was sent, with
counts the test sets (the fake agent's spoofed faults in test_runner.py and
test_scenario_run.py take it end to end)."""

from __future__ import annotations

import pytest

from mwperf.errors import PointFailed
from mwperf.execute.delivery import check_delivery


def publisher(p: int, received: int, span: int) -> dict:
    return {"publisher": p, "received": received, "seq_span": span}


def test_each_publishers_numbers_are_bounded_by_what_it_sent():
    """A flow of two publishers (700 and 300 sent): in all, no more than 1000
    arrive, each one's sequence numbers stay below its own count."""
    fine = {"received": 1000, "seq_span": 700, "per_publisher": [publisher(0, 700, 700), publisher(1, 300, 300)]}
    check_delivery([fine, fine], 1000, ["a.sub0", "a.sub1"], [700, 300])
    cases = [
        # publisher 1's numbers past its 300, though all is below 1000 and 700
        ({**fine, "per_publisher": [publisher(0, 700, 700), publisher(1, 300, 650)]},
         "a.sub1: publisher 1's sequence number 649 past the 300 it sent"),
        ({**fine, "received": 990, "per_publisher": [publisher(0, 390, 390), publisher(1, 600, 300)]},
         "a.sub1: received 600 samples of publisher 1's 300 sent"),
        ({**fine, "seq_span": 701}, "a.sub1: a sequence number 700 past the 700 sent"),  # the highest publisher's
        ({**fine, "received": 1001}, "a.sub1: received 1001 samples of 1000 sent"),
    ]
    for bad, error in cases:
        with pytest.raises(PointFailed) as err:
            check_delivery([fine, bad], 1000, ["a.sub0", "a.sub1"], [700, 300])
        assert str(err.value).startswith(error + ": messages that are not this publisher's reached it (spoofed?)")
    # a publisher whose count is unknown bounds nothing of its own; the total still holds
    check_delivery([cases[0][0]], 1000, None, [700, None])
    with pytest.raises(PointFailed):
        check_delivery([{**fine, "received": 1001}], 1000, None, [700, None])
