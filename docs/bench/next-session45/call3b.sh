#!/usr/bin/env bash
# Session 45's third call (about 8 minutes; carry .whl), on branch next/numba-kp-rank (main's rank_groups, kp_mass,
# no cut_split, and kp_rank on):  bash docs/bench/next-session45/call3b.sh <SHA>
# numba_ab.py --set kp_rank first on a quiet GPU (FlashInfer's JIT build on the CPU beside it), then the Numba GPU
# suites (kp_rank on), then issue 6's masking rows beside torch.topk, FlashInfer and Triton (top-k 50, B=16 / 64 /
# 256 / 1024 planned; B=64 and 256 only, the device time being short).  Files: probe.log, ab_kp_rank.json, suite.log, masked_fi/results.{json,md}.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 45 call 3: kp_rank A/B; Numba GPU suites; issue 6 rows)"
flashinfer_warmup flashinfer float32,bfloat16 300
run_ab kp_rank 120
numba_gpu_suites 250
wait
summarize_suites backend conf32 conf16 confrest
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 90 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256
