#!/usr/bin/env bash
# The Numba harness rows with main's mask_loads (session 29; its GPU suites ran on an H100 only) beside FlashInfer,
# torch.topk and Triton (issue 6's masking target), and the splits A/B, in one device call of at most about 6
# minutes, carrying .whl/ (FlashInfer's wheels).  (The three 16-bit >2^31 Numba cases passed alone on an H100 in
# session 31 call 5.)
#   bash docs/bench/next-numba-mask-loads/run.sh "$(git rev-parse HEAD)"   # the SHA from the local machine
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(mask_loads)"
flashinfer_warmup flashinfer float32,bfloat16 300
run_ab splits 120
wait $FI
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 190 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256,1024
grep -v -i warning /tmp/ab_splits.log | tail -30 >> "$P"
