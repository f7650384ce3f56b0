#!/usr/bin/env bash
# next/numba-cut-split on the GPU with FlashInfer beside (one device call of about 7-9 minutes; carry .whl):
#   bash docs/bench/next-numba-cut-split/run_fi.sh <SHA>
# FlashInfer's JIT warm-up in the background while benchmarks/numba_ab.py --set cut_split runs (the masking's cut
# index from the row's start / from its segment, every masked output compared bit for bit) and the Numba GPU suites
# run with cut_split on (the branch's default); then the harness's masking rows, Numba beside torch.topk,
# FlashInfer and Triton (top-k 50, B=64/256/1024, fp32 and bf16). Five files: probe.log, ab_cut_split.json,
# suite.log, masked_fi/results.{json,md}.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(next/numba-cut-split: A/B, suites, FlashInfer beside Numba masking)"
flashinfer_warmup flashinfer float32,bfloat16 300
run_ab cut_split 150
tail -30 /tmp/ab_cut_split.log >> "$P"
numba_gpu_suites 240
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 120 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256,1024
