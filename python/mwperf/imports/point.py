"""One point read from another tool's output, before it becomes a record."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

__all__ = ["ImportedPoint", "NUM", "BadValue", "checked", "checked_size", "MAX_VALUE", "MAX_SIZE"]

#: A number as the tools print it.
NUM = r"[-+]?\d+(?:\.\d+)?"
#: Above any measurement a tool prints (µs: 31 years; counts, rates, Mbit/s).
MAX_VALUE = 1e15
#: Above any message a middleware carries (Perftest's own limit is 2^31 - 1 bytes).
MAX_SIZE = 1 << 32


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
        raise BadValue(line, _short(text), f"not a finite number (column '{column}')")
    if value < 0:
        raise BadValue(line, _short(text), f"negative (column '{column}')")
    if value > MAX_VALUE:
        raise BadValue(line, _short(text), f"larger than any measurement (column '{column}')")
    return value


def checked_size(text: str, line: int, column: str = "size") -> float:
    """A message size: ``checked``, and no larger than any message is (MAX_SIZE)."""
    if math.isfinite(float(text)) and float(text) > MAX_SIZE:
        raise BadValue(line, _short(text), f"larger than any message ({MAX_SIZE >> 30} GiB, column '{column}')")
    return checked(text, line, column)


def _short(text: str) -> str:
    text = text.strip()
    return text if len(text) <= 24 else f"{text[:12]}...({len(text)} digits)"


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
