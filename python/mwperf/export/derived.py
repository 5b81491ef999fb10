"""Values every output derives from a record the same way: CPU % of a side,
the publisher's send rate, the section an imported point came from, the
number of subscribers. Fields added after a run was recorded are optional:
an older record gives None, never an error."""

from __future__ import annotations

__all__ = ["cpu_percent", "span_s", "pub_rate", "source_section", "subscribers", "subscribers_as",
           "subscribers_label", "stat", "SIDES"]

SIDES = ("pub", "sub")


def stat(record: dict, key: str, field: str = "latency_us"):
    """``record[field][key]`` or None."""
    stats = record.get(field)
    return stats.get(key) if isinstance(stats, dict) else None


def span_s(record: dict, side: str | None = None) -> float | None:
    """The measured window (of ``side`` when known), seconds."""
    window = (record.get("cpu_window_s") or {}).get(side) if side else None
    span = window or record.get("elapsed_s") or record.get("duration_s")
    return span if isinstance(span, (int, float)) and span > 0 else None


def cpu_percent(record: dict, side: str) -> float | None:
    """CPU of ``side`` over its measured window, % of one core: ``cpu_pct``
    when the record has it, else user + sys CPU seconds over the window."""
    pct = (record.get("cpu_pct") or {}).get(side)
    if isinstance(pct, (int, float)):
        return float(pct)
    used = (record.get("cpu_s") or {}).get(side)
    span = span_s(record, side)
    if not isinstance(used, dict) or span is None or used.get("user") is None or used.get("sys") is None:
        return None
    return 100.0 * (used["user"] + used["sys"]) / span


def pub_rate(record: dict) -> float | None:
    """Samples the publisher sent per second of the measured phase."""
    sent, span = record.get("sent"), span_s(record)
    return None if sent is None or span is None else sent / span


def source_section(record: dict) -> str | None:
    """The titled table of another tool's output an imported point came from."""
    source = record.get("source")
    return source.get("section") if isinstance(source, dict) else None


def subscribers(record: dict) -> int:
    """Subscribers of the point (1: the classic point, also in older records)."""
    n = record.get("subscribers")
    return n if isinstance(n, int) and n > 0 else 1


def subscribers_as(record: dict) -> str:
    """How the point's subscribers ran: "processes" (also in older records) or "threads"."""
    return "threads" if record.get("subscribers_as") == "threads" else "processes"


def subscribers_label(counts, how: str) -> str:
    """``4 subscribers``, ``2/4 subscribers as threads``."""
    text = f"{'/'.join(str(n) for n in sorted(counts))} subscribers"
    return f"{text} as threads" if how == "threads" else text
