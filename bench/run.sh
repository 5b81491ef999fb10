#!/usr/bin/env bash
# Runs every benchmark; each prints its ratios against the reference tools.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python bench/bench_udp.py
echo
.venv/bin/python bench/bench_dds.py
