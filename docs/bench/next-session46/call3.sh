#!/usr/bin/env bash
# Session 46's third call (about 4 minutes; no carry):  bash docs/bench/next-session46/call3.sh <SHA>
# The Numba GPU suites at main's exact tree (the defaults after call 2's A/B), then the harness at B = 64 (top-k 50
# masked in place, LLM-like, fp32 and bf16: Numba beside Triton and torch.topk).
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 46 call 3: Numba GPU suites at the new defaults; harness B=64)"
numba_gpu_suites 220
run_bench b64 "$1" 40 --providers qrita-numba,qrita-triton,torch-topk --scenarios topk50 --dists llm \
  --dtypes fp32,bf16 --batches 64
