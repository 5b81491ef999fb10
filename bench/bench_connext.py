#!/usr/bin/env python3
"""Benchmark: RTI Connext next to Cyclone DDS and Fast DDS, same run, interleaved.

Latency p50 (one-way, RTT/2), reliable KEEP_LAST 10, listener delivery (the
three adapters' default), at the sizes of RTI's Perftest tables. Each
repeat measures every column once before the next repeat starts, so a quiet
or a busy minute of the machine falls on all of them alike. The rows name
what differs:

* UDPv4 only: Cyclone DDS 0.10 (its one transport), Connext and Fast DDS with
  --transport udp; the ratio Connext / Cyclone compares the two on one path.
* shared memory and UDPv4: Connext's and Fast DDS's defaults
  (their builtin transports); the ratio Connext / Fast DDS.

Connext runs over DynamicData (the Connector's types; Perftest's generated
types would avoid that cost), the others over generated types: the ratio
includes it. Each cell is the median of the repeats; `spread` is
(max - min) / median over them, the machine's noise for that cell; the load
average before and after is printed.

A benchmark, not a test: it prints numbers and never fails on them.
"""
from __future__ import annotations

import argparse
import sys

from common import PLACEMENTS, built, load, median, mwperf

COLUMNS = {  # name: mwperf arguments
    "cyclonedds udp": ["--mw", "cyclonedds"],
    "connext udp": ["--mw", "connext", "--transport", "udp"],
    "fastdds udp": ["--mw", "fastdds", "--transport", "udp"],
    "connext shm+udp": ["--mw", "connext"],
    "fastdds shm+udp": ["--mw", "fastdds"],
}
RATIOS = (("connext udp", "cyclonedds udp"), ("connext udp", "fastdds udp"), ("connext shm+udp", "fastdds shm+udp"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="32,1024,8192,63000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--placements", default="cross-core,same-core")
    ap.add_argument("--columns", default=",".join(COLUMNS), help="which columns to measure")
    a = ap.parse_args()
    columns = {n: COLUMNS[n] for n in a.columns.split(",")}
    missing = {"connext", "cyclonedds", "fastdds"} - built()
    if missing:
        print(f"bench: the agent is built without {', '.join(sorted(missing))}", file=sys.stderr)
        return 2
    sizes = [int(s) for s in a.sizes.split(",")]
    print(f"# Connext next to Cyclone DDS and Fast DDS: latency p50 us (one-way), reliable keep-last:10, listener; "
          f"median of {a.repeats} interleaved {a.seconds}s runs; load average before: {load()}")
    for place in a.placements.split(","):
        cores = PLACEMENTS[place]
        common = ["--mode", "latency", "--duration", f"{a.seconds}s", "--cpu", f"{cores[0]},{cores[1]}",
                  "--reliability", "reliable", "--history", "keep-last:10", "--receive", "listener"]
        p50: dict[tuple[str, int], list[float]] = {}
        failures = []
        for _ in range(a.repeats):
            for size in sizes:
                for name, args in columns.items():
                    try:
                        rec = mwperf([*args, *common, "--size", str(size)])
                        p50.setdefault((name, size), []).append(rec["latency_us"]["p50"])
                    except RuntimeError as exc:
                        failures.append(f"{name} {size}: {str(exc).splitlines()[0][-160:]}")
        print(f"\n## {place}")
        print(f"{'size':>6} | " + " | ".join(f"{n:>15}" for n in columns) + " | "
              + " | ".join(f"{x.split()[0] + '/' + y:>23}" for x, y in RATIOS))
        for size in sizes:
            m = {n: median(p50[(n, size)]) for n in columns if p50.get((n, size))}
            cells = [f"{m[n]:>8.2f} ({_spread(p50[(n, size)]):>3.0%})" if n in m else f"{'—':>15}" for n in columns]
            ratios = [f"{m[x] / m[y]:>23.2f}" if x in m and y in m else f"{'—':>23}" for x, y in RATIOS]
            print(f"{size:>6} | " + " | ".join(cells) + " | " + " | ".join(ratios))
            for x, y in RATIOS:  # each repeat measured x and y back to back: the pairs' ratios
                pairs = sorted(u / v for u, v in zip(p50.get((x, size), []), p50.get((y, size), [])))
                if pairs:
                    print(f"  pairs {x}/{y} {size}: median {median(pairs):.2f} [{pairs[0]:.2f}, {pairs[-1]:.2f}]")
        for line in failures:
            print(f"  failed: {line}")
    print(f"\n(spread = (max - min) / median of the repeats; load average after: {load()})")
    return 0


def _spread(values: list[float]) -> float:
    return (max(values) - min(values)) / median(values) if len(values) > 1 else 0.0


if __name__ == "__main__":
    sys.exit(main())
