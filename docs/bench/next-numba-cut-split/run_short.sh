#!/usr/bin/env bash
# next/numba-cut-split in about 4 minutes (a short device budget): the A/B (numba_ab.py --set cut_split) and then the
# Numba GPU suites, cut at 130 s (the backend's GPU tests take about 160 s on an H100: what passed is counted).
#   bash docs/bench/next-numba-cut-split/run_short.sh <SHA>
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(next/numba-cut-split: A/B, suites cut at 130 s)"
run_ab cut_split 90
tail -30 /tmp/ab_cut_split.log >> "$P"
numba_gpu_suites 130
