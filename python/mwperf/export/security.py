"""DDS Security's price: for each secured point (``--security`` auth, sign,
encrypt) measured alongside its ``none`` twin (the same middleware, mode,
size, rate, QoS, transport and placement), each measure and its ratio to
none: p50 and p99 latency, throughput, CPU per sample on each side, the time
to match (the handshake's cost). One table for every level of every group;
none when a run has no such pair. Repetitions are shown as their median; a
failed secured point says so (its reason is in the result tables)."""

from __future__ import annotations

import statistics
from typing import Callable

from mwperf.export.sections import Row, Section
from mwperf.model.labels import identity
from mwperf.model.record import Record
from mwperf.table import snapshot
from mwperf.units import format_size

__all__ = ["security", "HEADERS", "level_of"]

HEADERS = ["Middleware", "Mode", "Size", "Level", "p50 (us)", "p50 / none", "p99 / none", "Mbit/s", "Mbit/s / none",
           "Lost (%)", "CPU pub (us/msg) / none", "CPU sub (us/msg) / none", "Match (ms)", "Match / none"]
_LEVELS = ("none", "auth", "sign", "encrypt")


def level_of(r: Record) -> str:
    """The point's security level (``none`` for a middleware that has no such option)."""
    return str(r.qos("security") or "none")


def _key(r: Record) -> tuple:
    """What a level's point and its none twin share: every identifying option but the level, and the placement."""
    names = [row.name for row in snapshot().rows if row.point_key and row.group in ("point", "qos")]
    ident = identity(r)
    at = names.index("security")
    return (*ident[:at], *ident[at + 1:], r.cpu.pub, r.cpu.sub)


def _median(records: list[Record], of: Callable[[Record], float | None]) -> float | None:
    values = [v for r in records if r.ok and (v := of(r)) is not None]
    return statistics.median(values) if values else None


def _num(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ratio(value: float | None, base: float | None) -> str:
    return "-" if value is None or not base else f"{value / base:.2f}x"


_MEASURES: tuple[Callable[[Record], float | None], ...] = (
    lambda r: r.stat("p50"), lambda r: r.stat("p99"), lambda r: r.mbps,
    lambda r: None if r.loss_rate is None else 100.0 * r.loss_rate,
    lambda r: r.cpu_us_per_msg.pub, lambda r: r.cpu_us_per_msg.sub, lambda r: r.discovery_ms)


def security(records: list[Record]) -> list[Section]:
    """The table of every secured level against its none twin (empty: no pair in the records)."""
    groups: dict[tuple, dict[str, list[Record]]] = {}
    for r in records:
        if not r.imported and (r.security is not None or r.qos("security") is not None):
            groups.setdefault(_key(r), {}).setdefault(level_of(r), []).append(r)
    section = Section("", "security", "DDS Security: each level against none (the same middleware, mode, size, QoS "
                                      "and transport; ratios > 1 cost more, but Mbit/s)", list(HEADERS),
                      left=(0, 1, 2, 3))
    for _, levels in sorted(groups.items(), key=lambda kv: str(kv[0])):
        if "none" not in levels or len(levels) < 2:
            continue
        first = levels["none"][0]
        name = first.mw if not first.peer_mw else f"{first.mw} -> {first.peer_mw}"
        base = [_median(levels["none"], of) for of in _MEASURES]
        for level in (lv for lv in _LEVELS if lv in levels):
            m = [_median(levels[level], of) for of in _MEASURES]
            cells = [name, first.mode, format_size(first.size), level]
            if all(v is None for v in m) and not any(r.ok for r in levels[level]):
                section.rows.append(Row(cells + [""] * (len(HEADERS) - len(cells)),
                                        failure=levels[level][0].error or "failed"))
                continue
            section.rows.append(Row(cells + [_num(m[0]), _ratio(m[0], base[0]), _ratio(m[1], base[1]), _num(m[2]),
                                             _ratio(m[2], base[2]), _num(m[3], 2), _ratio(m[4], base[4]),
                                             _ratio(m[5], base[5]), _num(m[6]), _ratio(m[6], base[6])]))
    return [section] if section.rows else []
