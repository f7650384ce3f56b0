#!/usr/bin/env bash
# Branch next/numba-mask-counts, call 2 of 2 (about 9 minutes; carry .whl; on call 1's machine, still warm, for
# FlashInfer's JIT build):  bash docs/bench/next-numba-mask-counts/call2.sh <SHA>
# 1. numba_ab.py --set mask_counts: the count kernel / the mask blocks' own counts, each with tie_index on and off;
#    the same bits asked of all four; graph medians of select and of masking in place; then
#    numba_ab.py --set mask_blocks (mask_kernel compiled for 2 / 3 / 4 blocks an SM);
# 2. issue 6's masking rows with a budget that covers them (session 47's next.sh, part 2): Numba / torch.topk /
#    FlashInfer / Triton, top-k 50 in place, LLM-like and Gaussian, fp32 and bf16, B = 64 and 256;
# 3. Numba B=64 profiles (torch.profiler, kernel times), fp32 and bf16, main's options and mask_counts off.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(branch next/numba-mask-counts call 2: A/B, issue 6 rows, profiles)"
flashinfer_install
run_ab mask_counts 190
grep -v -i warn /tmp/ab_mask_counts.log | tail -2 | cut -c1-300 >> "$P"
run_ab mask_blocks 110
grep -v -i warn /tmp/ab_mask_blocks.log | tail -2 | cut -c1-300 >> "$P"
issue6_rows "$SHA" 110 35 '{}' '{"mask_counts": false}'
