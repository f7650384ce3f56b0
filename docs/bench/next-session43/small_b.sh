#!/usr/bin/env bash
# Numba at B=1 and 4 (about 2 minutes):  bash docs/bench/next-session43/small_b.sh <SHA>
# The automatic split gives a row at most V // SPLIT_MIN_ENTRIES blocks (16 at V=131072), so B=1 runs 16 blocks
# and B=4 64 on a GPU of 132 SMs; benchmarks/numba_ab.py --set small_b measures 16 (auto) against 32 and 64 blocks
# a row (the option split), top-k 50, top-p 0.9 and k100+p0.9, fp32, the same bits required.  Then the harness's
# B=1 / 4 rows of Numba beside Triton (select and masked).  Files: probe.log, ab_small_b.json, b1/results.{json,md}.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(Numba at B=1 and 4: the split's blocks a row)"
run_ab small_b 90
grep -v -i warn /tmp/ab_small_b.log | grep -v '^{' | tail -3 >> "$P"
run_bench b1 "$SHA" 60 --providers qrita-numba,qrita-numba-select,qrita-triton,qrita-triton-select \
  --scenarios topk50,topp0.9,k100p0.9 --dists llm,gaussian,zipf --dtypes fp32 --batches 1,4
