"""Progress of a run or sweep on stderr: point i/N, the point in flight, a bar
and the ETA.

On a terminal, rich draws a live bar (``━━━━━╺━━━━ [3/12] ETA 1m20s udp
latency 64 B``) under the lines of the finished points. Anywhere else (a
pipe, a file, CI's log) every point is one plain line, written in two parts
so the log shows the point in flight: ``#####--------------- ETA  1m20s
[3/12] LABEL ... SUMMARY``; no cursor movement, no colour.

The ETA scales what is left of the plan (warm-up + duration + start-up of each
point still to run) by how long the finished points really took against their
plan, so start-up costs (DDS discovery) and early stops (adaptive duration)
correct it as the run goes.
"""

from __future__ import annotations

import atexit
import time
from typing import Any, Callable, TextIO

from mwperf.display import printable, shown, unfiltered

__all__ = ["Progress", "format_eta", "POINT_OVERHEAD_S"]

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


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class Progress:
    """One line per finished point; a live bar below them on a terminal."""

    def __init__(self, stream: TextIO, planned_s: list[float], *, clock: Callable[[], float] = time.monotonic,
                 live: bool | None = None):
        self.stream = stream
        self.planned = [p + POINT_OVERHEAD_S for p in planned_s]
        self.clock = clock
        self.done = 0
        self.spent = 0.0          # wall time of the finished points
        self.spent_planned = 0.0  # their plan
        self._started = 0.0
        self._label = ""
        self._live = _is_terminal(stream) if live is None else live
        self._bar: Any = None  # rich's Progress, on a terminal, while points are left
        self._task: Any = None

    @property
    def total(self) -> int:
        return len(self.planned)

    def eta_s(self) -> float:
        left = sum(self.planned[self.done:])
        scale = self.spent / self.spent_planned if self.spent_planned > 0 else 1.0
        return left * scale

    def bar(self) -> str:
        """The bar of a plain line."""
        filled = BAR_WIDTH * self.done // self.total if self.total else BAR_WIDTH
        return "#" * filled + "-" * (BAR_WIDTH - filled)

    def _status(self) -> str:
        return f"[{self.done + 1}/{self.total}] ETA {format_eta(self.eta_s())} {self._label}"

    def _rich(self):
        """rich's live bar, made on the first point (on a terminal only)."""
        if self._bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, Progress as RichProgress, TextColumn, TimeElapsedColumn

            # the bar's own cursor control reaches the terminal (its labels are printable already)
            console = Console(file=unfiltered(self.stream), highlight=False, markup=False, emoji=False)
            self._bar = RichProgress(BarColumn(bar_width=BAR_WIDTH), TextColumn("{task.description}", markup=False),
                                     TimeElapsedColumn(), console=console, auto_refresh=False, transient=True)
            self._task = self._bar.add_task("", total=self.total)
            self._bar.start()
            atexit.register(self._cursor_back)  # an interrupted run still gets its cursor back
        return self._bar

    def start(self, label: str) -> None:
        self._started = self.clock()
        self._label = shown(label, 200)  # a plan's text: its escapes and markup never reach the terminal
        if self._live:
            bar = self._rich()
            bar.update(self._task, completed=self.done, description=self._status())
            bar.refresh()
        else:
            self.stream.write(f"{self.bar()} ETA {format_eta(self.eta_s()):>6} [{self.done + 1}/{self.total}] "
                              f"{label} ... ")
            self.stream.flush()

    def finish(self, summary: str) -> None:
        self.spent += self.clock() - self._started
        self.spent_planned += self.planned[self.done]
        self.done += 1
        if self._live:
            bar = self._rich()
            bar.console.print(f"[{self.done}/{self.total}] {self._label} ... {printable(summary)}")
            bar.update(self._task, completed=self.done)
            bar.refresh()
            if self.done >= self.total:
                self.close()
        else:
            self.stream.write(summary + "\n")
            self.stream.flush()

    def _cursor_back(self) -> None:
        if self._bar is not None:
            self._bar.console.show_cursor(True)

    def close(self) -> None:
        """Take the live bar off the terminal (idempotent)."""
        if self._bar is not None:
            bar, self._bar = self._bar, None
            bar.stop()
