#!/usr/bin/env bash
# next/numba-two-cuts on the GPU (torch, numba-cuda, pytest; no nox, no network).  Two calls, from the repository
# root, the machine kept warm between them:
#   bash docs/bench/next-numba-two-cuts/run.sh <SHA> timings   (about 7 min; quiet GPU)
#     probe.log, select/ and masked/results.{json,md}, ab_two_cuts.json, ab_rank_kp.json, profile.log: the harness's
#     issue-6 matrix (Numba select beside Triton select, fp32, B=1024 and 16, top-k 50 / k100+p0.9 / top-p 0.9 on
#     LLM-like, Gaussian and Zipf rows), Numba masking beside torch.topk masking and Triton (top-k 50, fp32 and bf16,
#     B=64 and 1024), the A/B two_cuts off / on (top-p 0.9 and 0.5, B=1024, 16, 1, same answers), the A/B
#     rank_select off / on / top-k stages only (k+p rows: which stage loses), the profile of LLM-like top-p 0.9
#     select at B=1024
#   bash docs/bench/next-numba-two-cuts/run.sh <SHA> suites    (about 4 min; up to 9 with FlashInfer's build)
#     probe.log, suite.log: the backend's GPU tests and the Numba conformance suite at real shapes, side by side;
#     with the FlashInfer wheels carried (run's carry: [".whl"]), FlashInfer's JIT build beside them
#   bash docs/bench/next-numba-two-cuts/run.sh <SHA> flashinfer   (about 8 min; carry .whl; after "suites")
#     probe.log, ab_fold.json, masked_fi/results.{json,md}: the A/B split_wide_fold off / on (top-p 0.9, B=16
#     and 1, same bits); Numba masking beside FlashInfer's top_k_mask_logits, torch.topk masking and Triton
#     (top-k 50, LLM-like and Gaussian, fp32 and bf16, B=64, 256, 1024)
. benchmarks/device_lib.sh
device_start "$1" "($2)"
PART=${2:?timings or suites}
if [ "$PART" = timings ]; then
  run_bench select "$SHA" 160 --providers qrita-triton-select,qrita-numba-select \
    --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32 --batches 1024,16
  run_bench masked "$SHA" 100 --providers qrita-numba,torch-topk,qrita-triton --scenarios topk50 \
    --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 64,1024
  timeout 90 python3 benchmarks/numba_ab.py $OUT/ab_two_cuts.json --set two_cuts > /tmp/ab.log 2>&1
  echo "ab rc=$? t=$((SECONDS-T0))" >> $P; grep -v -i warn /tmp/ab.log | grep -v '^{' | tail -3 >> $P
  timeout 80 python3 benchmarks/numba_ab.py $OUT/ab_rank_kp.json --set rank_kp > /tmp/abk.log 2>&1
  echo "ab rank_kp rc=$? t=$((SECONDS-T0))" >> $P; grep -v -i warn /tmp/abk.log | grep -v '^{' | tail -3 >> $P
  for B in 1024; do
    echo "=== numba select B=$B llm fp32" >> $OUT/profile.log
    timeout 40 python3 benchmarks/profile_triton.py --backend numba --mode select --B $B --dist llm \
      --cases p0.9 2>&1 | grep -v -i warn >> $OUT/profile.log
    echo "profile B=$B t=$((SECONDS-T0))" >> $P
  done
elif [ "$PART" = suites ]; then
  # FlashInfer's build (minutes of nvcc on the CPU) beside the suites, for the third call
  [ -d .whl ] && flashinfer_warmup flashinfer float32,bfloat16 520
  numba_gpu_suites 400
  [ -n "$FI" ] && wait $FI && tail -4 /tmp/fi_warm.log >> $P
else  # flashinfer: issue 6's masking target beside FlashInfer's top_k_mask_logits (after the suites call's build)
  timeout 50 python3 benchmarks/numba_ab.py $OUT/ab_fold.json --set fold > /tmp/abf.log 2>&1
  echo "ab fold rc=$? t=$((SECONDS-T0))" >> $P; grep -v -i warn /tmp/abf.log | grep -v '^{' | tail -3 >> $P
  flashinfer_install
  export PYTHONPATH=/tmp/site:.
  run_bench masked_fi "$SHA" 380 --providers qrita-numba,torch-topk,flashinfer,qrita-triton --scenarios topk50 \
    --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256,1024
fi
