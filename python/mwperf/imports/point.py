"""One point read from another tool's output, before it becomes a record."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["ImportedPoint", "NUM"]

#: A number as the tools print it.
NUM = r"[-+]?\d+(?:\.\d+)?"


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
