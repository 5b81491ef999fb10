"""RTI Perftest's CSV layout: one latency table and one throughput table per
middleware, QoS and placement, as Perftest prints them with -noPrint and as
RTI's published result tables use them.

Latency: Size, Ave (us), Std (us), Min (us), Max (us), 50% (us), 90% (us),
99% (us), 99.99% (us), 99.9999% (us) — one-way, from latency-mode points.
Throughput: Size, Packets, Packets/s (ave), Mbps (ave), Lost, Lost (%) —
from throughput-mode points (received packets, at the subscriber).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Iterable

from mwperf.export.exporter import Exporter
from mwperf.results.confined import make_dirs, write_inside
from mwperf.model.labels import qos_label
from mwperf.model.record import Record
from mwperf.results.rundir import RunDir

__all__ = ["LATENCY_HEADER", "THROUGHPUT_HEADER", "perftest_tables", "PerftestCsv", "PERFTEST_DIR"]

#: The tables' folder in the run directory (unless --out names another).
PERFTEST_DIR = "perftest"

LATENCY_HEADER = ("Size", "Ave (us)", "Std (us)", "Min (us)", "Max (us)", "50% (us)", "90% (us)", "99% (us)",
                  "99.99% (us)", "99.9999% (us)")
THROUGHPUT_HEADER = ("Size", "Packets", "Packets/s (ave)", "Mbps (ave)", "Lost", "Lost (%)")
_LAT_FIELDS = ("mean", "std", "min", "max", "p50", "p90", "p99", "p9999", "p999999")


def _num(value, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _latency_row(r: Record) -> list[str]:
    return [str(r.size)] + [_num(r.stat(f), 1) for f in _LAT_FIELDS]


def _throughput_row(r: Record) -> list[str]:
    loss = r.loss_rate
    sps = r.samples_per_s
    return [str(r.size), "" if r.received is None else str(r.received),
            "" if sps is None else str(round(sps)), _num(r.mbps, 1),
            "" if r.lost is None else str(r.lost), _num(None if loss is None else 100 * loss, 2)]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-")


#: The longest file name written (a file system takes 255 bytes; the parts come from records).
MAX_NAME = 160


def _file_name(parts: Iterable[str]) -> str:
    """The table's file name: its parts slugged; a long one cut, with a digest of the whole to keep it apart."""
    name = "-".join(_slug(p) for p in parts if p)
    if len(name) > MAX_NAME:
        name = name[:MAX_NAME - 13].rstrip("-.") + "-" + hashlib.sha256(name.encode()).hexdigest()[:12]
    return name + ".csv"


def perftest_tables(records: Iterable[Record]) -> dict[str, str]:
    """{file name: CSV text} for every (mw, QoS, imported table, subscribers, placement, wait) and mode;
    ok points only."""
    groups: dict[tuple, list[Record]] = {}
    for r in records:
        if not r.ok or r.mode not in ("latency", "throughput"):
            continue
        fan = r.subscribers
        key = (r.pair_name, qos_label(r), r.source_section or "", f"{fan}-subscribers" if fan > 1 else "",
               r.cpu.placement or "unknown", r.wait or "unknown", r.mode)
        groups.setdefault(key, []).append(r)
    files: dict[str, str] = {}
    for (mw, qos, section, fan, placement, wait, mode), members in groups.items():
        header, row = (LATENCY_HEADER, _latency_row) if mode == "latency" else (THROUGHPUT_HEADER, _throughput_row)
        lines = [", ".join(f'"{h}"' for h in header)]
        for r in sorted(members, key=lambda r: (r.size, r.repetition or 0, r.point)):
            lines.append(",".join(row(r)))
        name = _file_name((mw, qos, section, fan, placement, wait, mode))
        files[name] = "\n".join(lines) + "\n"
    return files


class PerftestCsv(Exporter):
    """One CSV file per table (``perftest_tables``), in ``directory`` (default DIR/perftest)."""

    name = "perftest-csv"

    def __init__(self, directory: Path | None = None):
        self.directory = directory

    def write(self, records: list[Record], rundir: RunDir) -> list[Path]:
        root, folder = (self.directory, "") if self.directory else (rundir.path, PERFTEST_DIR)
        make_dirs(root, folder)
        return [write_inside(root, str(Path(folder, name)), text)
                for name, text in sorted(perftest_tables(records).items())]
