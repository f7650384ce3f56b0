#!/usr/bin/env bash
# Harness rows with main's kernels, in one device call of at most about 8 minutes, carrying .whl/ (FlashInfer's
# wheels):
#   bash docs/bench/next-harness-rows/run.sh "$(git rev-parse HEAD)"   # the SHA from the local machine
# 1. issue 3: Triton masked in place and select, top-k 50 / top-p 0.9 / k100+p0.9, LLM-like / Gaussian / Zipf,
#    fp32 and bf16, B=1024, torch.topk masking beside (the first rows with sample_lanes on: session 31 measured it
#    by A/B on an H100 only), while FlashInfer's JIT builds;
# 2. issue 6: the split path's blocks a row (numba_ab.py --set splits, B=64 and 16);
# 3. issue 6: Numba masking with main's mask_loads (session 29; its GPU suites ran on an H100, its >2^31 cases
#    alone on an H100 in session 31) beside torch.topk, FlashInfer's top_k_mask_logits and Triton, top-k 50.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(harness rows)"
flashinfer_warmup flashinfer float32,bfloat16 300
run_bench triton1024 "$SHA" 150 --providers qrita-triton,qrita-triton-select,torch-topk \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1024
run_ab splits 100
wait $FI
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 170 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256,1024
grep -v -i warning /tmp/ab_splits.log | tail -30 >> "$P"
