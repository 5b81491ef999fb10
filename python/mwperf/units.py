"""Parse the human units of the command line.

Sizes (bytes) follow the Perftest/iperf convention, binary multiples only:

* a plain number is bytes (``32``, ``63000``); ``B`` may follow (``32B``);
* ``k``, ``K``, ``kb``, ``KB``, ``KiB`` (any case) = 1024;
* ``m``, ``M``, ``MB``, ``MiB`` (any case) = 1048576 (2**20);
* ``g``, ``G``, ``GB``, ``GiB`` (any case) = 2**30.

A fraction is allowed when the result is a whole number of bytes (``1.5k`` =
1536). So ``1KB`` is 1024, not 1000: there is no decimal size unit.

Durations: ``ns``, ``us`` (or ``µs``), ``ms``, ``s``, ``m``/``min``, ``h``;
a bare number is seconds (``5`` = ``5s``, ``2.5s``, ``500ms``, ``100us``,
``1m`` = one minute). Values are returned as integer nanoseconds.

Rates (Hz): a positive number, optionally followed by ``k`` (1e3), ``M``
(1e6) or ``G`` (1e9) and/or ``Hz`` (``100``, ``1k``, ``2.5kHz``, ``10000Hz``).
Rate multipliers are decimal (1k = 1000 Hz), unlike sizes.

Every parser has bounds: a value above the most any option takes
(:data:`MAX_SIZE`, :data:`MAX_DURATION_NS`, :data:`MAX_RATE_HZ`; ``1e308k``,
``1e300h``) is refused before it is turned into an integer, as is one below
the least. Every parser raises :class:`mwperf.errors.UnitError` (a ValueError)
with a message that does not repeat the value; the caller prefixes the option
and the value.
"""

from __future__ import annotations

import math
import re

from mwperf.errors import UnitError

__all__ = [
    "parse_size",
    "parse_duration_ns",
    "parse_rate_hz",
    "parse_list",
    "format_size",
    "format_duration_ns",
    "format_rate_hz",
    "MAX_SIZE",
    "MAX_DURATION_NS",
    "MAX_RATE_HZ",
    "AboveBound",
]

#: The largest size any parser returns: 1 TiB (the agent takes messages of at most 1 GiB).
MAX_SIZE = 1 << 40
#: The longest duration any parser returns: 2^55 ns, some 417 days (the agent's limit; an int64 holds it).
MAX_DURATION_NS = 1 << 55
#: The highest rate any parser returns: 1 THz.
MAX_RATE_HZ = 1e12


_NUMBER = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([A-Za-zµ]*)\s*$")

_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10,
    "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
    "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30,
}

_DURATION_UNITS_NS = {
    "ns": 1,
    "us": 1_000, "µs": 1_000,
    "ms": 1_000_000,
    "": 1_000_000_000, "s": 1_000_000_000, "sec": 1_000_000_000,
    "m": 60_000_000_000, "min": 60_000_000_000,
    "h": 3_600_000_000_000,
}

_RATE_MULTIPLIERS = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}


def _split(text: str) -> tuple[float, str]:
    if not isinstance(text, str):
        raise UnitError("not a string")
    match = _NUMBER.match(text)
    if not match:
        raise UnitError("not a number")
    number = float(match.group(1))
    if not math.isfinite(number):
        raise UnitError("not a finite number")
    return number, match.group(2)


class AboveBound(UnitError):
    """A value above the most the parser takes (an option with a range of its own says that range instead)."""


def _bounded(number: float, factor: float, most: float, what: str, shown: str) -> float:
    """``number * factor``, refused (AboveBound) above ``most``: checked on the
    number before it is multiplied, so no value overflows into infinity."""
    if number > most / factor:
        raise AboveBound(f"{what} above {shown}, the most mwperf takes")
    return number * factor


def parse_size(text: str) -> int:
    """Return the size in bytes; must be a positive whole number of bytes."""
    number, unit = _split(text)
    factor = _SIZE_UNITS.get(unit.lower())
    if factor is None:
        raise UnitError(f"unknown size unit '{unit}' (use B, k/KiB, M/MiB, G/GiB)")
    value = _bounded(number, factor, MAX_SIZE, "size", "1TiB")
    if value <= 0:
        raise UnitError("size must be positive")
    if value != int(value):
        raise UnitError("not a whole number of bytes")
    return int(value)


def parse_duration_ns(text: str, *, allow_zero: bool = False) -> int:
    """Return the duration in integer nanoseconds."""
    number, unit = _split(text)
    factor = _DURATION_UNITS_NS.get(unit if unit == "µs" else unit.lower())
    if factor is None:
        raise UnitError(f"unknown duration unit '{unit}' (use ns, us, ms, s, m, h)")
    if number < 0:
        raise UnitError("duration must not be negative" if allow_zero else "duration must be positive")
    value = round(_bounded(number, factor, MAX_DURATION_NS, "duration", "2^55 ns (417 days)"))
    if value == 0 and number != 0:
        raise UnitError("duration is below one nanosecond")
    if value == 0 and not allow_zero:
        raise UnitError("duration must be positive")
    return value


def parse_rate_hz(text: str) -> float:
    """Return a rate in Hz (a positive float)."""
    number, unit = _split(text)
    lowered = unit.lower()
    if lowered.endswith("hz"):
        lowered = lowered[:-2]
    factor = _RATE_MULTIPLIERS.get(lowered)
    if factor is None:
        raise UnitError(f"unknown rate unit '{unit}' (use Hz, k, M)")
    value = _bounded(number, factor, MAX_RATE_HZ, "rate", "1 THz")
    if value <= 0:
        raise UnitError("rate must be positive")
    return value


def parse_list(text: str) -> list[str]:
    """Split a comma-separated list; empty items are an error."""
    items = [item.strip() for item in text.split(",")]
    if not items or any(item == "" for item in items):
        raise UnitError("empty item in the list")
    return items


def format_size(size: int) -> str:
    """Exact, short: 1024 -> '1KiB', 63000 -> '63000'."""
    for unit, factor in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)


def format_duration_ns(ns: int) -> str:
    """1_500_000_000 -> '1.5s', 200_000_000 -> '200ms'."""
    for unit, factor in (("h", 3_600_000_000_000), ("m", 60_000_000_000), ("s", 1_000_000_000),
                         ("ms", 1_000_000), ("us", 1_000)):
        if ns >= factor:
            value = ns / factor
            return f"{value:g}{unit}"
    return f"{ns}ns"


def format_rate_hz(rate: float | None) -> str:
    """Integral rates print without a fraction: 1000.0 -> '1000'."""
    if rate is None:
        return "-"
    if float(rate).is_integer():
        return str(int(rate))
    return f"{rate:g}"
