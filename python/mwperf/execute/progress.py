"""Progress of a run or sweep on stderr: point i/N, the point in flight, a bar
and the ETA.

The ETA scales what is left of the plan (warm-up + duration + start-up of each
point still to run) by how long the finished points really took against their
plan, so start-up costs (DDS discovery) and early stops (adaptive duration)
correct it as the run goes.
"""

from __future__ import annotations

import time
from typing import Callable, TextIO

__all__ = ["Progress", "format_eta"]

#: Start-up and teardown of one point (agents, discovery), on top of warm-up + duration.
POINT_OVERHEAD_S = 1.0
BAR_WIDTH = 20


def format_eta(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


class Progress:
    """One line per point: ``#####--------------- ETA  1m20s [3/12] LABEL ... SUMMARY``."""

    def __init__(self, stream: TextIO, planned_s: list[float], *, clock: Callable[[], float] = time.monotonic):
        self.stream = stream
        self.planned = [p + POINT_OVERHEAD_S for p in planned_s]
        self.clock = clock
        self.done = 0
        self.spent = 0.0          # wall time of the finished points
        self.spent_planned = 0.0  # their plan
        self._started = 0.0

    @property
    def total(self) -> int:
        return len(self.planned)

    def eta_s(self) -> float:
        left = sum(self.planned[self.done:])
        scale = self.spent / self.spent_planned if self.spent_planned > 0 else 1.0
        return left * scale

    def bar(self) -> str:
        filled = BAR_WIDTH * self.done // self.total if self.total else BAR_WIDTH
        return "#" * filled + "-" * (BAR_WIDTH - filled)

    def start(self, label: str) -> None:
        self._started = self.clock()
        self.stream.write(f"{self.bar()} ETA {format_eta(self.eta_s()):>6} [{self.done + 1}/{self.total}] {label} ... ")
        self.stream.flush()

    def finish(self, summary: str) -> None:
        self.spent += self.clock() - self._started
        self.spent_planned += self.planned[self.done]
        self.done += 1
        self.stream.write(summary + "\n")
        self.stream.flush()
