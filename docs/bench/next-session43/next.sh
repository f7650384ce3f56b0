#!/usr/bin/env bash
# The next session's first call (about 9 minutes; carry .whl):  bash docs/bench/next-session43/next.sh <SHA>
# First the A/B of the option split_waves (off on main: the automatic split's floor instead of ceiling of
# 2 * SMs / B blocks a row, one wave of the split passes), on a quiet GPU (FlashInfer's build is on the CPU).
# Owed from session 43: the Numba backend's GPU tests with cut_in_mask on (main's default since session 43; its
# conformance suite at real shapes passed with it, the backend's 42 tests did not fit), with the whole
# numba_gpu_suites, FlashInfer's JIT warm-up in the background; then issue 6's masking rows: Numba beside
# torch.topk, FlashInfer and Triton (top-k 50, LLM-like and Gaussian, fp32 and bf16, B=16 / 64 / 256 / 1024).
# Files: probe.log, ab_split_waves.json, suite.log, masked_fi/results.{json,md}.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(owed Numba GPU suites with cut_in_mask; issue 6's rows beside FlashInfer)"
flashinfer_warmup flashinfer float32,bfloat16 300
run_ab split_waves 100
grep -v -i warn /tmp/ab_split_waves.log | grep -v '^{' | tail -3 >> "$P"
numba_gpu_suites 260
wait
# session 43's Triton fix (a scalar p just below 1 planned as the kernels' float32) on the GPU: its conformance test
run_suite p1 triton 60 -k "p_just_below_one or tiny_positive_p" tests/test_conformance.py
summarize_suites backend conf32 conf16 confrest p1
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 100 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 16,64,256,1024
