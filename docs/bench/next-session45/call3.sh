#!/usr/bin/env bash
# Session 45's third call (about 9 minutes; carry .whl), on main with rank_groups and kp_mass on and cut_split gone:
#   bash docs/bench/next-session45/call3.sh <SHA>
# The Numba GPU suites beside FlashInfer's JIT warm-up (suite.log); then issue 6's masking rows beside torch.topk,
# FlashInfer and Triton (top-k 50, B=16 / 64 / 256 / 1024: masked_fi/; call 1 has B=1 / 16 / 1024 of Numba beside Triton).
# Files: probe.log, suite.log, masked_fi/results.{json,md}.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 45 call 3: Numba GPU suites; issue 6 rows)"
flashinfer_warmup flashinfer float32,bfloat16 300
numba_gpu_suites 260
wait
summarize_suites backend conf32 conf16 confrest
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 150 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 16,64,256,1024
