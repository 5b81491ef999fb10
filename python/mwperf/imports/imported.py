"""``mwperf import perftest|ddsperf FILE``: other tools' results as a run
directory, so published numbers (RTI Connext needs a licence to reproduce)
plot and compare beside mwperf's own.

Every record carries ``source: {tool, file, note, section}`` (section: the
title of the table the point came from); what the tool does not report is
null.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from mwperf.errors import UsageError
from mwperf.export.csv import ResultsCsv
from mwperf.imports.ddsperf import parse_ddsperf
from mwperf.imports.perftest import parse_perftest
from mwperf.imports.point import BadValue, ImportedPoint
from mwperf.model.merge import SCHEMA_VERSION, utc_now_iso
from mwperf.model.record import Record
from mwperf.model.schema import validate_record
from mwperf.model.upgrade import blank
from mwperf.results.rundir import RESULTS_JSONL, RunDir, write_atomic

__all__ = ["import_file", "TOOLS", "LAT_KEYS"]

#: tool -> its parser
TOOLS = {"perftest": parse_perftest, "ddsperf": parse_ddsperf}
LAT_KEYS = ("mean", "std", "min", "max", "p50", "p90", "p99", "p9999", "p999999")
#: Perftest's output of a long run (300,000 lines) is some 30 MB.
MAX_IMPORT_BYTES = 256 << 20


def _stats(latency: dict) -> dict | None:
    if not latency:
        return None
    return {"count": latency.get("count"), **{key: latency.get(key) for key in LAT_KEYS},
            "p999": latency.get("p999"), "p50_ci": None, "p99_ci": None, "p999_ci": None, "relative_error": None,
            "ci_confidence": None, "ci_batches": None, "ci_method": None, "ci_null": None}


def _record(p: ImportedPoint, index: int, run_id: str, tool: str, mw: str, source: str, time: str) -> dict:
    """A record of what the tool reports; the rest of its fields are blank (null,
    or the point's defaults: one subscriber, as a process, none slow)."""
    sent = None if p.packets is None or p.lost is None else p.packets + p.lost
    record = blank()
    record.update({
        "schema_version": SCHEMA_VERSION, "run_id": run_id, "point": index, "time": time, "mw": mw,
        "mode": p.mode, "size": p.size, "subscribers": 1, "subscribers_as": "processes", "slow_subscriber_s": 0.0,
        "cpu": {"pub": None, "sub": None, "placement": "unknown", "pub_affinity": None, "sub_affinity": None},
        "sent": sent, "received": p.packets, "lost": p.lost,
        "loss_rate": None if sent is None or p.lost is None else (p.lost / sent if sent else 0.0),
        "samples_per_s": p.pps, "mbps": p.mbps, "latency_us": _stats(p.latency),
        "adapter": {"name": mw, "version": None, "config": None, "sub_config": None, "versions": None,
                    "data_path": None},
        "source": {"tool": tool, "file": source, "note": p.note, "section": p.section},
        "status": "ok", "error": None,
    })
    return record


def _read(what: str, path: str) -> str:
    """The file's text: a regular file (not a device, not a FIFO that would
    hang) of at most MAX_IMPORT_BYTES; UsageError naming ``what`` otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise UsageError("import", what, "not a regular file (a tool's output saved to a file)")
            data = handle.read(MAX_IMPORT_BYTES + 1)
    except OSError as exc:
        raise UsageError("import", what, f"cannot read: {exc.strerror or exc}") from None
    if len(data) > MAX_IMPORT_BYTES:
        raise UsageError("import", what, f"larger than {MAX_IMPORT_BYTES >> 20} MiB: no tool's output is")
    return data.decode("utf-8", errors="replace")


def import_file(tool: str, path: str, out: str | None, mw: str | None) -> tuple[Path, int]:
    """Parse ``path`` with ``tool``'s parser and write a run directory; (dir, points).

    The records are checked against the schema (one of each shape: they are
    made by one function from checked numbers) and written in one go, then
    results.csv once: a file of 300,000 lines imports in seconds."""
    if tool not in TOOLS:
        raise UsageError("import", tool, f"unknown tool (choose from {', '.join(TOOLS)})")
    text = _read(f"{tool} {path}", path)
    try:
        points = TOOLS[tool](text)
    except BadValue as exc:
        raise UsageError("import", f"{tool} {path}:{exc.line}", f"{exc.value}: {exc.reason}") from None
    if not points:
        raise UsageError("import", f"{tool} {path}", f"no {tool} results found in it")
    directory = Path(out) if out else Path("results") / f"import-{tool}-{Path(path).stem}"
    if (directory / RESULTS_JSONL).exists():
        raise UsageError("--out", str(directory), f"already holds {RESULTS_JSONL} (choose a new directory)")
    rundir = RunDir(directory).create()
    now = utc_now_iso()
    records = [_record(p, index, directory.name, tool, mw or tool, Path(path).name, now)
               for index, p in enumerate(points)]
    shapes: set[tuple] = set()
    for p, record in zip(points, records):
        shape = (p.mode, tuple(p.latency), p.packets is None, p.pps is None, p.mbps is None, p.lost is None,
                 p.note is None, p.section is None)
        if shape not in shapes:
            shapes.add(shape)
            validate_record(record)
    write_atomic(rundir.jsonl, "".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n"
                                       for r in records))
    ResultsCsv().write([Record.from_json(r) for r in records], rundir)
    sections = list(dict.fromkeys(p.section for p in points if p.section))
    rundir.write_run_json({"run_id": directory.name,
                           "imported": {"tool": tool, "file": str(path), "mw": mw or tool, "sections": sections},
                           "started": now, "status": "complete",
                           "points": {"total": len(points), "ok": len(points), "failed": 0, "done": len(points)}})
    return directory, len(points)
