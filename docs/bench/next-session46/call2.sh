#!/usr/bin/env bash
# Session 46's second call (about 7 minutes; no carry):  bash docs/bench/next-session46/call2.sh <SHA>
# 1. The GPU tests of the two new Numba options (scan_prefetch, tie_index): the split path's bits with the scan a
#    tile ahead, and the masked bits where the boundary group is cut (tie_index, with cut_in_mask on and off).
# 2. numba_ab.py --set scan_prefetch (plain / prefetch / prefetch + tie_index): bits compared, graph medians.
# 3. Per-kernel profiles at B=64, LLM-like top-k 50 masked, fp32 and bf16, defaults and both options on.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 46 call 2: scan_prefetch and tie_index A/B)"
run_suite opts "" 200 -m gpu -k "split_path_is_bit_identical or cut_in_mask_gives" tests/test_numba_backend.py
summarize_suites opts
timeout 330 python3 benchmarks/numba_ab.py "$OUT/ab_scan_prefetch.json" --set scan_prefetch > /tmp/ab.log 2>&1
echo "ab rc=$? t=$((SECONDS - T0))" >> "$P"
{ for dt in float32 bfloat16; do
    timeout 60 python3 benchmarks/profile_triton.py --backend numba --B 64 --dist hllm --dtype $dt --cases k50 \
      --options '{}' --options '{"scan_prefetch": true, "tie_index": true}'
  done
} > "$OUT/profile.log" 2>&1
echo "profiles rc=$? t=$((SECONDS - T0))" >> "$P"
