"""JSON as mwperf reads it from a run directory (untrusted): no NaN or
Infinity, no number too large for a double, no text that is no Unicode (a
lone surrogate escape, which no UTF-8 file could hold once read). Each is a
ValueError, as a syntax error is."""

from __future__ import annotations

import json
import math
import re
from typing import Any

__all__ = ["loads_strict"]


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number out of range: {text[:20]}")
    return value


def _non_finite(name: str):
    raise ValueError(f"{name} is not a number JSON allows")


#: A surrogate written as a JSON escape: the one way a text that is no Unicode gets into JSON.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _lone_surrogate(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if any("\ud800" <= c <= "\udfff" for c in item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def loads_strict(data: bytes | str) -> Any:
    """JSON without NaN or Infinity (nor numbers too large for a double), nor
    a text that is no Unicode (a lone surrogate: it could be written nowhere)."""
    value = json.loads(data, parse_float=_finite_float, parse_constant=_non_finite)
    raw = data if isinstance(data, bytes) else data.encode("utf-8", "surrogatepass")
    if _SURROGATE_ESCAPE.search(raw) and _lone_surrogate(value):
        raise ValueError("a lone surrogate is not a text JSON allows here")
    return value
