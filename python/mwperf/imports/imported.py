"""``mwperf import perftest|ddsperf FILE``: other tools' results as a run
directory, so published numbers (RTI Connext needs a licence to reproduce)
plot and compare beside mwperf's own.

Perftest: its CSV tables (``"Size", "Ave (us)", ...`` and ``"Size",
"Packets", ...``, quoted or not, indented as in RTI's documents), its summary
lines (``Length: 32 Latency: Ave 23 us Std 0.9 us ...``, ``Length: 32
Packets: 503906 Packets/s(ave): 25193 Mbps(ave): 6.4 Lost: 975 (0.19%)``),
and tables laid out one cell a line (RTI's web pages as text: the header
cells, then the values row by row).

ddsperf: its per-second lines. Ping/pong (``size S mean Mus min .. 50% ..
90% .. 99% .. max .. cnt N``; the latency it prints is already RTT/2) gives
one latency point per size: count, mean (weighted), min and max over every
second; p50/p90/p99 are the medians of the per-second percentiles (ddsperf
prints no overall percentile; the record says so). Sub lines (``size S total N
lost M ... rate R kS/s``) give one throughput point per size: totals of the
last line, rate the median of the per-second rates after the first second.

Every record carries ``source: {tool, file, note}``; what the tool does not
report is null.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from mwperf.options import UsageError
from mwperf.record import SCHEMA_VERSION, utc_now_iso
from mwperf.rundir import RESULTS_JSONL, RunDir

__all__ = ["ImportedPoint", "parse_perftest", "parse_ddsperf", "import_file", "TOOLS"]

TOOLS = ("perftest", "ddsperf")
_NUM = r"[-+]?\d+(?:\.\d+)?"
_LAT_KEYS = ("mean", "std", "min", "max", "p50", "p90", "p99", "p9999", "p999999")
# header cell -> field, after lower-casing and dropping units / spaces
_LAT_CELLS = {"ave": "mean", "avg": "mean", "std": "std", "min": "min", "max": "max", "50%": "p50", "90%": "p90",
              "99%": "p99", "99.99%": "p9999", "99.9999%": "p999999"}
_TPUT_CELLS = {"packets": "packets", "packets/s(ave)": "pps", "packets/s": "pps", "samples/sec": "pps",
               "mbps(ave)": "mbps", "mbps": "mbps", "mbit/sec": "mbps", "lost": "lost", "lost(%)": "lost_pct",
               "sampleslost": "lost", "samples": "packets"}


@dataclass
class ImportedPoint:
    mode: str  # latency | throughput
    size: int
    latency: dict = field(default_factory=dict)  # µs, keys of _LAT_KEYS (+ count)
    packets: int | None = None
    pps: float | None = None
    mbps: float | None = None
    lost: int | None = None
    note: str | None = None


def _cell(text: str) -> str:
    text = text.strip().strip('"').strip().lower()
    text = re.sub(r"\((us|μs|µs|bytes)\)", "", text)
    return re.sub(r"\s+", "", text)


def _header_kind(cells: list[str]) -> tuple[str, list[str | None]] | None:
    """('latency'|'throughput', field per column) for a Perftest header row."""
    norm = [_cell(c) for c in cells]
    if not norm or norm[0] not in ("size", "samplesize", "length", "datalength"):
        return None
    lat = [_LAT_CELLS.get(c) for c in norm[1:]]
    if sum(1 for f in lat if f) >= 4:
        return "latency", lat
    tput = [_TPUT_CELLS.get(c) for c in norm[1:]]
    if "pps" in tput:
        return "throughput", tput
    return None


def _point(kind: str, fields: list[str | None], values: list[str]) -> ImportedPoint | None:
    try:
        size = int(float(values[0]))
        nums = [float(v) for v in values[1:1 + len(fields)]]
    except ValueError:
        return None
    if len(nums) < len(fields) or size <= 0:
        return None
    p = ImportedPoint(kind, size)
    for name, value in zip(fields, nums):
        if name is None:
            continue
        if kind == "latency":
            p.latency[name] = value
        elif name in ("packets", "lost"):
            setattr(p, name, int(value))
        elif name in ("pps", "mbps"):
            setattr(p, name, value)
    return p


_SUMMARY_LAT = re.compile(r"Length:\s*(\d+)\s+Latency:\s*(.*)", re.I)
_SUMMARY_TPUT = re.compile(
    rf"Length:\s*(\d+)\s+Packets:\s*(\d+)\s+Packets/s\(ave\):\s*({_NUM})\s+Mbps\(ave\):\s*({_NUM})"
    rf"\s+Lost:\s*(\d+)", re.I)
_SUMMARY_FIELD = re.compile(rf"(Ave|Std|Min|Max|50%|90%|99\.9999%|99\.99%|99%)\s+({_NUM})\s*(?:us|μs|µs)", re.I)


def parse_perftest(text: str) -> list[ImportedPoint]:
    points: list[ImportedPoint] = []
    lines = [line.strip() for line in text.splitlines()]
    i = 0
    while i < len(lines):
        line = lines[i]
        m = _SUMMARY_TPUT.search(line)
        if m:
            size, packets, pps, mbps, lost = m.groups()
            points.append(ImportedPoint("throughput", int(size), packets=int(packets), pps=float(pps),
                                        mbps=float(mbps), lost=int(lost)))
            i += 1
            continue
        m = _SUMMARY_LAT.search(line)
        if m:
            p = ImportedPoint("latency", int(m.group(1)))
            for name, value in _SUMMARY_FIELD.findall(m.group(2)):
                p.latency[_LAT_CELLS[name.lower()]] = float(value)
            if len(p.latency) >= 4:
                points.append(p)
            i += 1
            continue
        header = _header_kind(line.split(",")) if "," in line else None
        if header:  # a CSV table: rows until a line that is not one
            kind, fields = header
            i += 1
            while i < len(lines) and lines[i]:
                p = _point(kind, fields, [c.strip() for c in lines[i].split(",")])
                if p is None:
                    break
                points.append(p)
                i += 1
            continue
        # a table one cell a line: header cells, then values
        cells = []
        j = i
        while j < len(lines) and (not lines[j] or not re.fullmatch(_NUM, lines[j])):
            if lines[j]:
                cells.append(lines[j])
            j += 1
            if len(cells) > 12:
                break
        start = next((k for k in range(len(cells)) if _header_kind(cells[k:])), None)
        if start is not None:
            kind, fields = _header_kind(cells[start:])
            width = 1 + len(fields)
            values: list[str] = []
            while j < len(lines) and (not lines[j] or re.fullmatch(_NUM, lines[j])):
                if lines[j]:
                    values.append(lines[j])
                j += 1
            for k in range(0, len(values) - width + 1, width):
                p = _point(kind, fields, values[k:k + width])
                if p is not None:
                    points.append(p)
            i = j
            continue
        i += 1
    return points


_DDS_LAT = re.compile(rf"size (\d+) mean ({_NUM})us min ({_NUM})us 50% ({_NUM})us 90% ({_NUM})us "
                      rf"99% ({_NUM})us max ({_NUM})us cnt (\d+)")
_DDS_SUB = re.compile(rf"^\[\d+\]\s+({_NUM})\s+size (\d+) total (\d+) lost (\d+) delta \d+ lost \d+ "
                      rf"rate ({_NUM}) kS/s ({_NUM}) Mb/s")


def parse_ddsperf(text: str) -> list[ImportedPoint]:
    lat: dict[int, list[tuple]] = {}
    sub: dict[int, list[tuple]] = {}
    for line in text.splitlines():
        m = _DDS_LAT.search(line)
        if m:
            size = int(m.group(1))
            # (mean, min, p50, p90, p99, max, cnt)
            lat.setdefault(size, []).append(tuple(float(v) for v in m.groups()[1:7]) + (int(m.group(8)),))
            continue
        m = _DDS_SUB.search(line.strip())
        if m:
            t, size, total, lost, rate, mbps = m.groups()
            sub.setdefault(int(size), []).append((float(t), int(total), int(lost), float(rate), float(mbps)))
    points: list[ImportedPoint] = []
    for size, rows in sorted(lat.items()):
        count = sum(r[6] for r in rows)
        if count == 0:
            continue
        p = ImportedPoint("latency", size, note="ddsperf: p50/p90/p99 are medians of its per-second percentiles")
        p.latency = {
            "count": count,
            "mean": sum(r[0] * r[6] for r in rows) / count,
            "min": min(r[1] for r in rows), "max": max(r[5] for r in rows),
            "p50": statistics.median(r[2] for r in rows), "p90": statistics.median(r[3] for r in rows),
            "p99": statistics.median(r[4] for r in rows),
        }
        points.append(p)
    for size, rows in sorted(sub.items()):
        steady = rows[1:] if len(rows) > 2 else rows
        last = rows[-1]
        points.append(ImportedPoint("throughput", size, packets=last[1], lost=last[2],
                                    pps=1000 * statistics.median(r[3] for r in steady),
                                    mbps=statistics.median(r[4] for r in steady),
                                    note="ddsperf: rate is the median of its per-second rates after the first"))
    return points


def _stats(latency: dict) -> dict | None:
    if not latency:
        return None
    out = {"count": latency.get("count")}
    for key in _LAT_KEYS:
        out[key] = latency.get(key)
    out["exact"] = None
    return out


def _record(p: ImportedPoint, index: int, run_id: str, tool: str, mw: str, source: str, time: str) -> dict:
    sent = None if p.packets is None or p.lost is None else p.packets + p.lost
    return {
        "schema_version": SCHEMA_VERSION, "run_id": run_id, "point": index, "time": time, "mw": mw,
        "mode": p.mode, "transport": None, "reliability": None,
        "qos": {"history": None, "durability": None, "instances": None, "async": None, "receive": None},
        "size": p.size, "rate_hz": None, "duration_s": None, "warmup_s": None,
        "cpu": {"pub": None, "sub": None, "placement": "unknown", "pub_affinity": None, "sub_affinity": None},
        "wait": None, "sent": sent, "received": p.packets, "lost": p.lost,
        "loss_rate": None if sent is None else (p.lost / sent if sent else 0.0),
        "duplicates": None, "out_of_order": None, "foreign": None,
        "samples_per_s": p.pps, "mbps": p.mbps, "loop_rate": None,
        "latency_us": _stats(p.latency), "rtt_us": None, "send_lag_us": None,
        "cpu_s": {"pub": None, "sub": None}, "rss_kb": {"pub": None, "sub": None},
        "mw_rss_kb": {"pub": None, "sub": None}, "discovery_ms": None,
        "adapter": {"name": mw, "version": None, "config": None, "sub_config": None},
        "source": {"tool": tool, "file": source, "note": p.note},
        "status": "ok", "error": None,
    }


def import_file(tool: str, path: str, out: str | None, mw: str | None) -> tuple[Path, int]:
    """Parse ``path`` with ``tool``'s parser and write a run directory; (dir, points)."""
    if tool not in TOOLS:
        raise UsageError(f"import {tool}: unknown tool (choose from {', '.join(TOOLS)})")
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"import {tool} {path}: cannot read: {exc.strerror or exc}") from None
    points = (parse_perftest if tool == "perftest" else parse_ddsperf)(text)
    if not points:
        raise UsageError(f"import {tool} {path}: no {tool} results found in it")
    directory = Path(out) if out else Path("results") / f"import-{tool}-{Path(path).stem}"
    if (directory / RESULTS_JSONL).exists():
        raise UsageError(f"--out {directory}: already holds {RESULTS_JSONL} (choose a new directory)")
    rundir = RunDir(directory).create()
    now = utc_now_iso()
    for index, p in enumerate(points):
        rundir.append(_record(p, index, directory.name, tool, mw or tool, Path(path).name, now))
    rundir.write_run_json({"run_id": directory.name, "imported": {"tool": tool, "file": str(path), "mw": mw or tool},
                           "started": now, "status": "complete",
                           "points": {"total": len(points), "ok": len(points), "failed": 0, "done": len(points)}})
    return directory, len(points)
