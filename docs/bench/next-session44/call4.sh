#!/usr/bin/env bash
# Session 44's fourth call (about 9 minutes; carry .whl):  bash docs/bench/next-session44/call4.sh <SHA>
# split_waves on (main's default since this commit): the Numba GPU suites with it; beside them, the Triton
# conformance test of session 43's p-just-below-one fix (call 1 ran out of its 60 s compiling), and FlashInfer's
# JIT warm-up; then the per-kernel profile of Numba and Triton `select` at B=1 and 4 (profile.log); then issue 6's
# masking rows beside torch.topk, FlashInfer and Triton (top-k 50, B=16 / 64 / 256 / 1024).
# Files: probe.log, suite.log, profile.log, masked_fi/results.{json,md}.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(split_waves on: Numba GPU suites; Triton p fix; small-B profile; issue 6 rows)"
flashinfer_warmup flashinfer float32,bfloat16 300
run_suite p1 triton 300 -k "p_just_below_one or tiny_positive_p" tests/test_conformance.py &
numba_gpu_suites 280
wait
summarize_suites backend conf32 conf16 confrest p1
timeout 120 python3 docs/bench/next-session44/profile_small_b.py > "$OUT/profile.log" 2>&1
echo "profile rc=$? t=$((SECONDS - T0))" >> "$P"
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 200 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 16,64,256,1024
