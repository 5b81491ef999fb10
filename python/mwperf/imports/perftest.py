"""RTI Perftest's output: its CSV tables (``"Size", "Ave (us)", ...`` and
``"Size", "Packets", ...``, quoted or not, indented as in RTI's documents),
its summary lines (``Length: 32 Latency: Ave 23 us Std 0.9 us ...``,
``Length: 32 Packets: 503906 Packets/s(ave): 25193 Mbps(ave): 6.4 Lost: 975
(0.19%)``), and tables laid out one cell a line (RTI's web pages as text:
the header cells, then the values row by row).

A page holds several tables (1 Gbit/s and 10 Gbit/s, keyed and unkeyed,
best effort and reliable): each point carries the title of its table
(:func:`section_titles`), so they stay apart. A negative or non-finite
value is refused with its line.
"""

from __future__ import annotations

import re
from collections import Counter

from mwperf.imports.point import NUM, BadValue, ImportedPoint, checked, checked_size

__all__ = ["parse_perftest", "section_titles"]

# header cell -> field, after lower-casing and dropping units / spaces
_LAT_CELLS = {"ave": "mean", "avg": "mean", "std": "std", "min": "min", "max": "max", "50%": "p50", "90%": "p90",
              "99%": "p99", "99.99%": "p9999", "99.9999%": "p999999"}
_TPUT_CELLS = {"packets": "packets", "packets/s(ave)": "pps", "packets/s": "pps", "samples/sec": "pps",
               "mbps(ave)": "mbps", "mbps": "mbps", "mbit/sec": "mbps", "lost": "lost", "lost(%)": "lost_pct",
               "sampleslost": "lost", "samples": "packets"}
_SIZE_CELLS = ("size", "samplesize", "length", "datalength")
_CELLS = set(_LAT_CELLS) | set(_TPUT_CELLS) | set(_SIZE_CELLS)


def _cell(text: str) -> str:
    text = text.strip().strip('"').strip().lower()
    text = re.sub(r"\((us|μs|µs|bytes)\)", "", text)
    return re.sub(r"\s+", "", text)


def _header_kind(cells: list[str]) -> tuple[str, list[str | None]] | None:
    """('latency'|'throughput', field per column) for a Perftest header row."""
    norm = [_cell(c) for c in cells]
    if not norm or norm[0] not in _SIZE_CELLS:
        return None
    lat = [_LAT_CELLS.get(c) for c in norm[1:]]
    if sum(1 for f in lat if f) >= 4:
        return "latency", lat
    tput = [_TPUT_CELLS.get(c) for c in norm[1:]]
    if "pps" in tput:
        return "throughput", tput
    return None


def _point(kind: str, fields: list[str | None], headers: list[str], values: list[str],
           lines: list[int]) -> ImportedPoint | None:
    """A row as a point; None when it is not a row of numbers (the table has
    ended); BadValue for a negative or non-finite number."""
    try:
        size = checked_size(values[0], lines[0])
        nums = [checked(v, n, h) for v, n, h in zip(values[1:1 + len(fields)], lines[1:1 + len(fields)], headers)]
    except BadValue:
        raise
    except ValueError:
        return None
    if len(nums) < len(fields) or size < 1 or not size.is_integer():
        return None
    p = ImportedPoint(kind, int(size), line=lines[0])
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
    rf"\s+Lost:\s*({NUM})", re.I)
_SUMMARY_FIELD = re.compile(rf"(Ave|Std|Min|Max|50%|90%|99\.9999%|99\.99%|99%)\s+({NUM}|[-+]?nan|[-+]?inf)\s*"
                            rf"(?:us|μs|µs)", re.I)
_NUMBER = re.compile(NUM)
_NOT_FINITE = re.compile(r"[-+]?(nan|inf|infinity)", re.I)

# Titles: a line underlined (reStructuredText), a Markdown heading, a bullet
# alone on its line ("• Best Effort": a part of the title above it), or a
# short line alone between blank lines ("Unkeyed, UDPv4 1Gbps Network, C++98",
# RTI's pages as text) unless it is one of the page's recurring labels.
_UNDERLINE = re.compile(r"([=\-~:^*#+`'\".])\1{2,}")
_MARKDOWN = re.compile(r"#{1,6}\s+(.+?)\s*#*")
_BULLET = re.compile(r"(?:•|\*|-|–|·)\s+(.{1,80})")
_GENERIC = {"note", "notes", "detailedstatistics", "perftestscripts", "publisherside", "subscriberside",
            "testhardware", "linuxnodes", "switch", "results", "contents"}


