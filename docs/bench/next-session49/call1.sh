#!/usr/bin/env bash
# Session 49, call 1 (about 9.5 minutes; carry .whl):  bash docs/bench/next-session49/call1.sh <SHA>
# Ran in session 49 at 0d5d723 (docs/bench/h100-2026-12-08/session49/ call 1, H100).  Since then the branch has no
# rank_claim (replaced by rank_tight) and no SCAN_PAIRED_ITEMS: kept as the record of what ran, not to run again.
# Branch next/numba-finish (main's kernels and defaults; options rank_claim and cut_regs, off; SCAN_PAIRED_ITEMS).
# FlashInfer's JIT build in the background, and meanwhile
# 1. the stamps probe with the finish's sub-stamps (fixed after session 48's call: where the finish's 12-19 us of
#    search go), B = 64 LLM-like top-k 50 masked in place, fp32 and bf16, main's options and rank_claim + cut_regs;
#    fp32 k100+p0.9; bf16 again with SCAN_PAIRED_ITEMS = 16 (sed in the device's copy, put back after);
# 2. numba_ab.py --set finish (rank_claim, cut_regs, both; the same bits asked);
# 3. issue 6's masking rows (Numba / torch.topk / FlashInfer / Triton, top-k 50, B = 64 and 256) and profiles.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 49 call 1: stamps probe, A/B finish, issue 6 rows)"
flashinfer_warmup flashinfer float32,bfloat16 400
{ timeout 90 python3 benchmarks/probe_stamps.py "$OUT/stamps.json" --B 64 --dtypes float32,bfloat16 --cases k50 \
    --options '{}' --options '{"rank_claim": true, "cut_regs": true}'
  timeout 45 python3 benchmarks/probe_stamps.py "$OUT/stamps.json" --B 64 --dtypes float32 --cases k100p0.9
  sed -i 's/^SCAN_PAIRED_ITEMS = ITEMS$/SCAN_PAIRED_ITEMS = 2 * ITEMS/' qrita/backends/numba/kernels.py
  grep -n "^SCAN_PAIRED_ITEMS" qrita/backends/numba/kernels.py
  timeout 60 python3 benchmarks/probe_stamps.py "$OUT/stamps16.json" --B 64 --dtypes bfloat16 --cases k50 --options '{}'
  sed -i 's/^SCAN_PAIRED_ITEMS = 2 \* ITEMS$/SCAN_PAIRED_ITEMS = ITEMS/' qrita/backends/numba/kernels.py
  grep -n "^SCAN_PAIRED_ITEMS" qrita/backends/numba/kernels.py
} > /tmp/stamps.log 2>&1
echo "stamps rc=$? t=$((SECONDS - T0))" >> "$P"
grep -v -i warn /tmp/stamps.log | tail -4 | cut -c1-300 >> "$P"
run_ab finish 150
grep -v -i warn /tmp/ab_finish.log | tail -2 | cut -c1-300 >> "$P"
wait "$FI"
left=$((540 - (SECONDS - T0)))
[ "$left" -gt 150 ] && left=150
[ "$left" -gt 40 ] && PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" "$left" \
  --providers qrita-numba,torch-topk,flashinfer,qrita-triton --scenarios topk50 --dists llm,gaussian \
  --dtypes fp32,bf16 --batches 64,256
echo "end t=$((SECONDS - T0))" >> "$P"
