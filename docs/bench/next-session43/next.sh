#!/usr/bin/env bash
# The next session's first call (about 8 minutes; carry .whl):  bash docs/bench/next-session43/next.sh <SHA>
# Owed from session 43: the Numba backend's GPU tests with cut_in_mask on (main's default since session 43; its
# conformance suite at real shapes passed with it, the backend's 42 tests did not fit), with the whole
# numba_gpu_suites, FlashInfer's JIT warm-up in the background; then issue 6's masking rows: Numba beside
# torch.topk, FlashInfer and Triton (top-k 50, LLM-like and Gaussian, fp32 and bf16, B=16 / 64 / 256 / 1024).
# Files: probe.log, suite.log, masked_fi/results.{json,md}.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(owed Numba GPU suites with cut_in_mask; issue 6's rows beside FlashInfer)"
flashinfer_warmup flashinfer float32,bfloat16 300
numba_gpu_suites 260
wait
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 150 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 16,64,256,1024
