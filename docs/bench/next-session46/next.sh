#!/usr/bin/env bash
# Session 47's first call (about 9 minutes; carry .whl), on main:  bash docs/bench/next-session46/next.sh <SHA>
# 1. The Numba GPU suites at main's exact tree (owed: session 46 turned scan_prefetch and tie_index on after call 2,
#    whose backend GPU tests stopped at their limit after 20 of 46 with both on), FlashInfer's JIT build beside them.
# 2. Issue 6's masking rows with the new defaults: Numba beside torch.topk, FlashInfer and Triton (top-k 50 masked in
#    place, LLM-like and Gaussian, fp32 and bf16, B = 64 and 256). 3. Numba B=64 profiles. Files: probe.log, suite.log,
#    masked_fi/, profile.log.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 47 call 1: Numba GPU suites at main; issue 6 rows beside FlashInfer)"
flashinfer_warmup flashinfer float32,bfloat16 300
numba_gpu_suites 280
wait
summarize_suites backend conf32 conf16 confrest
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 90 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256
# 3. Where Numba's B=64 masking goes with the new defaults (fp32 and bf16, LLM-like top-k 50): profile.log
{ for dt in float32 bfloat16; do
    timeout 60 python3 benchmarks/profile_triton.py --backend numba --B 64 --dist hllm --dtype $dt --cases k50
  done
} > "$OUT/profile.log" 2>&1
echo "profiles rc=$? t=$((SECONDS - T0))" >> "$P"
