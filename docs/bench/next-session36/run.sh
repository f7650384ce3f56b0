#!/usr/bin/env bash
# Session 36 call 5, main's kernels (sample_wide on, numba-scan32 merged), carrying .whl/ (FlashInfer's wheels):
#   bash docs/bench/next-session36/run.sh "$(git rev-parse HEAD)"   (about 6 min)
# b1/: issue 3's small-batch rows (B = 1 and 16: select and masked, top-k 50 / top-p 0.9 / k100+p0.9, fp32 and
#   bf16), not measured since the sample cut; profile.log: per-kernel time of bf16 and fp32 masked top-k 50 on
#   LLM-like rows and of top-p 0.9 on Gaussian rows (where the time goes: bf16 masking is 0.93x fp32 and behind
#   FlashInfer's top_k_mask_logits); masked_fi/: issue 6's Numba masking with the 32-bit scan beside torch.topk,
#   FlashInfer and Triton.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 36: B=1 rows, profile, Numba beside FlashInfer)"
flashinfer_warmup flashinfer float32,bfloat16 300
run_bench b1 "$SHA" 100 --providers qrita-triton,qrita-triton-select,torch-topk \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1,16
for dt in bfloat16 float32; do
  python3 benchmarks/profile_triton.py --dist llm --dtype $dt --cases k50 >> "$OUT/profile.log" 2>&1
  python3 benchmarks/profile_triton.py --dist llm --dtype $dt --cases k50 --mode select >> "$OUT/profile.log" 2>&1
done
python3 benchmarks/profile_triton.py --dist gauss --dtype float32 --cases p0.9 >> "$OUT/profile.log" 2>&1
python3 benchmarks/profile_triton.py --dist zipf --dtype bfloat16 --cases p0.9 >> "$OUT/profile.log" 2>&1
echo "profiles t=$((SECONDS - T0))" >> "$P"
wait $FI
PYTHONPATH=/tmp/site:. run_bench masked_fi "$SHA" 150 --providers qrita-numba,torch-topk,flashinfer,qrita-triton \
  --scenarios topk50 --dists llm,gaussian --dtypes fp32,bf16 --batches 64,256,1024
