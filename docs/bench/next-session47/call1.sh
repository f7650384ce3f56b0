#!/usr/bin/env bash
# Session 47's first call (about 7.5 minutes; carry .whl):  bash docs/bench/next-session47/call1.sh <SHA>
# Session 46's planned next.sh (now gone) cut to what matters most, after 650 s of failed starts: 1. the Numba GPU
# suites at main's exact tree (owed: scan_prefetch and tie_index on by default), FlashInfer's JIT build beside them; 2. issue 6's
# masking rows (Numba / torch.topk / FlashInfer / Triton, top-k 50 in place, LLM-like and Gaussian, fp32 and bf16,
# B = 64 and 256); 3. numba_ab.py --set wide_buffer (as far as its limit reaches; a JSON line a case).
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 47 call 1: Numba GPU suites at main; issue 6 rows; wide_buffer A/B)"
flashinfer_warmup flashinfer float32,bfloat16 220
numba_gpu_suites 220
wait
summarize_suites backend conf32 conf16 confrest
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 60 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256
run_ab wide_buffer 110
grep -v -i warn /tmp/ab_wide_buffer.log | tail -3 >> "$P"
