#!/usr/bin/env bash
# Session 41's harness rows, carrying .whl/ (FlashInfer's wheels), about 8 minutes: FlashInfer's JIT warm-up in the
# background while issue 3's Triton rows run at B=1024 (masked and `select`, three requests, three distributions, fp32
# and bf16, `torch.topk` beside) and at B=1 / 16 / 64; then issue 6's masking rows, Numba beside `torch.topk`,
# FlashInfer and Triton (top-k 50, B=64 / 256 / 1024, fp32 and bf16).
#   bash docs/bench/next-session41/rows.sh "$(git rev-parse HEAD)"
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(harness rows; Numba beside FlashInfer)"
flashinfer_warmup flashinfer float32,bfloat16 300
run_bench triton1024 "$SHA" 150 --providers qrita-triton,qrita-triton-select,torch-topk \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1024
run_bench b1 "$SHA" 90 --providers qrita-triton,qrita-triton-select \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1,16,64
wait $FI
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 150 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256,1024
