#!/usr/bin/env bash
# Session 49, call 2 (about 8 minutes; carry .whl):  bash docs/bench/next-session49/call2.sh <SHA>
# Ran in session 49 at 0d5d723 (docs/bench/h100-2026-12-08/session49/ call 2, H100).  Since then the branch has no
# SCAN_PAIRED_ITEMS (its seds would change nothing): kept as the record of what ran, not to run again.
# 1. Numba's bf16 masking rows with the split scan's paired tiles at 16 entries a thread (SCAN_PAIRED_ITEMS = 16 by
#    sed in the device's copy; the harness checks every answer against the oracle), and main's beside it;
# 2. numba_ab.py --set mask_counts, then --set mask_blocks, as time allows;
# 3. on an H200, the Numba GPU suites (owed there since session 48), with the time left.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 49 call 2: bf16 rows with 16-entry scan tiles, A/Bs, suites on an H200)"
run_bench masked8 "$SHA" 70 --providers qrita-numba --scenarios topk50 --dists llm,gaussian --dtypes bf16 \
  --batches 64,256
sed -i 's/^SCAN_PAIRED_ITEMS = ITEMS$/SCAN_PAIRED_ITEMS = 2 * ITEMS/' qrita/backends/numba/kernels.py
grep -n "^SCAN_PAIRED_ITEMS" qrita/backends/numba/kernels.py >> "$P"
run_bench masked16 "$SHA" 70 --providers qrita-numba --scenarios topk50 --dists llm,gaussian --dtypes bf16 \
  --batches 64,256
sed -i 's/^SCAN_PAIRED_ITEMS = 2 \* ITEMS$/SCAN_PAIRED_ITEMS = ITEMS/' qrita/backends/numba/kernels.py
grep -n "^SCAN_PAIRED_ITEMS" qrita/backends/numba/kernels.py >> "$P"
run_ab mask_counts 120
grep -v -i warn /tmp/ab_mask_counts.log | tail -2 | cut -c1-300 >> "$P"
run_ab mask_blocks 90
grep -v -i warn /tmp/ab_mask_blocks.log | tail -2 | cut -c1-300 >> "$P"
left=$((540 - (SECONDS - T0)))
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && [ "$left" -gt 120 ]; then
  numba_gpu_suites "$left"
fi
echo "end t=$((SECONDS - T0))" >> "$P"
