#!/usr/bin/env bash
# Session 28's last device call, from the repository root on the GPU (torch, numba-cuda, pytest; no nox, no
# network), with the FlashInfer wheels carried (run's carry: [".whl"]); about 6 min, steps in order of need
# (a later one may be cut by the device time left):
#   bash docs/bench/h100-2026-12-05/session28/run.sh <SHA>
# probe.log; suite.log: the Numba backend's GPU tests and its conformance suite at real shapes, side by side,
# FlashInfer's JIT build beside them; ab_cut.json: the masking's cut index, every chunk scanned / each chunk
# counted first (top-k 50, bf16 and fp32, B = 64 and 1024, same bits); ab_rank_live.json: rank_select off,
# then on once at most 512 / 256 keys are live (top-k 50 and 100 alone and with top-p 0.9, B = 16, two at
# 1024, same bits); masked_fi/: Numba masking beside torch.topk masking, FlashInfer's top_k_mask_logits and
# Triton at B=64 (fp32, bf16); select/: the B=16 k100+p0.9 and top-p 0.9 rows, Numba beside Triton;
# profile.log: the Numba masking's kernels at B=64, LLM-like top-k 50, fp32 and bf16
. benchmarks/device_lib.sh
device_start "$1" "(session 28, last call)"
numba_gpu_suites_fi 230
run_ab cut 80  # the set, and option cut_count, were reverted after this call
run_ab rank_live 100
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 50 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64
run_bench select "$SHA" 50 --providers qrita-triton-select,qrita-numba-select --scenarios k100p0.9,topp0.9 \
  --dists llm,gaussian --dtypes fp32 --batches 16
for DT in float32 bfloat16; do  # where the B=64 masking's time goes (cut index: every chunk scanned, then counted first)
  echo "=== numba masked B=64 llm $DT" >> "$OUT/profile.log"
  timeout 40 python3 benchmarks/profile_triton.py --backend numba --mode masked --B 64 --dist llm --dtype $DT \
    --cases k50 --options '{"cut_count": false}' --options '{}' 2>&1 | grep -v -i warn >> "$OUT/profile.log"
  echo "profile $DT t=$((SECONDS - T0))" >> "$P"
done
