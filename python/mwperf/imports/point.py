"""One point read from another tool's output, before it becomes a record."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["ImportedPoint", "NUM", "BadValue", "checked"]

#: A number as the tools print it.
NUM = r"[-+]?\d+(?:\.\d+)?"


class BadValue(ValueError):
    """A value no measurement can have (negative, not finite), at ``line`` of the file."""

    def __init__(self, line: int, value: str, reason: str):
        self.line, self.value, self.reason = line, value, reason
        super().__init__(f"line {line}: {value}: {reason}")


def checked(text: str, line: int, column: str) -> float:
    """``text`` as a number; BadValue when it is not finite or negative (no
    count, rate, size or time is). ValueError when it is no number at all."""
    value = float(text)
    if not math.isfinite(value):
        raise BadValue(line, text.strip(), f"not a finite number (column '{column}')")
    if value < 0:
        raise BadValue(line, text.strip(), f"negative (column '{column}')")
    return value


@dataclass
class ImportedPoint:
    mode: str  # latency | throughput
    size: int
    latency: dict = field(default_factory=dict)  # µs, mean, std, min, max, p50 ... p999999 (+ count)
    packets: int | None = None
    pps: float | None = None
    mbps: float | None = None
    lost: int | None = None
    note: str | None = None
    section: str | None = None  # the title of the table it came from
    line: int | None = None  # where in the file (1-based)
