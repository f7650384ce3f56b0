#!/usr/bin/env bash
# Issue 3's Triton harness rows with TOPP_SPAN_CAP = 256 (about 5 minutes): B=1024 masked and `select` (three
# requests, three distributions, fp32 and bf16, torch.topk beside), then B=1 / 16 / 64. Five files: probe.log and
# two harness folders.
#   bash docs/bench/next-session42/triton_rows.sh <SHA>
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(issue 3: Triton rows with TOPP_SPAN_CAP 256)"
run_bench triton1024 "$SHA" 150 --providers qrita-triton,qrita-triton-select,torch-topk \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1024
run_bench b1 "$SHA" 90 --providers qrita-triton,qrita-triton-select \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1,16,64
