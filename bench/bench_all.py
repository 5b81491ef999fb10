#!/usr/bin/env python3
"""Benchmark: every built middleware side by side with the raw UDP floor, same run.

One host, same core and cross core: latency p50 (one-way, RTT/2) at 32 B and
1 KiB with blocking waits, and with busy-polling (--wait spin) where the
middleware can be polled; throughput (samples/s, no pings) at 1 KiB. Each
row's ratio is to raw UDP measured in the same run (interleaved).

The projects' own tools: zenoh's z_ping/z_pong and z_pub_thr/z_sub_thr and
iceoryx2's publish-subscribe benchmark live in their repositories' example
and benchmark crates, which crates.io does not ship, so they are not run
here; their published figures (iceoryx2 ~0.1 us one-way between busy-polling
threads; zenoh ~10 us median and ~4.3 M msg/s at 8 B, on other machines) are
context, not a comparison.

A benchmark, not a test: it prints numbers and never fails on them.
"""
from __future__ import annotations

import argparse
import sys

from common import PLACEMENTS, built, median, mwperf

ORDER = ("udp", "tcp", "cyclonedds", "fastdds", "connext", "iceoryx", "iceoryx2", "zenoh", "ros1", "ros2")


def describe_waits() -> dict[str, tuple[str, ...]]:
    import json
    import subprocess
    from common import REPO
    lines = subprocess.run([str(REPO / "agent" / "build" / "mwperf-agent"), "list"], capture_output=True,
                           text=True, check=True).stdout.splitlines()
    return {e["name"]: tuple(e.get("waits", ["block"])) for e in map(json.loads, lines) if e.get("event") == "adapter"}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--placements", default="cross-core,same-core")
    a = ap.parse_args()
    have = built()
    waits = describe_waits()
    mws = [mw for mw in ORDER if mw in have]
    print(f"# Every middleware on one host: latency p50 us (one-way), throughput samples/s at 1 KiB; "
          f"x = ratio to raw UDP; median of {a.repeats} interleaved {a.seconds}s runs")
    for place in a.placements.split(","):
        cores = PLACEMENTS[place]
        common = ["--duration", f"{a.seconds}s", "--cpu", f"{cores[0]},{cores[1]}"]
        rows: dict[str, dict[str, list[float]]] = {mw: {} for mw in mws}
        failures: list[str] = []

        def measure(mw: str, key: str, args: list[str], value) -> None:
            # A point that fails is a finding, printed under the table; the benchmark goes on.
            try:
                rows[mw].setdefault(key, []).append(value(mwperf(["--mw", mw, *args, *common])))
            except RuntimeError as exc:
                failures.append(f"{mw} {key}: {str(exc).splitlines()[0][-160:]}")

        for _ in range(a.repeats):
            for mw in mws:
                for size in (32, 1024):
                    measure(mw, f"lat{size}", ["--mode", "latency", "--size", str(size)],
                            lambda r: r["latency_us"]["p50"])
                if "spin" in waits.get(mw, ()) and place == "cross-core":
                    measure(mw, "spin", ["--mode", "latency", "--size", "1024", "--wait", "spin"],
                            lambda r: r["latency_us"]["p50"])
                measure(mw, "tput", ["--mode", "throughput", "--size", "1024", "--latency-count", "0"],
                        lambda r: r["samples_per_s"])
        print(f"\n## {place}")
        print(f"{'middleware':<11} | {'p50 32B':>8} {'x':>5} | {'p50 1KiB':>8} {'x':>5} | {'spin 1KiB':>9} {'x':>5} | "
              f"{'S/s 1KiB':>10} {'x':>5}")
        floor = {k: median(v) for k, v in rows["udp"].items()} if "udp" in rows else {}
        for mw in mws:
            m = {k: median(v) for k, v in rows[mw].items()}

            def cell(key: str, width: int, fmt: str) -> str:
                if key not in m:
                    return f"{'—':>{width}} {'':>5}"
                ratio = m[key] / floor[key] if floor.get(key) else float("nan")
                return f"{m[key]:>{width}{fmt}} {ratio:>5.2f}"
            print(f"{mw:<11} | {cell('lat32', 8, '.2f')} | {cell('lat1024', 8, '.2f')} | {cell('spin', 9, '.2f')} | "
                  f"{cell('tput', 10, '.0f')}")
        for line in failures:
            print(f"  failed: {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
