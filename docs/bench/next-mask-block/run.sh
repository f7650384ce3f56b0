#!/usr/bin/env bash
# The option mask_block on the GPU, main's kernels (one device call of at most about 9.5 minutes):
#   bash docs/bench/next-mask-block/run.sh "$(git rev-parse HEAD)"
# maskblock.json: benchmarks/sweep_triton.py --set maskblock on a quiet GPU (masked out of place, CUDA-graph
# medians, every row's bits against the default's): 8192 and 16384 entries a mask program against 4096, bf16 /
# fp16 / fp32, B = 64-1024; profile.log: LLM-like bf16 top-k 50 masking's kernels with 4096 and 8192; then the
# Triton GPU suites with MASK_BLOCK_16 = 8192 (a sed on the device's copy of launch.py, put back after).  Turn
# MASK_BLOCK_16 (and MASK_BLOCK, for fp32) up where every row of its width is faster.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(mask_block: sweep, profile, suites with MASK_BLOCK_16=8192)"
sweep_set maskblock maskblock 90
python3 benchmarks/profile_triton.py --dist llm --dtype bfloat16 --cases k50 --options '{}' \
  --options '{"mask_block": 8192}' > "$OUT/profile.log" 2>&1
echo "profile t=$((SECONDS - T0))" >> "$P"
suites_with_defaults "mask_block or fill_and_scatter or poisoned" MASK_BLOCK_16=8192
sweep_tails maskblock
