"""Synthetic records made of fixture lines that stay measurements the loader accepts
(mwperf.results.checks): a statistics object moved to a new p50 with its other figures in order."""

from __future__ import annotations

#: A statistics object's figures in the order a measurement keeps them (mwperf.results.checks).
_ORDERED = ("min", "p50", "p90", "p99", "p999", "p9999", "p999999", "max")


def measured_stats(stats: dict | None, scale: bool = True, **figures) -> dict | None:
    """A fixture's statistics object with ``figures`` set (``p50=20.0``) and the others moved as a
    measurement would have them: every figure scaled by the new p50 over the old (unless not ``scale``),
    then those given set,
    the rest clamped into order around them (min <= p50 <= ... <= max, the mean between min and max).
    Synthetic launches made of one fixture line stay records the loader accepts."""
    if stats is None:
        return None
    out = dict(stats)
    old, new = out.get("p50"), figures.get("p50")
    if scale and isinstance(old, (int, float)) and isinstance(new, (int, float)) and old > 0:
        factor = new / old
        for key in (*_ORDERED, "mean", "std"):
            if isinstance(out.get(key), (int, float)):
                out[key] = out[key] * factor
        for key in ("p50_ci", "p99_ci", "p999_ci"):
            if isinstance(out.get(key), list):
                out[key] = [v * factor for v in out[key]]
    out.update(figures)
    given = [k for k in _ORDERED if k in figures and out.get(k) is not None]
    for i, key in enumerate(_ORDERED):
        if key in given or out.get(key) is None:
            continue
        below = [out[k] for k in _ORDERED[:i] if out.get(k) is not None]
        above = [out[k] for k in _ORDERED[i + 1:] if k in given]
        value = out[key]
        if below:
            value = max(value, max(below))
        if above:
            value = min(value, min(above))
        out[key] = value
    if out.get("min") is not None and out.get("max") is not None and out.get("mean") is not None:
        out["mean"] = min(max(out["mean"], out["min"]), out["max"])
    return out
