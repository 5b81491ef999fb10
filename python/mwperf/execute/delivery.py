"""What a point's subscribers counted against what its publishers sent: a
subscriber that took more samples than were sent, or sequence numbers past
the last sent, got messages that are not its publishers' (spoofed, or
another run's), and none of its numbers can be trusted. Every header's tag
under the point's key keeps such messages out (agent/src/core/header.h);
this is the controller's check that none got in."""

from __future__ import annotations

from typing import Sequence

from mwperf.errors import PointFailed

__all__ = ["check_delivery"]


def _count(value) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def check_delivery(results: Sequence[dict | None], sent, names: list[str] | None = None,
                   each_sent: list | None = None) -> None:
    """PointFailed when a subscriber took more samples than were sent, or
    sequence numbers past the last sent: messages that are not its
    publishers' reached it, and none of its numbers can be trusted.
    ``sent``: all its publishers' together; ``each_sent``: each publisher's
    (a scenario's flow of several), which bounds each one's own sequence
    numbers (``per_publisher``) and the highest of them (``seq_span``);
    ``names``: each subscriber's (default sub, sub1, ...)."""
    total = _count(sent)
    if total is None:
        return
    each = [_count(s) for s in each_sent] if each_sent else []
    known = [n for n in each if n is not None]
    highest = max(known) if known and len(known) == len(each) else total
    for index, result in enumerate(results):
        received, span = _count((result or {}).get("received")), _count((result or {}).get("seq_span"))
        name = names[index] if names else "sub" if index == 0 else f"sub{index}"
        if received is not None and received > total:
            raise PointFailed(f"{name}: received {received} samples of {total} sent: messages that are not this "
                              "publisher's reached it (spoofed?); its numbers are not trusted")
        if span is not None and span > highest:
            raise PointFailed(f"{name}: a sequence number {span - 1} past the {highest} sent: messages that are not "
                              "this publisher's reached it (spoofed?); its numbers are not trusted")
        per = (result or {}).get("per_publisher")
        for entry in per if isinstance(per, list) else ():
            p = entry.get("publisher") if isinstance(entry, dict) else None
            mine = each[p] if isinstance(p, int) and not isinstance(p, bool) and 0 <= p < len(each) else None
            if mine is None:
                continue
            got, numbers = _count(entry.get("received")), _count(entry.get("seq_span"))
            if got is not None and got > mine:
                raise PointFailed(f"{name}: received {got} samples of publisher {p}'s {mine} sent: messages that are "
                                  "not this publisher's reached it (spoofed?); its numbers are not trusted")
            if numbers is not None and numbers > mine:
                raise PointFailed(f"{name}: publisher {p}'s sequence number {numbers - 1} past the {mine} it sent: "
                                  "messages that are not this publisher's reached it (spoofed?); its numbers are "
                                  "not trusted")
