#!/usr/bin/env python3
"""Benchmark: mwperf's DDS adapters against ddsperf and the raw UDP floor, same run.

Cyclone DDS, against ddsperf's default and its waitset mode:
* latency: ddsperf ping/pong (it answers inside its listener, on Cyclone's
  receive thread) vs `mwperf run --mw cyclonedds --mode latency` (its default
  runs the core's handler in Cyclone's listener too); KEEP_LAST 1 reliable as
  ddsperf's ping/pong; one-way = RTT/2 on both sides; then both with waitsets.
  Prints the p50 ratio mwperf/ddsperf (target <= 1.05).
* throughput: ddsperf pub/sub as it comes (reliable KEEP_ALL, listener sub,
  batched writes) vs `--mode throughput --batch --history keep-all` with no
  pings; samples/s ratio (target >= 0.95).
* memory: peak RSS per side of ddsperf's ping/pong and of mwperf's agents
  (a raw UDP point maps no middleware: the adapters are plugins), as the
  ratio mwperf/ddsperf.
* precision: the same points with and without the adaptive stop,
  interleaved: the headline and its interval, the time saved, how many
  reached the precision and what the others said they would need.
Both tools use the same Cyclone configuration: the XML mwperf recorded for its
own run. Fast DDS ships no such tool: its numbers are printed next to raw UDP
measured in the same run.

A benchmark, not a test: it prints numbers and never fails on them.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from common import PLACEMENTS, load, mwperf


def per_second(lines: list[str], pattern: str) -> list[float]:
    vals = [float(m.group(1)) for l in lines if (m := re.search(pattern, l))]
    return vals[1:] if len(vals) > 2 else vals  # skip the first (partial) second


def ddsperf_pair(server: list[str], client: list[str], cores: tuple[int, int], secs: int, xml: str,
                 read_server: bool) -> list[str]:
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(xml)
    env = dict(os.environ, CYCLONEDDS_URI=f"file://{f.name}")
    try:
        srv = subprocess.Popen(["taskset", "-c", str(cores[1]), "ddsperf", "-D", str(secs + 2), *server],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        time.sleep(0.5)
        cli = subprocess.run(["taskset", "-c", str(cores[0]), "ddsperf", "-D", str(secs), *client],
                             capture_output=True, text=True, env=env, timeout=secs + 30)
        srv_out, _ = srv.communicate(timeout=secs + 30)
    finally:
        os.unlink(f.name)
    return (srv_out if read_server else cli.stdout).splitlines()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="32,1024,8192,63000")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--seconds", type=int, default=4)
    ap.add_argument("--placements", default="cross-core,same-core")
    ap.add_argument("--only", default="latency,throughput,memory,precision,fastdds", help="sections to run")
    ap.add_argument("--precision-max", default="10s", help="the precision section's maximum (fixed) duration")
    ap.add_argument("--modes", default="listener,waitset", help="the latency section's receive modes")
    a = ap.parse_args()
    if not shutil.which("ddsperf"):
        print("bench: ddsperf is not installed (cyclonedds-tools; make setup installs it)", file=sys.stderr)
        return 2
    sizes = [int(s) for s in a.sizes.split(",")]
    places = {p: PLACEMENTS[p] for p in a.placements.split(",")}
    dur = f"{a.seconds}s"

    only = set(a.only.split(","))
    if "latency" in only:
        latency_section(a, sizes, places, dur)
    if "throughput" in only:
        throughput_section(a, sizes, places, dur)
    if "memory" in only:
        memory_section(a, dur)
    if "precision" in only:
        precision_section(a, sizes, places, dur)
    if "fastdds" in only:
        fastdds_section(sizes, places, dur)
    return 0


def latency_section(a, sizes, places, dur) -> None:
    """mwperf's default Cyclone path (the core's handler in Cyclone's listener)
    against ddsperf's default ping/pong (which answers inside its listener),
    and both in waitset mode; KEEP_LAST 1 reliable, as ddsperf's ping/pong.
    Each repeat is one pair (mwperf then ddsperf, back to back); the ratio is
    the median of the pairs' ratios, with the lowest and highest pair."""
    modes = a.modes.split(",")
    print(f"# Cyclone DDS latency, one-way p50 us (RTT/2), reliable KEEP_LAST 1; {a.repeats} interleaved pairs "
          f"of {a.seconds}s runs; ratio mwperf/ddsperf: median of the pairs [lowest, highest]; load {load()}")
    print(f"{'placement':<11} {'size':>6} | " + " | ".join(
        f"{'ddsperf':>8} {'mwperf':>8} {'ratio':>6} {'[pairs]':>13} ({m})" for m in modes))
    for name, cores in places.items():
        for size in sizes:
            runs = {mode: ([], []) for mode in modes}
            for _ in range(a.repeats):
                for mode, (dp, mw) in runs.items():
                    rec = mwperf(["--mw", "cyclonedds", "--mode", "latency", "--size", str(size), "--duration", dur,
                                  "--cpu", f"{cores[0]},{cores[1]}", "--history", "keep-last:1",
                                  "--receive", mode, "--reliability", "reliable"])
                    mw.append(rec["latency_us"]["p50"])
                    lines = ddsperf_pair(["pong", mode], ["ping", "size", str(size), mode], cores,
                                         a.seconds, rec["adapter"]["config"]["xml"], read_server=False)
                    dp.append(statistics.median(per_second(lines, r" 50% ([\d.]+)us")))
            cells = []
            for mode, (dp, mw) in runs.items():
                d, m = statistics.median(dp), statistics.median(mw)
                pairs = sorted(x / y for x, y in zip(mw, dp))
                cells.append(f"{d:>8.2f} {m:>8.2f} {statistics.median(pairs):>6.2f} "
                             f"[{pairs[0]:.2f}, {pairs[-1]:.2f}]")
                print(f"  pairs {name} {size} {mode}: mwperf " + " ".join(f"{x:.2f}" for x in mw)
                      + " | ddsperf " + " ".join(f"{x:.2f}" for x in dp))
            print(f"{name:<11} {size:>6} | " + " | ".join(cells) + f"   load {load()}")


