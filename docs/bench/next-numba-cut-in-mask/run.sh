#!/usr/bin/env bash
# next/numba-cut-in-mask on the GPU (one device call of about 6 minutes):
#   bash docs/bench/next-numba-cut-in-mask/run.sh <SHA>
# benchmarks/numba_ab.py --set cut_in_mask (the cut index kernel / the mask blocks settling the cut from their
# spans' counts; every masked output compared bit for bit; top-k 50 bf16 and fp32 at B=16/64/256/1024), the
# per-kernel profile of bf16 masking at B=64 and 256 both ways, then the Numba GPU suites with it on (the
# branch's default).  Files: probe.log, ab_cut_in_mask.json, profile.log, suite.log.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(next/numba-cut-in-mask: A/B, profile, Numba suites)"
run_ab cut_in_mask 150
grep -v -i warn /tmp/ab_cut_in_mask.log | grep -v '^{' | tail -3 >> "$P"
for B in 64 256; do
  timeout 60 python3 benchmarks/profile_triton.py --backend numba --mode masked --B $B --dist llm --dtype bfloat16 \
    --cases k50 --options '{"cut_in_mask": false}' --options '{"cut_in_mask": true}' 2>&1 | grep -v -i warn \
    >> "$OUT/profile.log"
done
echo "profile rc=$? t=$((SECONDS - T0))" >> "$P"
numba_gpu_suites 230
