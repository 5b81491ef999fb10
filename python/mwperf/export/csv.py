"""results.csv: one flat row per record (``latency_us.p50`` -> ``latency_p50_us``),
regenerated from results.jsonl after every point. Every option of the
agent's table that has a record field is a column (``qos.batch`` -> ``qos_batch``);
a scenario's flow fills the ``scenario_*`` columns (empty for a plain point).

Nulls are empty cells, booleans ``true``/``false``, floats in Python's
shortest round-trip form, affinity lists space-separated; a text that a
spreadsheet would run as a formula (starting with ``=``, ``+``, ``-``, ``@``,
a tab or a return: ``=HYPERLINK(...)`` from a record) has a ``'`` before it.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any, Iterable, TextIO

from mwperf.errors import StorageError
from mwperf.export.exporter import Exporter
from mwperf.model.record import Record
from mwperf.results.rundir import RESULTS_JSONL, RunDir, write_atomic
from mwperf.table import snapshot

__all__ = ["RESULTS_CSV", "COLUMNS", "write_csv", "to_csv_text", "ResultsCsv"]

RESULTS_CSV = "results.csv"

_STATS = ("count", "mean", "std", "min", "max", "p50", "p90", "p99", "p9999", "p999999")


def _stat_columns(prefix: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(f"{prefix}_samples" if key == "count" else f"{prefix}_{key}_us", (f"{prefix}_us", key)) for key in _STATS]


def _option_columns() -> list[tuple[str, tuple[str, ...]]]:
    """Every option of the agent's table that has a record field (``qos.batch`` -> ``qos_batch``), in its order."""
    return [(row.field.replace(".", "_"), tuple(row.field.split("."))) for row in snapshot().record_rows]


#: (column name, path into the record)
_LAYOUT: list[tuple[str, tuple[str, ...]]] = [
    ("schema_version", ("schema_version",)),
    ("run_id", ("run_id",)),
    ("point", ("point",)),
    ("time", ("time",)),
    *_option_columns(),
    ("cpu_pub", ("cpu", "pub")),
    ("cpu_sub", ("cpu", "sub")),
    ("cpu_placement", ("cpu", "placement")),
    ("cpu_pub_affinity", ("cpu", "pub_affinity")),
    ("cpu_sub_affinity", ("cpu", "sub_affinity")),
    ("sent", ("sent",)),
    ("received", ("received",)),
    ("lost", ("lost",)),
    ("loss_rate", ("loss_rate",)),
    ("duplicates", ("duplicates",)),
    ("out_of_order", ("out_of_order",)),
    ("foreign", ("foreign",)),
    ("samples_per_s", ("samples_per_s",)),
    ("mbps", ("mbps",)),
    ("loop_rate", ("loop_rate",)),
    *_stat_columns("latency"),
    *_stat_columns("rtt"),
    *_stat_columns("send_lag"),
    ("cpu_pub_user_s", ("cpu_s", "pub", "user")),
    ("cpu_pub_sys_s", ("cpu_s", "pub", "sys")),
    ("cpu_sub_user_s", ("cpu_s", "sub", "user")),
    ("cpu_sub_sys_s", ("cpu_s", "sub", "sys")),
    ("cpu_pub_pct", ("cpu_pct", "pub")),
    ("cpu_sub_pct", ("cpu_pct", "sub")),
    ("cpu_pub_us_per_msg", ("cpu_us_per_msg", "pub")),
    ("cpu_sub_us_per_msg", ("cpu_us_per_msg", "sub")),
    ("rss_pub_kb", ("rss_kb", "pub")),
    ("rss_sub_kb", ("rss_kb", "sub")),
    ("mw_rss_pub_kb", ("mw_rss_kb", "pub")),
    ("mw_rss_sub_kb", ("mw_rss_kb", "sub")),
    ("discovery_ms", ("discovery_ms",)),
    ("elapsed_s", ("elapsed_s",)),
    ("adapter_name", ("adapter", "name")),
    ("adapter_version", ("adapter", "version")),
    ("repetition", ("repetition",)),
    # a scenario's flow (its per-publisher and payload-check rows are in results.jsonl)
    *((f"scenario_{key}", ("scenario", key)) for key in ("name", "hash", "point", "label", "flow", "together",
                                                          "flows", "publishers", "publisher_sent", "payload",
                                                          "cpu_s")),
    ("status", ("status",)),
    ("error", ("error",)),
]

COLUMNS: list[str] = [name for name, _ in _LAYOUT]


#: What a spreadsheet reads as the start of a formula (=HYPERLINK(...), +cmd|..., @SUM, a tab or return first).
_FORMULA = ("=", "+", "-", "@", "\t", "\r")


def _text(value: str) -> str:
    """A text cell as a spreadsheet shows it, never as a formula: one starting like one gets a ' first."""
    return "'" + value if value.startswith(_FORMULA) else value


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, float):
        return repr(value)
    return _text(str(value))


def _column(records: list[Record], path: tuple[str, ...]) -> list[str]:
    """One column's cells for every record (as written), a column at a time: a run of
    300,000 imported points writes in seconds."""
    first = path[0]
    values: list[Any] = [r.json.get(first) for r in records]
    for key in path[1:]:
        parents = set(map(type, values))
        if parents == {dict}:
            values = [v.get(key) for v in values]
        else:
            values = [v.get(key) if v.__class__ is dict else None for v in values]
    kinds = set(map(type, values))
    if kinds <= {type(None)}:
        return [""] * len(values)
    if kinds == {str}:
        return list(map(_text, values))
    if kinds == {int}:
        return list(map(str, values))
    if kinds == {float}:
        return list(map(repr, values))
    return list(map(_cell, values))


def write_csv(records: Iterable[Record], handle: TextIO) -> None:
    records = list(records)
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows(zip(*(_column(records, path) for _, path in _LAYOUT)))


def to_csv_text(records: Iterable[Record]) -> str:
    buffer = io.StringIO()
    write_csv(records, buffer)
    return buffer.getvalue()


class ResultsCsv(Exporter):
    """DIR/results.csv, replaced whole."""

    name = "csv"

    def write(self, records: list[Record], rundir: RunDir) -> list[Path]:
        target = rundir.path / RESULTS_CSV
        try:
            write_atomic(target, to_csv_text(records))
        except StorageError as exc:  # results.jsonl holds them: say so, and how to get the table back
            raise StorageError(target, OSError(exc.errno, f"{exc.reason}; the {len(records)} record(s) are in "
                                                          f"{RESULTS_JSONL} (mwperf report {rundir.path} writes "
                                                          f"{RESULTS_CSV} again)")) from None
        return [target]