def throughput_section(a, sizes, places, dur) -> None:
    """ddsperf's default pub/sub (reliable KEEP_ALL, listener sub, writes
    batched) against mwperf with the same: --batch, keep-all, no pings."""
    print(f"\n# Cyclone DDS throughput, samples/s, reliable KEEP_ALL, as fast as possible, writes batched; "
          f"median of {a.repeats}")
    print(f"{'placement':<11} {'size':>6} | {'ddsperf':>10} {'mwperf':>10} {'ratio':>6}")
    for name, cores in places.items():
        for size in sizes:
            dp, mw = [], []
            for _ in range(a.repeats):
                rec = mwperf(["--mw", "cyclonedds", "--mode", "throughput", "--size", str(size), "--duration", dur,
                              "--cpu", f"{cores[0]},{cores[1]}", "--history", "keep-all",
                              "--reliability", "reliable", "--latency-count", "0", "--batch"])
                mw.append(rec["samples_per_s"])
                lines = ddsperf_pair(["sub"], ["pub", "size", str(size)], cores, a.seconds,
                                     rec["adapter"]["config"]["xml"], read_server=True)
                dp.append(1000 * statistics.median(per_second(lines, r" rate ([\d.]+) kS/s")))
            d, m = statistics.median(dp), statistics.median(mw)
            print(f"{name:<11} {size:>6} | {d:>10.0f} {m:>10.0f} {m / d:>6.2f}")


