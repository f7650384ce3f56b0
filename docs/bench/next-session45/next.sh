#!/usr/bin/env bash
# Session 46's first call (about 7 minutes; no carry), on main:  bash docs/bench/next-session45/next.sh <SHA>
# 1. The Numba GPU suites at main's exact tree (owed: session 45 refactored rank_select / rank_select_kp into shared
#    helpers after its GPU runs; checked then by the simulator and the sm_90 PTX only).  suite.log.
# 2. Where issue 6's B=64 masking time goes (Numba fp32 and bf16, LLM-like top-k 50, masked in place, per kernel) and
#    where issue 3's LLM-like top-p 0.9 and k100+p0.9 rows at B=1024 spend what top-k 50 does not (Triton, fp32,
#    masked in place, per kernel; the harness's LLM-like generator is `hllm`).  profile.log.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 46 call 1: Numba GPU suites owed; profiles for issues 6 and 3)"
numba_gpu_suites 260
{ for dt in float32 bfloat16; do
    timeout 60 python3 benchmarks/profile_triton.py --backend numba --B 64 --dist hllm --dtype $dt --cases k50
  done
  timeout 120 python3 benchmarks/profile_triton.py --B 1024 --dist hllm --cases k50,p0.9,k100p0.9
} > "$OUT/profile.log" 2>&1
echo "profiles rc=$? t=$((SECONDS - T0))" >> "$P"
