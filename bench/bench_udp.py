#!/usr/bin/env python3
"""Benchmark: mwperf's raw UDP adapter against sockperf and iperf3, same run.

Latency: sockperf ping-pong (--full-rtt) as it comes (epoll on both sides)
and with plain blocking recvfrom (-F r, what mwperf's UDP adapter does), and
`mwperf run --mw udp --mode latency`, same sizes, same CPU placement (same
core and cross core), runs interleaved; prints RTT p50 and p99 ratios
mwperf/sockperf against each (target p50 <= 1.00).
Throughput: iperf3 UDP -b 0 -l 63000 and `mwperf run --mw udp --mode
throughput --size 63000`; prints the received-rate ratio (target >= 0.9).

This is a benchmark, not a test: it prints numbers and never fails on them.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import load

REPO = Path(__file__).resolve().parents[1]
MWPERF = str(REPO / ".venv" / "bin" / "mwperf") if (REPO / ".venv" / "bin" / "mwperf").exists() else "mwperf"
PLACEMENTS = {"same-core": (0, 0), "cross-core": (0, 1)}  # (client/pub core, server/sub core)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def sockperf_rtt(size: int, cores: tuple[int, int], seconds: int, iomux: list[str]) -> dict:
    port = free_port()
    feed = None
    if iomux:  # sockperf takes -F only with a feed file naming the connection
        fd, feed = tempfile.mkstemp(prefix="mwperf-sockperf-", suffix=".feed")
        os.write(fd, f"U:127.0.0.1:{port}\n".encode())
        os.close(fd)
        where = ["-f", feed, *iomux]
    else:
        where = ["-i", "127.0.0.1", "-p", str(port)]
    srv = subprocess.Popen(["taskset", "-c", str(cores[1]), "sockperf", "server", *where],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        out = subprocess.run(["taskset", "-c", str(cores[0]), "sockperf", "ping-pong", *where,
                              "-m", str(size), "-t", str(seconds), "--full-rtt"],
                             capture_output=True, text=True, timeout=seconds + 30).stdout
    finally:
        srv.terminate()
        srv.wait()
        if feed is not None:
            os.unlink(feed)
    pct = {float(m.group(1)): float(m.group(2))
           for m in re.finditer(r"percentile\s+([\d.]+)\s*=\s*([\d.]+)", out)}
    if 50.0 not in pct:
        raise RuntimeError(f"sockperf printed no percentiles:\n{out}")
    return {"p50": pct[50.0], "p99": pct[99.0]}


def mwperf_points(args: list[str]) -> list[dict]:
    out = Path(tempfile.mkdtemp(prefix="mwperf-bench-"))
    try:
        subprocess.run([MWPERF, "run", *args, "--out", str(out / "run")], check=False,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        return [json.loads(l) for l in (out / "run" / "results.jsonl").read_text().splitlines()]
    finally:
        shutil.rmtree(out, ignore_errors=True)


def mwperf_rtt(size: int, cores: tuple[int, int], seconds: int) -> dict:
    (p,) = mwperf_points(["--mw", "udp", "--mode", "latency", "--size", str(size),
                          "--cpu", f"{cores[0]},{cores[1]}", "--duration", f"{seconds}s"])
    if p["status"] != "ok":
        raise RuntimeError(f"mwperf point failed: {p['error']}")
    return {"p50": p["rtt_us"]["p50"], "p99": p["rtt_us"]["p99"]}


def iperf3_udp_gbps(size: int, cores: tuple[int, int], seconds: int) -> float:
    port = free_port()
    srv = subprocess.Popen(["taskset", "-c", str(cores[1]), "iperf3", "-s", "-1", "-B", "127.0.0.1",
                            "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)  # no probe connection: it would use up the one-off (-1) server
        out = subprocess.run(["taskset", "-c", str(cores[0]), "iperf3", "-c", "127.0.0.1", "-p", str(port),
                              "-u", "-b", "0", "-l", str(size), "-t", str(seconds), "-J"],
                             capture_output=True, text=True, timeout=seconds + 30).stdout
    finally:
        srv.wait(timeout=10)
    return json.loads(out)["end"]["sum_received"]["bits_per_second"] / 1e9


def mwperf_udp_gbps(size: int, cores: tuple[int, int], seconds: int) -> tuple[float, float]:
    (p,) = mwperf_points(["--mw", "udp", "--mode", "throughput", "--size", str(size),
                          "--cpu", f"{cores[0]},{cores[1]}", "--duration", f"{seconds}s"])
    if p["status"] != "ok":
        raise RuntimeError(f"mwperf point failed: {p['error']}")
    return p["mbps"] / 1e3, p["loss_rate"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="32,1024,8192,63000")
    ap.add_argument("--repeats", type=int, default=3, help="interleaved runs per tool; medians reported")
    ap.add_argument("--seconds", type=int, default=3)
    ap.add_argument("--placements", default=",".join(PLACEMENTS))
    ap.add_argument("--only", default="latency,throughput", help="sections to run")
    a = ap.parse_args()
    for tool in ("sockperf", "iperf3", "taskset"):
        if not shutil.which(tool):
            print(f"bench: {tool} is not installed (make setup installs it)", file=sys.stderr)
            return 2
    if (os.cpu_count() or 1) < 2:
        print("bench: needs 2 CPUs for the cross-core placement", file=sys.stderr)
        return 2
    sizes = [int(s) for s in a.sizes.split(",")]

    places = {p: PLACEMENTS[p] for p in a.placements.split(",")}
    if "latency" in a.only.split(","):
        latency_section(a, sizes, places)
    if "throughput" in a.only.split(","):
        throughput_section(a, places)
    return 0


def latency_section(a, sizes: list[int], places: dict) -> None:
    variants = {"default": [], "recvfrom": ["-F", "r"]}
    print(f"# UDP ping-pong RTT, mwperf vs sockperf as it comes and with -F r "
          f"(us; median of {a.repeats} interleaved {a.seconds}s runs)")
    print(f"{'placement':<11} {'size':>6} | {'mwperf p50':>10} {'p99':>8} | "
          + " | ".join(f"{'sockperf ' + v + ' p50':>22} {'ratio':>6} {'p99':>8} {'ratio':>6}" for v in variants))
    for name, cores in places.items():
        for size in sizes:
            sp = {v: [] for v in variants}
            mw = []
            for _ in range(a.repeats):
                for v, iomux in variants.items():
                    sp[v].append(sockperf_rtt(size, cores, a.seconds, iomux))
                mw.append(mwperf_rtt(size, cores, a.seconds))
            m50, m99 = statistics.median(r["p50"] for r in mw), statistics.median(r["p99"] for r in mw)
            cells = []
            for v in variants:
                s50, s99 = statistics.median(r["p50"] for r in sp[v]), statistics.median(r["p99"] for r in sp[v])
                cells.append(f"{s50:>22.2f} {m50 / s50:>6.2f} {s99:>8.2f} {m99 / s99:>6.2f}")
            print(f"{name:<11} {size:>6} | {m50:>10.2f} {m99:>8.2f} | " + " | ".join(cells))
            for v in variants:  # each repeat is a pair: its p50 ratio
                pairs = sorted(m["p50"] / s["p50"] for m, s in zip(mw, sp[v]))
                print(f"  pairs vs sockperf {v}: p50 ratio median {statistics.median(pairs):.2f} "
                      f"[{pairs[0]:.2f}, {pairs[-1]:.2f}]; mwperf " + " ".join(f"{m['p50']:.2f}" for m in mw)
                      + "; sockperf " + " ".join(f"{s['p50']:.2f}" for s in sp[v]) + f"; load {load()}")


def throughput_section(a, places: dict) -> None:
    print(f"\n# UDP throughput at 63000 B, mwperf vs iperf3 -u -b 0 (received Gbit/s, median of {a.repeats})")
    print(f"{'placement':<11} | {'iperf3':>8} {'mwperf':>8} {'ratio':>6} | {'mwperf loss':>11}")
    for name, cores in places.items():
        ip, mw, loss = [], [], []
        for _ in range(a.repeats):
            ip.append(iperf3_udp_gbps(63000, cores, a.seconds))
            g, l = mwperf_udp_gbps(63000, cores, a.seconds)
            mw.append(g)
            loss.append(l)
        i, m = statistics.median(ip), statistics.median(mw)
        print(f"{name:<11} | {i:>8.2f} {m:>8.2f} {m / i:>6.2f} | {statistics.median(loss):>10.2%}")


if __name__ == "__main__":
    sys.exit(main())
