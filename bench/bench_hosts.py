#!/usr/bin/env python3
"""What --hosts costs to put the far side in place: the bundles' sizes and
`mwperf hosts check` from an x86_64 controller to an x86_64 and an emulated
aarch64 host (the tests' lab: namespaces with sshd, nothing installed there),
the first time (each bundle copied and unpacked) and cached (found by its hash).

    bench/bench_hosts.py [ROUNDS]      (root; the bundles in bundles/: make bundle bundle-aarch64)

The aarch64 host runs under qemu-user-static: its unpacking time is the
emulator's, not a board's (a Raspberry Pi 4 unpacks faster than qemu here).
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "python" / "tests"))

import far_hosts  # the tests' lab
from far_fixtures import mwperf


def main() -> int:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    bundles = REPO / "bundles"
    archives = sorted(bundles.glob("mwperf-agent-*.tar.gz"))
    archs = {a.name.split("-")[3] for a in archives}
    if not {"x86_64", "aarch64"} <= archs:
        print("bench_hosts: make bundle bundle-aarch64 first (bundles/ lacks one)", file=sys.stderr)
        return 2
    why = far_hosts.possible()
    if why is not None:
        print(f"bench_hosts: the lab {why}", file=sys.stderr)
        return 2
    lab = far_hosts.build()
    try:
        x86, arm = lab.hosts["x86_64"], lab.hosts["aarch64"]
        hosts = f"pub={x86.target()},sub={arm.target()}"
        first, cached = [], []
        for _ in range(rounds):
            for host in (x86, arm):
                host.run("rm -rf /home/robot/.cache/mwperf", user="robot")
            for into in (first, cached):
                started = time.monotonic()
                done = mwperf(lab, "hosts", "check", "--hosts", hosts, "--bundles", str(bundles), timeout=900)
                into.append(time.monotonic() - started)
                if done.returncode != 0:
                    print(done.stderr, file=sys.stderr)
                    return 1
    finally:
        lab.close()
    for archive in archives:
        print(f"{archive.name}: {archive.stat().st_size / 1e6:.1f} MB")
    print(f"hosts check, x86_64 + aarch64 (emulated), {rounds} rounds: first time median "
          f"{statistics.median(first):.1f} s ({min(first):.1f}-{max(first):.1f}), cached median "
          f"{statistics.median(cached):.1f} s ({min(cached):.1f}-{max(cached):.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
