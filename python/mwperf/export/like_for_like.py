"""The report's and the tables' like-for-like table: for each mode, what its
rows were measured through where they differ (the zero-copy path, shared
memory or network, busy-poll or blocking wait, sync or async publishing, the
version of a library two rows share, the socket receive buffer, the link), each value
with the rows that have it: rows that differ here do not measure the same
thing (:mod:`mwperf.model.fairness`)."""

from __future__ import annotations

from mwperf.export.sections import Row, Section
from mwperf.model.fairness import describe_path, traits
from mwperf.model.labels import qos_label
from mwperf.model.record import Record

__all__ = ["like_for_like", "HEADERS"]

HEADERS = ["Mode", "Differs in", "Rows (middleware, QoS) by value"]
_NAMES = {"path": "data path", "transport": "transport", "wait": "wait", "publishing": "publishing",
          "socket buffer": "socket receive buffer", "link": "link"}


def _shown(key: str, value) -> str:
    if key == "path":
        return describe_path(value)
    if key == "socket buffer":
        return f"{value / 2 ** 20:g} MiB" if value % 2 ** 20 == 0 else f"{value} B"
    return str(value)


def like_for_like(records: list[Record]) -> list[Section]:
    """One row per mode and trait on which that mode's rows differ; none when all are alike."""
    section = Section("", "like-for-like", "like for like: where a mode's rows were measured through different "
                                           "things (compare them knowing it)", list(HEADERS), left=(0, 1, 2))
    by_mode: dict[str, dict[str, dict[str, set[str]]]] = {}
    for r in records:
        if not r.ok or r.imported:
            continue
        name = f"{r.mw} ({qos_label(r)})" if qos_label(r) else r.mw
        t = traits(r)
        shown = {key: _shown(key, t[key]) for key in _NAMES if t[key] is not None}
        shown.update({f"{lib} version": v for lib, v in t["versions"].items()})
        for key, value in shown.items():
            by_mode.setdefault(r.mode, {}).setdefault(key, {}).setdefault(value, set()).add(name)
    for mode, keys in by_mode.items():
        for key, values in keys.items():
            # shared memory vs copy is said by the transport's row; a loan is more
            if len(values) > 1 and (key != "path" or describe_path("loan") in values):
                section.rows.append(Row([mode, _NAMES.get(key, key), "; ".join(
                    f"{value}: {', '.join(sorted(names))}" for value, names in sorted(values.items()))]))
    return [section] if section.rows else []
