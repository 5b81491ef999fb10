"""Where one point's time goes, beyond the publisher's run.

The controller marks each step of a point's protocol on its monotonic clock;
the record keeps the phases between the marks (``phases``, seconds):

* ``setup_s``: the placement and the service made (namespaces, RouDi, a rosmaster);
* ``start_s``: the subscribers started until each said ``ready`` (process start, the middleware opened);
* ``match_s``: the publisher started until it is ``ready`` and every subscriber ``matched`` (discovery);
* ``run_s``: ``go`` until the publisher's ``result`` (its warm-up and measurement, its last pongs);
* ``drain_s``: ``stop SENT`` until the last subscriber's ``result`` (what is in flight drained);
* ``close_s``: the publisher told to ``close`` until every agent exited (a reliable writer's linger);
* ``teardown_s``: every process group killed, the service and placement taken down;
* ``total_s``: the point from start to end, and ``overhead_s`` = ``total_s`` - ``run_s``.

A phase the point never reached (it failed before) is null.
"""

from __future__ import annotations

import time

__all__ = ["PhaseClock", "PHASES"]

#: The marks in protocol order; phase i lies between mark i - 1 (the start for i = 0) and mark i.
_MARKS = ("placed", "ready", "matched", "result", "drained", "closed", "end")
PHASES = ("setup_s", "start_s", "match_s", "run_s", "drain_s", "close_s", "teardown_s")


class PhaseClock:
    """The marks of one point's protocol (time.monotonic())."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.marks: dict[str, float] = {}

    def mark(self, name: str) -> None:
        if name not in _MARKS:
            raise ValueError(f"unknown phase mark {name!r}")
        self.marks[name] = time.monotonic()

    def as_dict(self) -> dict:
        """Seconds per phase; null for one whose ends were not both reached."""
        out: dict[str, float | None] = {}
        before: float | None = self.start
        for phase, name in zip(PHASES, _MARKS):
            at = self.marks.get(name)
            out[phase] = _seconds(at - before) if at is not None and before is not None else None
            before = at
        end = self.marks.get("end")
        out["total_s"] = _seconds(end - self.start) if end is not None else None
        run = out["run_s"]
        out["overhead_s"] = _seconds(out["total_s"] - run) if out["total_s"] is not None and run is not None else None
        return out


def _seconds(value: float) -> float:
    return round(max(value, 0.0), 4)
