#!/usr/bin/env bash
# Session 45's second call (about 3-8 minutes; no carry), on main:
#   bash docs/bench/next-session45/call2.sh <SHA>
# 1. numba_ab.py --set cut_long: cut_split off / on (cut_in_mask on, main's default) on rows of 2**19 at B = 34,
#    48, 66 (where only cut_split applies) and at V = 131072, B = 64 (where cut_in_mask shadows it); the same
#    bits expected.  ab_cut_long.json.
# 2. Where the GPU is an H200: issue 3's Triton rows (docs/bench/next-session42/triton_rows.sh's two harness runs).
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 45 call 2: cut_long A/B; Triton rows on an H200)"
run_ab cut_long 150
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  run_bench triton1024 "$SHA" 150 --providers qrita-triton,qrita-triton-select,torch-topk \
    --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1024
  run_bench b1 "$SHA" 90 --providers qrita-triton,qrita-triton-select \
    --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1,16,64
fi
