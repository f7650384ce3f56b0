#!/usr/bin/env bash
# next/numba-pairs on the GPU (one device call of at most about 9 minutes), from the repository root; give the
# SHA from this machine (the device's copy of the tree has no branch):
#   bash docs/bench/next-numba-pairs/run.sh <SHA>
# ab_pairs.json: benchmarks/numba_ab.py --set pairs on a quiet GPU (bf16 rows one 2-byte load an entry / two
# entries a 4-byte word; select and masked in place, CUDA-graph medians; every answer and masked output compared
# bit for bit); then the Numba backend's GPU tests and its conformance suite at real shapes with pairs on (the
# branch's default), summarised into suite.log.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(next/numba-pairs: A/B, suites)"
run_ab pairs 240
numba_gpu_suites 280
tail -20 /tmp/ab_pairs.log >> "$P"