def ddsperf_peak_rss_kb(secs: int, xml: str) -> list[int]:
    """VmHWM (kB) of ddsperf's pong and ping, 1 KiB, read just before they
    end; with the Cyclone configuration mwperf recorded (loopback only)."""
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as f:
        f.write(xml)
    env = dict(os.environ, CYCLONEDDS_URI=f"file://{f.name}")
    try:
        procs = [subprocess.Popen(["ddsperf", "-D", str(secs), *role], stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, env=env) for role in (["pong"], ["ping", "size", "1024"])]
        time.sleep(secs - 0.5)
        peaks = []
        for p in procs:
            status = open(f"/proc/{p.pid}/status").read()
            peaks += [int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")]
            p.wait(timeout=30)
    finally:
        os.unlink(f.name)
    return peaks


def memory_section(a, dur) -> None:
    """Peak RSS per side: ddsperf ping/pong against mwperf's agents (the
    record's rss_kb, VmHWM at the end) of a udp and a cyclonedds latency point."""
    print(f"\n# Memory: peak RSS per side, MiB (max of the two sides), 1 KiB latency; median of {a.repeats}")
    print(f"{'tool':<22} {'MiB':>6} {'x ddsperf':>9}")
    runs: dict[str, list[float]] = {"ddsperf ping/pong": [], "mwperf udp": [], "mwperf cyclonedds": []}
    for _ in range(a.repeats):
        for mw in ("udp", "cyclonedds"):
            rec = mwperf(["--mw", mw, "--mode", "latency", "--size", "1024", "--duration", dur])
            runs[f"mwperf {mw}"].append(max(rec["rss_kb"].values()) / 1024)
        runs["ddsperf ping/pong"].append(max(ddsperf_peak_rss_kb(a.seconds, rec["adapter"]["config"]["xml"])) / 1024)
    base = statistics.median(runs["ddsperf ping/pong"])
    for tool, mib in runs.items():
        print(f"{tool:<22} {statistics.median(mib):>6.1f} {statistics.median(mib) / base:>9.2f}")


def precision_section(a, sizes, places, dur) -> None:
    """What the adaptive stop costs and saves: the same points with and
    without --precision 5 % (maximum --precision-max), interleaved. Cost:
    does the headline move (p99 of latency; received samples/s of a
    throughput point), and do the two runs' intervals overlap; saving: the
    measured time, and how many runs reached the precision (the others: the
    median of what they said they would need)."""
    print(f"\n# --precision 5% against fixed duration {a.precision_max}, {a.repeats} interleaved pairs; "
          "headline: p99 us one-way (throughput: samples/s); overlap: pairs whose 95 % intervals overlap")
    print(f"{'placement':<11} {'point':<20} | {'fixed':>9} {'adaptive':>9} {'ratio':>6} {'overlap':>7} | "
          f"{'fixed s':>7} {'adapt s':>7} {'saved':>6} {'reached':>7} {'needs':>8}")
    points = {"cyclonedds latency": ["--mw", "cyclonedds", "--mode", "latency", "--size", "1024"],
              "udp rate 10 kHz": ["--mw", "udp", "--mode", "rate", "--rate", "10000", "--size", "1024"],
              "udp throughput": ["--mw", "udp", "--mode", "throughput", "--size", "1024"]}
    for name, cores in places.items():
        for label, args in points.items():
            runs: dict[str, list[dict]] = {"fixed": [], "adaptive": []}
            for _ in range(a.repeats):
                common = [*args, "--duration", a.precision_max, "--cpu", f"{cores[0]},{cores[1]}"]
                runs["fixed"].append(mwperf(common))
                runs["adaptive"].append(mwperf([*common, "--precision", "5%"]))
            headline = [[_headline(r) for r in runs[k]] for k in ("fixed", "adaptive")]
            overlap = sum(_overlap(f, m) for f, m in zip(runs["fixed"], runs["adaptive"]))
            secs = [sum(r["elapsed_s"] for r in runs[k]) for k in ("fixed", "adaptive")]
            reached = sum(r["adaptive"]["converged_after_s"] is not None for r in runs["adaptive"])
            needs = [r["adaptive"]["needed_s"] for r in runs["adaptive"] if r["adaptive"].get("needed_s")]
            f, m = statistics.median(headline[0]), statistics.median(headline[1])
            print(f"{name:<11} {label:<20} | {f:>9.1f} {m:>9.1f} {m / f:>6.2f} {overlap:>3}/{a.repeats:<3} | "
                  f"{secs[0]:>7.1f} {secs[1]:>7.1f} {1 - secs[1] / secs[0]:>6.0%} {reached:>3}/{a.repeats:<3} "
                  f"{f'{statistics.median(needs):.0f} s' if needs else '-':>8}")


def _headline(rec: dict) -> float:
    return rec["samples_per_s"] if rec["mode"] == "throughput" else rec["latency_us"]["p99"]


def _overlap(fixed: dict, adaptive: dict) -> bool:
    """Do the two runs agree within their intervals (p99's; a throughput
    point's loss-free rate has none: within 5 %)?"""
    if fixed["mode"] == "throughput":
        return abs(adaptive["samples_per_s"] / fixed["samples_per_s"] - 1) <= 0.05
    a, b = fixed["latency_us"].get("p99_ci"), adaptive["latency_us"].get("p99_ci")
    return a is not None and b is not None and a[0] <= b[1] and b[0] <= a[1]


def fastdds_section(sizes, places, dur) -> None:
    print("\n# Fast DDS next to the raw UDP floor (mwperf, same run): latency p50 us one-way, "
          "throughput samples/s (best effort)")
    print(f"{'placement':<11} {'size':>6} | {'udp lat':>8} {'fastdds':>8} {'x':>6} | {'udp S/s':>10} {'fastdds':>10} {'x':>6}")
    for name, cores in places.items():
        for size in sizes:
            cpu = ["--cpu", f"{cores[0]},{cores[1]}", "--duration", dur, "--size", str(size)]
            ul = mwperf(["--mw", "udp", "--mode", "latency", *cpu])["latency_us"]["p50"]
            fl = mwperf(["--mw", "fastdds", "--mode", "latency", *cpu])["latency_us"]["p50"]
            ut = mwperf(["--mw", "udp", "--mode", "throughput", *cpu])["samples_per_s"]
            ft = mwperf(["--mw", "fastdds", "--mode", "throughput", "--reliability", "best-effort", *cpu])["samples_per_s"]
            print(f"{name:<11} {size:>6} | {ul:>8.2f} {fl:>8.2f} {fl / ul:>6.2f} | {ut:>10.0f} {ft:>10.0f} {ft / ut:>6.2f}")


if __name__ == "__main__":
    sys.exit(main())