def _alone(lines: list[str], i: int) -> bool:
    return (i == 0 or not lines[i - 1]) and (i + 1 >= len(lines) or not lines[i + 1])


def _title_like(text: str) -> bool:
    return (3 <= len(text) <= 100 and re.search(r"[A-Za-z]", text) is not None and text[-1] not in ".:;,!?"
            and _cell(text) not in _CELLS and not _NUMBER.fullmatch(text) and "Length:" not in text)


def section_titles(lines: list[str]) -> list[str | None]:
    """The title in effect at each line: the last heading above it, and the
    bullet under that heading if there is one ("heading / bullet")."""
    alone = Counter(_cell(line) for i, line in enumerate(lines) if line and _alone(lines, i))
    titles: list[str | None] = []
    heading: str | None = None
    bullet: str | None = None
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        m = _MARKDOWN.fullmatch(line)
        if m:
            heading, bullet = m.group(1), None
        elif line and _UNDERLINE.fullmatch(nxt) and not _UNDERLINE.fullmatch(line) and _title_like(line):
            heading, bullet = line, None
        elif line and _alone(lines, i):
            b = _BULLET.fullmatch(line)
            if b and _title_like(b.group(1)):
                bullet = b.group(1).strip()
            elif _title_like(line) and _cell(line) not in _GENERIC and alone[_cell(line)] == 1:
                heading, bullet = line, None
        parts = [p for p in (heading, bullet) if p]
        titles.append(" / ".join(parts) if parts else None)
    return titles


def parse_perftest(text: str) -> list[ImportedPoint]:
    points: list[ImportedPoint] = []
    lines = [line.strip() for line in text.splitlines()]
    titles = section_titles(lines)

    def add(p: ImportedPoint | None, at: int) -> None:
        if p is not None:
            p.section = titles[at]
            points.append(p)

    i = 0
    while i < len(lines):
        line = lines[i]
        m = _SUMMARY_TPUT.search(line)
        if m:
            size, packets, pps, mbps, lost = m.groups()
            n = i + 1
            add(ImportedPoint("throughput", int(checked_size(size, n)), packets=int(checked(packets, n, "Packets")),
                              pps=checked(pps, n, "Packets/s(ave)"), mbps=checked(mbps, n, "Mbps(ave)"),
                              lost=int(checked(lost, n, "Lost")), line=n), i)
            i += 1
            continue
        m = _SUMMARY_LAT.search(line)
        if m:
            p = ImportedPoint("latency", int(checked_size(m.group(1), i + 1)), line=i + 1)
            for name, value in _SUMMARY_FIELD.findall(m.group(2)):
                p.latency[_LAT_CELLS[name.lower()]] = checked(value, i + 1, name)
            if len(p.latency) >= 4:
                add(p, i)
            i += 1
            continue
        header = _header_kind(line.split(",")) if "," in line else None
        if header:  # a CSV table: rows until a line that is not one
            kind, fields = header
            names = [c.strip().strip('"') for c in line.split(",")][1:]
            i += 1
            while i < len(lines) and lines[i]:
                cells = [c.strip() for c in lines[i].split(",")]
                row = _point(kind, fields, names, cells, [i + 1] * len(cells))
                if row is None:
                    break
                add(row, i)
                i += 1
            continue
        if line and _cell(line) in _SIZE_CELLS:  # a table one cell a line: header cells, then values
            cells, at = [], []
            j = i
            while j < len(lines) and (not lines[j] or _cell(lines[j]) in _CELLS):
                if lines[j]:
                    cells.append(lines[j])
                j += 1
            header = _header_kind(cells)
            if header is None:
                i += 1
                continue
            kind, fields = header
            values: list[str] = []
            while j < len(lines) and (not lines[j] or _NUMBER.fullmatch(lines[j]) or _NOT_FINITE.fullmatch(lines[j])):
                if lines[j]:
                    values.append(lines[j])
                    at.append(j + 1)
                j += 1
            width = 1 + len(fields)
            for k in range(0, len(values) - width + 1, width):
                add(_point(kind, fields, cells[1:], values[k:k + width], at[k:k + width]), at[k] - 1)
            i = j
            continue
        i += 1
    return points
