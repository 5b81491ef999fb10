#!/usr/bin/env python3
"""Benchmark: the echo's own copy inside the zero-copy middlewares' round trip (issue 36, item 5).

`mwperf run --mode latency` over iceoryx, iceoryx2 and zenoh (tcp, its default) at
64 B, 64 KiB, 1 MiB and 4 MiB, with two agents, runs interleaved: BEFORE, an agent
whose echo stages the whole message in a copy of its own before the adapter copies it
into its loan (`--before`, e.g. a copy of main's agent/build: the executable, adapters/
and roudi.toml), and AFTER, this tree's agent/build, whose echo writes into the
middleware's loan. Prints the RTT p50 of each and the ratio after/before, median of
the pairs [lowest pair, highest pair]: one pair is the two agents back to back in one
repeat, so a busy minute of the machine falls on both.

A benchmark, not a test: it prints numbers and never fails on them.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

from common import REPO, load, mwperf

SIZES = {"64B": 64, "64KiB": 64 << 10, "1MiB": 1 << 20, "4MiB": 4 << 20}


def rtt_p50_us(agent: Path, mw: str, size: int, seconds: float) -> float:
    rec = mwperf(["--mw", mw, "--mode", "latency", "--size", str(size), "--duration", f"{seconds}s",
                  "--warmup", "0.3s", "--agent", str(agent)])
    return float(rec["rtt_us"]["p50"])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, type=Path, help="the agent executable to compare against")
    ap.add_argument("--after", type=Path, default=REPO / "agent" / "build" / "mwperf-agent")
    ap.add_argument("--mw", default="iceoryx,iceoryx2,zenoh")
    ap.add_argument("--sizes", default=",".join(SIZES))
    ap.add_argument("--repeats", type=int, default=3, help="pairs per point")
    ap.add_argument("--seconds", type=float, default=1.0)
    a = ap.parse_args()
    for agent in (a.before, a.after):
        if not agent.is_file():
            print(f"bench_zerocopy: {agent}: no such agent", file=sys.stderr)
            return 2
    print(f"load before: {load()}")
    print(f"{'middleware':<10} {'size':>6} | {'before p50 us':>13} {'after p50 us':>13} | "
          f"{'after/before [lowest, highest pair]':<36} | per pair (before after)")
    for mw in a.mw.split(","):
        for name in a.sizes.split(","):
            size = SIZES[name]
            pairs = []
            for r in range(a.repeats):  # each repeat a pair; which agent goes first alternates
                order = (a.before, a.after) if r % 2 == 0 else (a.after, a.before)
                got = {agent: rtt_p50_us(agent, mw, size, a.seconds) for agent in order}
                pairs.append((got[a.before], got[a.after]))
            ratios = sorted(after / before for before, after in pairs)
            print(f"{mw:<10} {name:>6} | {statistics.median(b for b, _ in pairs):>13.1f} "
                  f"{statistics.median(x for _, x in pairs):>13.1f} | "
                  f"{statistics.median(ratios):>5.2f} [{ratios[0]:.2f}, {ratios[-1]:.2f}]{'':<21} | "
                  + " ".join(f"{b:.1f} {x:.1f}" for b, x in pairs), flush=True)
    print(f"load after: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
