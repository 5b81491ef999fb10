#!/usr/bin/env python3
"""Benchmark: what reusing one agent pair across points (--reuse-agents) saves, and what it changes.

For each middleware, ROUNDS rounds of two `mwperf run`s of POINTS latency
points (sizes 32 B up, 200 ms of warm-up, 300 ms measured, no floor) on
loopback, interleaved: fresh agents for every point, then one agent pair for
all of them (--reuse-agents). Per-point overhead: the run's wall time less
the publishers' runs (go to result), divided by the points: start-up,
matching, drain, close, the controller's own work and what each run does
once (its start, clean-up, the report), shared among its points. Also the
median of the records' own `overhead_s`. For the latency p50 the ratio
reused/fresh, per size, median over the rounds (1.00: reuse changed nothing
measurable; a pair's buffers are sized for its largest point).

Ratios are within this run only. A benchmark, not a test: it prints numbers
and never fails on them.
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import MWPERF, STARTUP_SIZES, built, load, median, wanted as choose  # noqa: E402

ORDER = ("udp", "tcp", "cyclonedds", "iceoryx2", "zenoh", "fastdds", "iceoryx", "ros1")
SIZES = STARTUP_SIZES


def run(mw: str, points: int, reuse: bool) -> tuple[list[dict], float]:
    """One run; its records and wall time."""
    out = Path(tempfile.mkdtemp(prefix="mwperf-bench-reuse-"))
    args = [MWPERF, "run", "--mw", mw, "--mode", "latency", "--size", ",".join(SIZES[:points]), "--warmup", "200ms",
            "--duration", "300ms", "--no-floor", "--db", "none", "--out", str(out / "run")]
    if reuse:
        args.append("--reuse-agents")
    try:
        started = time.monotonic()
        subprocess.run(args, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        wall = time.monotonic() - started
        path = out / "run" / "results.jsonl"
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return records, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mw", help=f"comma-separated middlewares (default: {','.join(ORDER)}, those built)")
    parser.add_argument("--points", type=int, default=4, choices=range(2, len(SIZES) + 1), metavar="N")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    have = built()
    wanted = choose(args.mw, have, ORDER)
    print(f"# per-point overhead (wall less publishers' runs, per point) fresh vs reused agents, seconds; "
          f"latency p50 ratio reused/fresh; {args.points} points x {args.rounds} interleaved rounds; load {load()}")
    print(f"{'mw':<11}{'fresh':>8}{'reused':>8}{'saved':>8}{'x':>7}{'rec fresh':>10}{'rec reused':>11}"
          f"{'p50 reused/fresh':>18}")
    for mw in wanted:
        if mw not in have:
            print(f"{mw:<11}not built")
            continue
        per = {False: [], True: []}
        own = {False: [], True: []}
        p50 = {False: {}, True: {}}
        failed = None
        for _ in range(args.rounds):
            for reuse in (False, True):
                records, wall = run(mw, args.points, reuse)
                ok = [r for r in records if r.get("status") == "ok" and r.get("phases")]
                if len(ok) != args.points:
                    failed = ("reused: " if reuse else "fresh: ") + \
                        next((r.get("error") for r in records if r.get("error")), "no record")
                    continue
                per[reuse].append((wall - sum(r["phases"]["run_s"] or 0.0 for r in ok)) / len(ok))
                own[reuse] += [r["phases"]["overhead_s"] for r in ok]
                for r in ok:
                    p50[reuse].setdefault(r["size"], []).append((r.get("latency_us") or {}).get("p50"))
        if not per[False] or not per[True]:
            print(f"{mw:<11}failed: {failed}")
            continue
        fresh, reused = median(per[False]), median(per[True])
        ratios = [median([b for b in p50[True][s] if b]) / median([a for a in p50[False][s] if a])
                  for s in p50[False] if s in p50[True] and any(p50[False][s]) and any(p50[True][s])]
        print(f"{mw:<11}{fresh:>8.3f}{reused:>8.3f}{fresh - reused:>8.3f}{fresh / reused:>7.1f}"
              f"{median(own[False]):>10.3f}{median(own[True]):>11.3f}"
              f"{median(ratios) if ratios else float('nan'):>18.2f}"
              + ("" if failed is None else f"  (some runs failed: {failed})"))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
