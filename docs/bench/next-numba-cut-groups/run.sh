#!/usr/bin/env bash
# next/numba-cut-groups on the GPU (torch, numba-cuda, pytest; no nox, no network).  Two calls from the
# repository root, the machine kept warm between them, the FlashInfer wheels carried in both (run's carry:
# [".whl"]); give the SHA from this machine (the device's copy of the tree has no branch: `git rev-parse` there
# names another commit):
#   bash docs/bench/next-numba-cut-groups/run.sh <SHA> suites    (about 5 min)
#     probe.log; suite.log: the Numba backend's GPU tests and its conformance suite at real shapes, side by side
#     (FlashInfer's JIT build beside them); ab_cut_groups.json: the masking's cut index, every chunk scanned /
#     a group of chunks counted first (top-k 50 in place, bf16 and fp32, B = 64 and 1024, LLM-like, Gaussian,
#     Zipf, same bits)
#   bash docs/bench/next-numba-cut-groups/run.sh <SHA> timings   (about 6 min; after "suites")
#     profile.log: the Numba masking's kernels at B=64, LLM-like top-k 50, bf16 and fp32, both ways, and Numba
#     select of LLM-like top-p 0.9 at B=16, two cuts off / on; masked_fi/: Numba masking beside torch.topk
#     masking, FlashInfer's top_k_mask_logits and Triton (top-k 50, LLM-like and Gaussian, fp32 and bf16,
#     B = 64, 256, 1024), issue 6's masking target
. benchmarks/device_lib.sh
device_start "$1" "(next/numba-cut-groups $2)"
if [ "${2:?suites or timings}" = suites ]; then
  numba_gpu_suites_fi 260
  run_ab cut_groups 120
  [ -n "$FI" ] && wait "$FI" && tail -4 /tmp/fi_warm.log >> "$P"
else
  for DT in bfloat16 float32; do
    echo "=== numba masked B=64 llm $DT" >> "$OUT/profile.log"
    timeout 40 python3 benchmarks/profile_triton.py --backend numba --mode masked --B 64 --dist llm --dtype $DT \
      --cases k50 --options '{"cut_groups": false}' --options '{}' >> "$OUT/profile.log" 2>&1
    echo "profile $DT t=$((SECONDS - T0))" >> "$P"
  done
  echo "=== numba select B=16 llm float32 top-p 0.9" >> "$OUT/profile.log"
  timeout 40 python3 benchmarks/profile_triton.py --backend numba --mode select --B 16 --dist llm \
    --cases p0.9 --options '{"two_cuts": false}' --options '{}' >> "$OUT/profile.log" 2>&1
  echo "profile B=16 t=$((SECONDS - T0))" >> "$P"
  flashinfer_install
  PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 200 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
    --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256,1024
fi
