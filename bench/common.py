"""What the benchmarks share: one `mwperf run` point as its record."""
from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV_MWPERF = REPO / ".venv" / "bin" / "mwperf"
MWPERF = str(VENV_MWPERF) if VENV_MWPERF.exists() else "mwperf"
PLACEMENTS = {"cross-core": (0, 1), "same-core": (0, 0)}
#: A benchmark's point is one launch, as its anchors are (mwperf's default is several: bench_gates.py sets it back)
os.environ.setdefault("MWPERF_LAUNCHES", "1")


def mwperf(args: list[str]) -> dict:
    """One point; RuntimeError with the reason when it failed."""
    out = Path(tempfile.mkdtemp(prefix="mwperf-bench-"))
    try:
        subprocess.run([MWPERF, "run", *args, "--out", str(out / "run")], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=900)
        (rec,) = [json.loads(line) for line in (out / "run" / "results.jsonl").read_text().splitlines()]
    finally:
        shutil.rmtree(out, ignore_errors=True)
    if rec["status"] != "ok":
        raise RuntimeError(f"mwperf {' '.join(args)}: {rec['error']}")
    return rec


def built() -> set[str]:
    """The middlewares the agent is built with (its description of itself)."""
    agent = REPO / "agent" / "build" / "mwperf-agent"
    lines = subprocess.run([str(agent), "list"], capture_output=True, text=True, check=True).stdout.splitlines()
    return {e["name"] for e in map(json.loads, lines) if e.get("event") == "adapter"}


#: the message sizes the per-point start-up benchmarks step through (bench_startup, bench_reuse)
STARTUP_SIZES = ("32", "64", "128", "256", "512", "1k", "2k", "4k")


def wanted(mw_arg: str | None, have: set[str], order: tuple[str, ...], others: bool = False) -> list[str]:
    """The middlewares to benchmark: ``--mw``'s (built or not: the caller says which are not), else
    ``order``'s built ones, then (``others``) every other built one."""
    if mw_arg:
        return mw_arg.split(",")
    return [mw for mw in order if mw in have] + (sorted(have - set(order)) if others else [])


def median(values: list[float]) -> float:
    return statistics.median(values)


def load() -> str:
    """The load average (1, 5, 15 minutes), printed before and after a measurement."""
    return " ".join(f"{x:.2f}" for x in os.getloadavg())
