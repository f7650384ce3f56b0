#!/usr/bin/env bash
# Harness rows with main's kernels (the wide geometry's 512-key slot since session 39), carrying .whl/ (FlashInfer's
# wheels): issue 3's Triton rows at B=1024 and issue 6's Numba masking beside FlashInfer, and the `spancap_topp`
# sweep (smaller slots for top-p rows, `select`; the interpreter hits LLM-like top-p 0.9 rows with 256) while
# FlashInfer warms up.  At most about 8 minutes (written for session 39, whose device time went to failed starts).
#   bash docs/bench/next-harness-rows/run.sh "$(git rev-parse HEAD)"
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(harness rows, spancap_topp)"
flashinfer_warmup flashinfer float32,bfloat16 300
run_bench triton1024 "$SHA" 150 --providers qrita-triton,qrita-triton-select,torch-topk \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1024
sweep_set spancap_topp spancap_topp 130
wait $FI
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 150 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256,1024
sweep_tails spancap_topp
