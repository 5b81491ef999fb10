"""Cyclone DDS's ddsperf: its per-second lines.

Ping/pong (``size S mean Mus min .. 50% .. 90% .. 99% .. max .. cnt N``; the
latency it prints is already RTT/2) gives one latency point per size:
count, mean (weighted), min and max over every second; p50/p90/p99 are the
medians of the per-second percentiles (ddsperf prints no overall
percentile; the record says so). Sub lines (``size S total N lost M ... rate
R kS/s``) give one throughput point per size: totals of the last line, rate
the median of the per-second rates after the first second.
"""

from __future__ import annotations

import re
import statistics

from mwperf.imports.point import NUM, ImportedPoint, checked, checked_size

__all__ = ["parse_ddsperf"]

_DDS_LAT = re.compile(rf"size (\d+) mean ({NUM})us min ({NUM})us 50% ({NUM})us 90% ({NUM})us "
                      rf"99% ({NUM})us max ({NUM})us cnt (\d+)")
_DDS_SUB = re.compile(rf"^\[\d+\]\s+({NUM})\s+size (\d+) total (\d+) lost (\d+) delta \d+ lost \d+ "
                      rf"rate ({NUM}) kS/s ({NUM}) Mb/s")


def parse_ddsperf(text: str) -> list[ImportedPoint]:
    lat: dict[int, list[tuple]] = {}
    sub: dict[int, list[tuple]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        m = _DDS_LAT.search(line)
        if m:
            size = int(checked_size(m.group(1), number))
            # (mean, min, p50, p90, p99, max, cnt)
            cnt = int(checked(m.group(8), number, "cnt"))
            lat.setdefault(size, []).append(tuple(checked(v, number, name) for v, name in zip(
                m.groups()[1:7], ("mean", "min", "50%", "90%", "99%", "max"))) + (cnt,))
            continue
        m = _DDS_SUB.search(line.strip())
        if m:
            t, size_text, total, lost, rate, mbps = m.groups()
            counts = int(checked(total, number, "total")), int(checked(lost, number, "lost"))
            sub.setdefault(int(checked_size(size_text, number)), []).append(
                (float(t), *counts, checked(rate, number, "rate"), checked(mbps, number, "Mb/s")))
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
