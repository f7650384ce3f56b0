#!/usr/bin/env bash
# Branch next/triton-neg-zero on the GPU (one device call of at most about 9.5 minutes):
#   bash docs/bench/next-neg-zero/run.sh "$(git rev-parse HEAD)"
# The Triton mask's fill is 1.0 * mask_value instead of 0.0 + mask_value (which wrote +0.0 for a mask value of
# -0.0); the tests compare the masked entries' bits.  The Triton GPU suites (main's defaults) with the
# backend's small-shape tests of the mask, then the other GPU backends' test_apply_in_place (-0.0 added to its
# mask values; check_masked now compares bits) into $OUT/others.log.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(next/triton-neg-zero: suites)"
(QRITA_TEST_BACKENDS=cupy,numba timeout 200 python3 -m pytest -q -p no:cacheprovider -k "apply_in_place" \
  tests/test_conformance.py > "$OUT/others.log" 2>&1; echo "others rc=$? t=$((SECONDS - T0))" >> "$P") &
SUITES_END=520 suites_with_defaults "mask_values_bits or fill_and_scatter or poisoned"
wait
