#!/usr/bin/env bash
# Session 46's first call (about 8 minutes; no carry), on main:  bash docs/bench/next-session46/call1.sh <SHA>
# Session 45's next.sh (the owed Numba GPU suites at main's exact tree, then the per-kernel profiles for issues 6 and 3),
# then the harness with Numba beside Triton at B=1 and 4 (owed: session 45's B=1 ratios came from two calls).
set -u
bash docs/bench/next-session45/next.sh "${1:?commit SHA}"
. benchmarks/device_lib.sh
P=$OUT/probe.log
T0=$SECONDS
export PYTHONUNBUFFERED=1 PYTHONPATH=.
run_bench b1 "$1" 90 --providers qrita-numba,qrita-triton --scenarios topk50,k100p0.9 --dists llm,gaussian,zipf \
  --dtypes fp32 --batches 1,4
