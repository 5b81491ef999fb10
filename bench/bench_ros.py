#!/usr/bin/env python3
"""Benchmark: what the ROS layer costs, measured in the same run.

ros2 (rcl + rmw_fastrtps_cpp) against the Fast DDS it runs on, and ros1
(roscpp, TCPROS) against raw TCP, which is what TCPROS is: latency p50
(one-way, RTT/2) and throughput (samples/s, reliable, no pings), same
placement, interleaved, median of the repeats. Prints the overhead ratios
ros2/fastdds-jazzy and ros1/tcp. ros2's base is fastdds-jazzy, the fastdds
adapter built against the ROS 2 wheels' own Fast DDS 2.14 (the Debian fastdds
adapter is 2.9: another version); both with their default transport (shared
memory + UDP on one host), the same shared-memory settings, and both receiving
on a waitset (rcl's only way; the fastdds adapters default to a listener).
ros1 runs tcpros-nodelay, the tcp base TCP_NODELAY (its default): Nagle on
one side only would measure Nagle, not the ROS layer.

A benchmark, not a test: it prints numbers and never fails on them.
"""
from __future__ import annotations

import argparse
import sys

from common import PLACEMENTS, built, median, mwperf

PAIRS = (("ros2", "fastdds-jazzy"), ("ros1", "tcp"))
#: what each side runs beyond the pair's common options, so the pair differs only by the ROS layer
SIDE = {"fastdds-jazzy": ["--receive", "waitset"], "ros1": ["--transport", "tcpros-nodelay"]}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="64,1024,65536,1048576")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--placements", default="cross-core,same-core")
    a = ap.parse_args()
    have = built()
    pairs = [p for p in PAIRS if set(p) <= have]
    for ros, base in PAIRS:
        if (ros, base) not in pairs:
            print(f"bench: skipping {ros} vs {base}: the agent is built without {', '.join({ros, base} - have)}")
    print(f"# The ROS layer's cost: latency p50 us (one-way) and throughput samples/s, reliable; "
          f"median of {a.repeats} interleaved {a.seconds}s runs")
    print(f"{'placement':<11} {'pair':<18} {'size':>8} | {'base lat':>9} {'ros lat':>9} {'x':>5} | "
          f"{'base S/s':>10} {'ros S/s':>10} {'x':>5}")
    for place in a.placements.split(","):
        cores = PLACEMENTS[place]
        for ros, base in pairs:
            for size in (int(s) for s in a.sizes.split(",")):
                common = ["--size", str(size), "--duration", f"{a.seconds}s", "--cpu", f"{cores[0]},{cores[1]}",
                          "--reliability", "reliable"]
                lat = {ros: [], base: []}
                tput = {ros: [], base: []}
                for _ in range(a.repeats):
                    for mw in (base, ros):
                        side = [*common, *SIDE.get(mw, [])]
                        lat[mw].append(mwperf(["--mw", mw, "--mode", "latency", *side])["latency_us"]["p50"])
                        tput[mw].append(mwperf(["--mw", mw, "--mode", "throughput", "--latency-count", "0",
                                                *side])["samples_per_s"])
                bl, rl, bt, rt = median(lat[base]), median(lat[ros]), median(tput[base]), median(tput[ros])
                print(f"{place:<11} {ros + '/' + base:<18} {size:>8} | {bl:>9.2f} {rl:>9.2f} {rl / bl:>5.2f} | "
                      f"{bt:>10.0f} {rt:>10.0f} {rt / bt:>5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
