#!/usr/bin/env bash
# next/numba-cut-split on the GPU (one device call of at most about 6 minutes), from the repository root; give the
# SHA from this machine (the device's copy of the tree has no branch):
#   bash docs/bench/next-numba-cut-split/run.sh <SHA>
# ab_cut_split.json: benchmarks/numba_ab.py --set cut_split (masking top-k 50 with the cut index reading the row from
# its start / from the segment cut_count_kernel found, B=16/64/256/1024, fp32 and bf16, CUDA-graph medians, every
# masked output compared bit for bit); then the Numba backend's GPU tests and its conformance suite at real shapes
# with cut_split on (the branch's default), summarised into suite.log.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(next/numba-cut-split: A/B, suites)"
run_ab cut_split 130
tail -30 /tmp/ab_cut_split.log >> "$P"
numba_gpu_suites 220
