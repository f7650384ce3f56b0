#!/usr/bin/env bash
# Session 49, call 2 of 2 (about 6 minutes; carry .whl; on call 1's machine, still warm, so that FlashInfer's
# JIT build is there):  bash docs/bench/next-session49/call2.sh <SHA>
# 1. issue 6's masking rows: Numba / torch.topk / FlashInfer / Triton, top-k 50 in place, LLM-like and Gaussian,
#    fp32 and bf16, B = 64 and 256, then Numba's B=64 kernel profiles (main's options, mask_counts off);
# 2. numba_ab.py --set mask_blocks (mask_kernel compiled for 2 / 3 / 4 blocks an SM).
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 49 call 2: issue 6 rows, profiles, A/B mask_blocks)"
flashinfer_install
issue6_rows "$SHA" 150 35 '{}' '{"mask_counts": false}'
run_ab mask_blocks 120
grep -v -i warn /tmp/ab_mask_blocks.log | tail -2 | cut -c1-300 >> "$P"
