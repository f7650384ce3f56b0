#!/usr/bin/env bash
# Session 43's Numba call (one device call, about 8 minutes):  bash docs/bench/next-session43/run.sh <SHA>
# mask_words.py (mask_kernel's paired path with 4 / 8 / 16 words a thread, one process each; timings and the
# masked outputs' hashes), profile_cut.py (per-kernel times of bf16 masking at B=64 and 16, the cut-index
# segments off / 4 / 64 blocks an SM), the harness's masking rows (Numba beside Triton and torch.topk, top-k 50,
# fp32 and bf16, B=16 / 64 / 256 / 1024), then the Numba GPU suites.  Files: probe.log, mask_words.json,
# profile.log, masked/results.{json,md}, suite.log.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 43: mask words, cut segments, harness rows, Numba suites)"
for W in 4 8 16; do
  timeout 150 python3 docs/bench/next-session43/mask_words.py "$OUT/mask_words.json" $W > /tmp/mw$W.log 2>&1
  echo "mask_words $W rc=$? t=$((SECONDS - T0))" >> "$P"
  grep -v -i warn /tmp/mw$W.log | grep -v '^{' | tail -3 >> "$P"
done
timeout 90 python3 docs/bench/next-session43/profile_cut.py > "$OUT/profile.log" 2>&1
echo "profile rc=$? t=$((SECONDS - T0))" >> "$P"
run_bench masked "$SHA" 90 --providers qrita-numba,qrita-triton,torch-topk --scenarios topk50 \
  --dists llm,gaussian --dtypes fp32,bf16 --batches 16,64,256,1024
numba_gpu_suites 230
