"""RTI Perftest's output: its CSV tables (``"Size", "Ave (us)", ...`` and
``"Size", "Packets", ...``, quoted or not, indented as in RTI's documents),
its summary lines (``Length: 32 Latency: Ave 23 us Std 0.9 us ...``,
``Length: 32 Packets: 503906 Packets/s(ave): 25193 Mbps(ave): 6.4 Lost: 975
(0.19%)``), and tables laid out one cell a line (RTI's web pages as text:
the header cells, then the values row by row)."""

from __future__ import annotations

import re

from mwperf.imports.point import NUM, ImportedPoint

__all__ = ["parse_perftest"]

# header cell -> field, after lower-casing and dropping units / spaces
_LAT_CELLS = {"ave": "mean", "avg": "mean", "std": "std", "min": "min", "max": "max", "50%": "p50", "90%": "p90",
              "99%": "p99", "99.99%": "p9999", "99.9999%": "p999999"}
_TPUT_CELLS = {"packets": "packets", "packets/s(ave)": "pps", "packets/s": "pps", "samples/sec": "pps",
               "mbps(ave)": "mbps", "mbps": "mbps", "mbit/sec": "mbps", "lost": "lost", "lost(%)": "lost_pct",
               "sampleslost": "lost", "samples": "packets"}


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
    rf"Length:\s*(\d+)\s+Packets:\s*(\d+)\s+Packets/s\(ave\):\s*({NUM})\s+Mbps\(ave\):\s*({NUM})"
    rf"\s+Lost:\s*(\d+)", re.I)
_SUMMARY_FIELD = re.compile(rf"(Ave|Std|Min|Max|50%|90%|99\.9999%|99\.99%|99%)\s+({NUM})\s*(?:us|μs|µs)", re.I)


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
        while j < len(lines) and (not lines[j] or not re.fullmatch(NUM, lines[j])):
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
            while j < len(lines) and (not lines[j] or re.fullmatch(NUM, lines[j])):
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
