#!/usr/bin/env python3
"""Benchmark: what a point costs beyond its warm-up and measurement, per middleware.

For each middleware the agent is built with, one `mwperf run` of POINTS
latency points (sizes 32 B to 1 KiB, 200 ms of warm-up, 500 ms measured, no
floor) on loopback. Each record says where its time went on the
controller's clock (`phases`, mwperf.execute.phases): start-up (subscribers
started and ready), matching (publisher started, everyone matched), the
publisher's run (go to its result), drain (in-flight samples), close (its
exits), teardown (process groups, service and placement) and the
overhead: the point's total less the publisher's run. The whole run's wall
time, less the publishers' runs, divided by the points, adds what the
controller does between points (the record, results.csv) and once per run
(its start, clean-up, the report) shared among them.

Prints one line per middleware: medians over its points, in seconds, with
the target (<= 0.3 s of overhead per point for udp, tcp, cyclonedds and
iceoryx2). This is a benchmark, not a test: it prints numbers and never
fails on them.
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
from common import MWPERF, STARTUP_SIZES, built, median, wanted as choose  # noqa: E402

ORDER = ("udp", "tcp", "cyclonedds", "iceoryx2", "zenoh", "fastdds", "ros2", "connext", "iceoryx", "ros1")
TARGET_S = {"udp": 0.3, "tcp": 0.3, "cyclonedds": 0.3, "iceoryx2": 0.3}
SIZES = STARTUP_SIZES
PHASES = ("start_s", "match_s", "drain_s", "close_s", "teardown_s", "setup_s")


def run_points(mw: str, points: int, mode: str) -> tuple[list[dict], float]:
    """One run of ``points`` points of ``mw``; its records and its wall time."""
    out = Path(tempfile.mkdtemp(prefix="mwperf-bench-startup-"))
    args = [MWPERF, "run", "--mw", mw, "--mode", mode, "--size", ",".join(SIZES[:points]), "--warmup", "200ms",
            "--duration", "500ms", "--no-floor", "--db", "none", "--out", str(out / "run")]
    if mode == "rate":
        args += ["--rate", "1000"]
    try:
        started = time.monotonic()
        subprocess.run(args, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        wall = time.monotonic() - started
        text = (out / "run" / "results.jsonl").read_text() if (out / "run" / "results.jsonl").exists() else ""
        records = [json.loads(line) for line in text.splitlines() if line.strip()]
    finally:
        shutil.rmtree(out, ignore_errors=True)
    return records, wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mw", help="comma-separated middlewares (default: every built one)")
    parser.add_argument("--points", type=int, default=4, choices=range(2, len(SIZES) + 1), metavar="N",
                        help=f"points per middleware, 2 to {len(SIZES)} (default: 4)")
    parser.add_argument("--mode", default="latency", choices=("latency", "throughput", "rate"))
    args = parser.parse_args()
    have = built()
    wanted = choose(args.mw, have, ORDER, others=True)
    print(f"per-point overhead beyond the publisher's run (go to result), {args.mode} mode, medians of "
          f"{args.points} points, seconds")
    print(f"{'mw':<11}{'overhead':>9}{'target':>7}{'start':>7}{'match':>7}{'drain':>7}{'close':>7}"
          f"{'teardown':>9}{'setup':>7}{'per point in run':>17}")
    for mw in wanted:
        if mw not in have:
            print(f"{mw:<11}not built")
            continue
        records, wall = run_points(mw, args.points, args.mode)
        ok = [r for r in records if r.get("status") == "ok" and r.get("phases")]
        if not ok:
            reason = next((r.get("error") for r in records if r.get("error")), "no record")
            print(f"{mw:<11}failed: {reason}")
            continue
        phases = [r["phases"] for r in ok]
        overhead = median([p["overhead_s"] for p in phases])
        parts = [median([p[k] or 0.0 for p in phases]) for k in PHASES]
        per_point = (wall - sum(p["run_s"] or 0.0 for p in phases)) / len(ok)
        target = TARGET_S.get(mw)
        verdict = "" if target is None else (" ok" if overhead <= target else " OVER")
        print(f"{mw:<11}{overhead:>9.3f}{'' if target is None else f'{target:.1f}':>7}"
              + "".join(f"{v:>7.3f}" if k != "teardown_s" else f"{v:>9.3f}" for k, v in zip(PHASES, parts))
              + f"{per_point:>17.3f}{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
