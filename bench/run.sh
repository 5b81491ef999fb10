#!/usr/bin/env bash
# Runs every benchmark; each prints its ratios against the anchors measured in
# the same run. Run on a quiet machine: nothing else should share the cores.
set -euo pipefail
cd "$(dirname "$0")/.."
for bench in bench_udp bench_dds bench_ros bench_connext bench_all bench_store; do
  .venv/bin/python "bench/$bench.py"
  echo
done
