#!/usr/bin/env bash
# Session 40, one call (device time was short: starts failed): the option value_cmp against main's key compares
# (sweep_triton.py --set valuecmp, masked out of place, and per-kernel profiles of LLM-like top-k 50 masking), issue
# 3's harness rows at B=1024 with the 512-key slot, then the Triton GPU suites with VALUE_CMP = 2 as the default
# (a sed on the device's copy) until 585 s.  No FlashInfer (next-session41/rows.sh has the masking rows beside it).
#   bash docs/bench/next-session40/run.sh "$(git rev-parse HEAD)"
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 40: value_cmp A/B and profiles, harness rows, suites with VALUE_CMP = 2)"
sweep_set valuecmp valuecmp 120
for dt in bfloat16 float32; do
  timeout 60 python3 benchmarks/profile_triton.py --dist llm --dtype $dt --cases k50 --options '{}' \
    --options '{"value_cmp": 2}' >> "$OUT/profile.log" 2>&1
done
echo "profiles t=$((SECONDS - T0))" >> "$P"
run_bench triton1024 "$SHA" 140 --providers qrita-triton,qrita-triton-select,torch-topk \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1024
SUITES_END=585 suites_with_defaults "value_compares or mask_block or masked_entries or wide_geometry_slot or poisoned" \
  VALUE_CMP=2
sweep_tails valuecmp
