#!/usr/bin/env bash
# Session 37 call 3 (at most about 4.5 minutes):
#   bash docs/bench/next-apply-mblk/run.sh "$(git rev-parse HEAD)"
# maskblock_small.json: sweep_triton.py --set maskblock_small on a quiet GPU (2048 and 1024 entries a mask
# program against 4096; call 1 found 8192 and 16384 slower on every row); then others.log: the masking
# conformance tests of CuPy, Numba and Triton at small shapes on every array library (the generic apply now
# copies a fill made on the host: CuPy's boolean setitem wrote +0.0 for -0.0, call 1).
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(apply fill fix: masking tests; mask_block 2048 / 1024 sweep)"
sweep_set maskblock_small maskblock_small 80
QRITA_TEST_BACKENDS=cupy,numba,triton timeout 150 python3 -m pytest -q -p no:cacheprovider \
  -k "apply_in_place or masking_entry_points" tests/test_conformance.py > "$OUT/others.log" 2>&1
echo "others rc=$? t=$((SECONDS - T0))" >> "$P"
tail -3 "$OUT/others.log" >> "$P"
sweep_tails maskblock_small
