#!/usr/bin/env python3
"""Benchmark: the CI gate's false alarms on this machine, with no change at all.

RUNS `mwperf run`s of the same configuration (default: udp and cyclonedds,
latency, 1 KiB, 2 s a point: each point its default launches), one after
another, then every pair of them compared as the CI example does:
`mwperf compare A B --fail-if-slower 5 --fail-if-lossier 1` (the earlier run
the baseline). Nothing changed between the runs, so every failed pair (exit
1) is a false alarm; a pair that cannot decide (exit 3) is counted apart.
Issue 36 asks for at most 2 failed pairs of 45 (ten runs).

A benchmark, not a test: it prints counts and never fails on them.
"""
from __future__ import annotations

import argparse
import itertools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import MWPERF, load  # noqa: E402

GATE = ["--fail-if-slower", "5", "--fail-if-lossier", "1"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--mw", default="udp,cyclonedds")
    parser.add_argument("--size", default="1k")
    parser.add_argument("--duration", default="2s")
    parser.add_argument("--launches", help="launches a point (default: mwperf's)")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="mwperf-bench-gates-"))
    try:
        print(f"load before: {load()}")
        dirs = []
        started = time.monotonic()
        for i in range(args.runs):
            out = base / f"run{i:02d}"
            argv = [MWPERF, "run", "--mw", args.mw, "--mode", "latency", "--size", args.size, "--duration",
                    args.duration, "--no-floor", "--db", "none", "--out", str(out)]
            if args.launches:
                argv += ["--launches", args.launches]
            subprocess.run(argv, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900,
                           env={k: v for k, v in os.environ.items() if k != "MWPERF_LAUNCHES"})
            dirs.append(out)
        measured = time.monotonic() - started
        codes: Counter[int] = Counter()
        said: list[str] = []
        for a, b in itertools.combinations(dirs, 2):
            done = subprocess.run([MWPERF, "compare", str(a), str(b), *GATE], capture_output=True, text=True,
                                  check=False)
            codes[done.returncode] += 1
            said += [f"{a.name} vs {b.name}: {line}" for line in done.stdout.splitlines()
                     if line.startswith(("REGRESSION", "CANNOT DECIDE"))]
        print(f"load after: {load()}")
        pairs = sum(codes.values())
        print(f"{args.runs} runs of `mwperf run --mw {args.mw} --mode latency --size {args.size} --duration "
              f"{args.duration}` ({measured:.0f} s), {pairs} pairs compared with {' '.join(GATE)}:")
        print(f"  passed {codes[0]}, failed {codes[1]} (false alarms), cannot decide {codes[3]}, "
              f"other {pairs - codes[0] - codes[1] - codes[3]}")
        for line in said:
            print(f"  {line}")
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
