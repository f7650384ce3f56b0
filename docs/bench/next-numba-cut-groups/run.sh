#!/usr/bin/env bash
# next/numba-cut-groups on the GPU (torch, numba-cuda, pytest; no nox, no network), from the repository root,
# with the FlashInfer wheels carried (run's carry: [".whl"]); about 8 min; give the SHA from this machine (the
# device's copy of the tree has no branch: `git rev-parse` there names another commit):
#   bash docs/bench/next-numba-cut-groups/run.sh <SHA>
# probe.log; suite.log: the Numba backend's GPU tests and its conformance suite at real shapes, side by side
# (FlashInfer's JIT build beside them); ab_cut_groups.json: the masking's cut index, every chunk scanned /
# a group of chunks counted first (top-k 50 in place, bf16 and fp32, B = 64 and 1024, LLM-like, Gaussian,
# Zipf, same bits); profile.log: the Numba masking's kernels at B=64, LLM-like top-k 50, bf16 and fp32, both
# ways; masked_fi/: Numba masking beside torch.topk masking, FlashInfer's top_k_mask_logits and Triton
# (top-k 50, LLM-like and Gaussian, fp32 and bf16, B = 64, 256, 1024), issue 6's masking target
. benchmarks/device_lib.sh
device_start "$1" "(next/numba-cut-groups)"
numba_gpu_suites_fi 260
run_ab cut_groups 120
for DT in bfloat16 float32; do
  echo "=== numba masked B=64 llm $DT" >> "$OUT/profile.log"
  timeout 40 python3 benchmarks/profile_triton.py --backend numba --mode masked --B 64 --dist llm --dtype $DT \
    --cases k50 --options '{"cut_groups": false}' --options '{}' >> "$OUT/profile.log" 2>&1
  echo "profile $DT t=$((SECONDS - T0))" >> "$P"
done
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 200 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256,1024
