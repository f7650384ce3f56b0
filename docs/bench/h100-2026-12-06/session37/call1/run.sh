#!/usr/bin/env bash
# Branch try/neg-zero (main + the prepared -0.0 fill fix) on the GPU, with the option mask_block's measurement in
# the same call (at most about 9.5 minutes):
#   bash docs/bench/next-neg-zero/both.sh "$(git rev-parse HEAD)"
# maskblock.json: sweep_triton.py --set maskblock on a quiet GPU; profile.log: LLM-like bf16 top-k 50 masking's
# kernels at 4096 and 8192; then CuPy's and Numba's test_apply_in_place (-0.0 among the mask values) beside the
# Triton GPU suites with MASK_BLOCK_16 = 8192 (fp32 keeps 4096, so both block sizes run) and the mask's
# small-shape tests.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(try/neg-zero + mask_block: sweep, profile, suites with MASK_BLOCK_16=8192)"
sweep_set maskblock maskblock 90
python3 benchmarks/profile_triton.py --dist llm --dtype bfloat16 --cases k50 --options '{}' \
  --options '{"mask_block": 8192}' > "$OUT/profile.log" 2>&1
echo "profile t=$((SECONDS - T0))" >> "$P"
(QRITA_TEST_BACKENDS=cupy,numba timeout 200 python3 -m pytest -q -p no:cacheprovider -k "apply_in_place" \
  tests/test_conformance.py > "$OUT/others.log" 2>&1; echo "others rc=$? t=$((SECONDS - T0))" >> "$P") &
SUITES_END=560 suites_with_defaults "mask_values_bits or mask_block or fill_and_scatter or poisoned" MASK_BLOCK_16=8192
wait
sweep_tails maskblock
