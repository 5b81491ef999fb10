#!/usr/bin/env python3
"""Benchmark: the reference sweep's 540 records into the DuckDB results store.

The points are plans/rate-matrix.yaml's own expansion (540 points: Cyclone
DDS and Fast DDS, 15 sizes x 11 rates x 2 reliabilities, less the points
over 20 Gbit/s). Measuring them takes 4.7 hours, so the records are
LABELLED COPIES: one real rate point per middleware is measured first (1 KiB,
1 kHz, best effort, 1 s), and each planned point's record is a copy of its
middleware's real record with the point's identity set (size, rate,
reliability, history, point index, point key, time); its figures are that
one real point's. The run id says so ("bench-store-copies-of-real-records").

Prints the ingest time (median of 3, each into a new DuckDB file; target
under 5 s) and, as ratios against anchors timed in the same run on the same
directory, mwperf.load (reading and checking results.jsonl into the frame)
and the Parquet export.

A benchmark, not a test: it prints numbers and never fails on them.
"""
from __future__ import annotations

import argparse
import copy
import datetime as dt
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import REPO, built, mwperf

sys.path.insert(0, str(REPO / "python"))

import mwperf as mwperf_lib  # noqa: E402
from mwperf.execute.agent import describe  # noqa: E402
from mwperf.export.parquet import Parquet  # noqa: E402
from mwperf.plan.sweep_plan import expand, load_plan  # noqa: E402
from mwperf.results import reading as rundir_module  # noqa: E402 - its cache of lines found valid
from mwperf.results.rundir import RunDir, read_records  # noqa: E402
from mwperf.store import opened  # noqa: E402
from mwperf.store.ingest import ingest_dir  # noqa: E402

RUN_ID = "bench-store-copies-of-real-records"


def copies(plan_path: Path, out: Path, agent: str) -> int:
    """The plan's points as copies of one real record per middleware, into ``out``."""
    points = expand(load_plan(plan_path), out=out, agent=agent, agent_info=describe(agent), note=lambda m: None)
    real = {}
    for mw in sorted({p.point.mw for p in points}):
        real[mw] = mwperf(["--agent", agent, "--mw", mw, "--mode", "rate", "--rate", "1000", "--size", "1k",
                           "--reliability", "best-effort", "--duration", "1s", "--warmup", "500ms"])
    rundir = RunDir(out).create()
    start = dt.datetime.now(dt.timezone.utc)
    for i, p in enumerate(points):
        r = copy.deepcopy(real[p.point.mw])
        r.pop("samples_file", None)  # its samples stay with the real point
        r.update(run_id=RUN_ID, point=i, size=p.point.size, rate_hz=p.point.rate_hz,
                 reliability=p.point.reliability or r["reliability"], point_key=p.point_hash, repetition=p.repetition,
                 time=(start + dt.timedelta(seconds=31 * i)).isoformat(timespec="milliseconds").replace("+00:00", "Z"))
        r["qos"]["history"] = p.point.history or r["qos"]["history"]
        rundir.append(r)
    rundir.write_run_json({"schema_version": 1, "run_id": RUN_ID, "status": "complete",
                           "started": start.isoformat(), "hostname": "bench",
                           "note": "records are labelled copies of one real record per middleware (bench_store.py)"})
    return len(points)


def timed(what, repeats: int) -> float:
    """Median seconds of ``what``, each time reading results.jsonl cold (as a new process does)."""
    times = []
    for _ in range(repeats):
        rundir_module._VALID_LINES.clear()
        t0 = time.perf_counter()
        what()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan", default=str(REPO / "plans" / "rate-matrix.yaml"))
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args()
    agent = str(REPO / "agent" / "build" / "mwperf-agent")
    plan = load_plan(a.plan)
    missing = set(plan.options.get("mw", ())) - built()
    if missing:
        print(f"bench: skipping the store benchmark: the agent is built without {', '.join(sorted(missing))}")
        return 0
    work = Path(tempfile.mkdtemp(prefix="mwperf-bench-store-"))
    try:
        run = work / "run"
        n = copies(Path(a.plan), run, agent)
        stores = iter(range(10_000))

        def ingest() -> None:
            with opened(str(work / f"store-{next(stores)}.duckdb"), write=True) as conn:
                assert ingest_dir(conn, run).outcome == "stored"

        ingest_s = timed(ingest, a.repeats)
        load_s = timed(lambda: mwperf_lib.load(run), a.repeats)
        parquet_s = timed(lambda: Parquet().write(read_records(run), RunDir(run)), a.repeats)
        print(f"# {n} records of {Path(a.plan).name} (labelled copies of one real record per middleware) into a "
              f"new DuckDB store; median of {a.repeats}")
        print(f"ingest: {ingest_s:.2f} s (target < 5 s); {1000 * ingest_s / n:.2f} ms a record")
        print(f"ingest / mwperf.load of the directory: {ingest_s / load_s:.2f} ({load_s:.2f} s)")
        print(f"ingest / Parquet export of the directory: {ingest_s / parquet_s:.2f} ({parquet_s:.2f} s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
