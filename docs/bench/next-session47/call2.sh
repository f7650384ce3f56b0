#!/usr/bin/env bash
# Session 47's second call (about 6 minutes; no carry):  bash docs/bench/next-session47/call2.sh <SHA>
# 1. numba_ab.py --set wide_buffer: the candidate buffer of a row that hit searched with 3-pivot rounds / with wide
#    rounds (option wide_buffer), last measured in session 25, before rank_select and the chunked bin scan; bits
#    compared, graph medians of select and masking in place.  Why: the split finish was 22-23 us of Numba's B=64
#    top-k 50 masking (H100, session 46 call 1's profile), a chain of 3-pivot rounds over a buffer of thousands.
# 2. Numba B=64 profiles (LLM-like top-k 50 masked, fp32 and bf16) with wide_buffer off, then on (profile.log).
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 47 call 2: Numba wide_buffer A/B)"
run_ab wide_buffer 330
grep -v -i warn /tmp/ab_wide_buffer.log | tail -4 >> "$P"
{ for dt in float32 bfloat16; do
    timeout 50 python3 benchmarks/profile_triton.py --backend numba --B 64 --dist hllm --dtype $dt --cases k50 \
      --options '{}' --options '{"wide_buffer": true}'
  done
} > "$OUT/profile.log" 2>&1
echo "profiles rc=$? t=$((SECONDS - T0))" >> "$P"
