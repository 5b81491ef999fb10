"""How a record is named to a reader: its QoS label, and the QoS that tells
points apart (tables, plots and ``compare`` group and match by it)."""

from __future__ import annotations

__all__ = ["qos_key", "qos_label"]


def qos_key(record: dict) -> tuple:
    """What tells sections apart. The middlewares' defaults (volatile,
    synchronous, unkeyed, congestion block) count as unset, so a failed point that only knows
    what was requested joins the section of its ok neighbours. The receive
    path (listener or waitset) is always shown: it changes the numbers."""
    qos = record.get("qos") if isinstance(record.get("qos"), dict) else {}
    durability = qos.get("durability")
    return (record.get("transport"), record.get("reliability"), qos.get("history"),
            None if durability == "volatile" else durability, qos.get("instances") or None,
            bool(qos.get("async")), qos.get("receive"),
            None if qos.get("congestion") in (None, "block") else qos.get("congestion"))


def qos_label(record: dict) -> str:
    """Reliability, history, the non-default QoS, and the transport:
    ``best-effort, keep-last:10, transient-local, keyed 100000, async, congestion drop, listener, shm``."""
    transport, reliability, history, durability, instances, async_, receive, congestion = qos_key(record)
    parts = [reliability, history, durability, f"keyed {instances}" if instances else None,
             "async" if async_ else None, f"congestion {congestion}" if congestion else None, receive, transport]
    return ", ".join(str(p) for p in parts if p)
