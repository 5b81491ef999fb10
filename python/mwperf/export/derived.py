"""Values every output derives from a record the same way: CPU % of a side,
the publisher's send rate, the section an imported point came from, the
number of subscribers. Records are version 2 (every field present; older
ones are upgraded on reading), so nothing here guesses a missing field."""

from __future__ import annotations

__all__ = ["pair_name", "cpu_percent", "cpu_per_msg", "span_s", "pub_rate", "source_section", "subscribers", "subscribers_as",
           "subscribers_label", "stat"]


def pair_name(record: dict) -> str:
    """The middleware of a point, or ``A->B`` for a cross-vendor one (A's publisher, B's subscriber)."""
    peer = record.get("peer_mw")
    return f"{record['mw']}->{peer}" if peer else record["mw"]


def stat(record: dict, key: str, field: str = "latency_us"):
    """``record[field][key]`` or None (no statistics: a failed or imported point)."""
    stats = record[field]
    return stats.get(key) if isinstance(stats, dict) else None


def span_s(record: dict, side: str | None = None) -> float | None:
    """The measured window (of ``side`` when known), seconds."""
    window = record["cpu_window_s"][side] if side else None
    span = window or record["elapsed_s"] or record["duration_s"]
    return span if isinstance(span, (int, float)) and span > 0 else None


def cpu_percent(record: dict, side: str) -> float | None:
    """CPU of ``side`` over its measured window, % of one core."""
    return record["cpu_pct"][side]


def cpu_per_msg(record: dict, side: str) -> float | None:
    """µs of CPU of ``side`` per sample delivered (None in a record from before it was recorded)."""
    return (record.get("cpu_us_per_msg") or {}).get(side)


def pub_rate(record: dict) -> float | None:
    """Samples the publisher sent per second of the measured phase."""
    sent, span = record["sent"], span_s(record)
    return None if sent is None or span is None else sent / span


def source_section(record: dict) -> str | None:
    """The titled table of another tool's output an imported point came from."""
    source = record["source"]
    return source.get("section") if isinstance(source, dict) else None


def subscribers(record: dict) -> int:
    """Subscribers of the point."""
    return record["subscribers"]


def subscribers_as(record: dict) -> str:
    """How the point's subscribers ran: "processes" or "threads"."""
    return record["subscribers_as"]


def subscribers_label(counts, how: str) -> str:
    """``4 subscribers``, ``2/4 subscribers as threads``."""
    text = f"{'/'.join(str(n) for n in sorted(counts))} subscribers"
    return f"{text} as threads" if how == "threads" else text
