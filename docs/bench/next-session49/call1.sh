#!/usr/bin/env bash
# Session 49, call 1 of 2 (about 9.5 minutes; carry .whl):  bash docs/bench/next-session49/call1.sh <SHA>
# A fresh machine: FlashInfer's JIT build in the background for call 2's harness rows, and beside it
# 1. on an H200, the Numba GPU suites (owed on an H200 since session 48's mask_counts; on an H100 they ran in
#    session 48 and are skipped here);
# 2. the stamps probe with the finish's sub-stamps (fixed after session 48's call: where the finish's 12-19 us of
#    search go), B = 64 LLM-like top-k 50 masked in place, fp32 and bf16, and fp32 k100+p0.9;
# 3. numba_ab.py --set mask_counts (the count kernel / the mask blocks' own counts, the same bits asked).
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 49 call 1: Numba GPU suites on an H200, stamps probe, A/B mask_counts)"
flashinfer_warmup flashinfer float32,bfloat16 420
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  numba_gpu_suites 280
else
  echo "not an H200: the suites ran on an H100 in session 48, skipped" >> "$P"
fi
{ timeout 90 python3 benchmarks/probe_stamps.py "$OUT/stamps.json" --B 64 --dtypes float32,bfloat16 --cases k50 \
    --options '{}'
  timeout 45 python3 benchmarks/probe_stamps.py "$OUT/stamps.json" --B 64 --dtypes float32 --cases k100p0.9
} > /tmp/stamps.log 2>&1
echo "stamps rc=$? t=$((SECONDS - T0))" >> "$P"
grep -v -i warn /tmp/stamps.log | tail -3 | cut -c1-300 >> "$P"
left=$((560 - (SECONDS - T0)))
[ "$left" -gt 200 ] && left=200
[ "$left" -gt 30 ] && run_ab mask_counts "$left"
grep -v -i warn /tmp/ab_mask_counts.log 2>/dev/null | tail -2 | cut -c1-300 >> "$P"
wait
