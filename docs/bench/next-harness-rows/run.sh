#!/usr/bin/env bash
# Harness rows with main's kernels, in one device call of at most about 8.5 minutes, carrying .whl/ (FlashInfer's
# wheels):
#   bash docs/bench/next-harness-rows/run.sh "$(git rev-parse HEAD)"   # the SHA from the local machine
# (session 38 call 3 dropped step 0, the Triton backend's GPU tests other than test_real_shapes: in 140 s they ran
# none, compiling; the suites of a branch's own script run them)
# 1. issue 3: Triton masked in place and select, top-k 50 / top-p 0.9 / k100+p0.9, LLM-like / Gaussian / Zipf,
#    fp32 and bf16, B=1024, torch.topk masking beside (the first harness rows with sample_lanes and the sample cut);
# 2. issue 6: Numba masking with main's mask_loads (session 29; its GPU suites ran on an H100, its >2^31 cases
#    alone on an H100 in session 31) beside torch.topk, FlashInfer's top_k_mask_logits and Triton, top-k 50.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(harness rows)"
flashinfer_warmup flashinfer float32,bfloat16 300
run_bench triton1024 "$SHA" 150 --providers qrita-triton,qrita-triton-select,torch-topk \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1024
wait $FI
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 150 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256,1024
