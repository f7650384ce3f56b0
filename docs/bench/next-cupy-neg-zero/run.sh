#!/usr/bin/env bash
# Main's generic apply through the raw bits (1fb5af4) on the GPU, one device call of at most about 8 minutes:
#   bash docs/bench/next-cupy-neg-zero/run.sh "$(git rev-parse HEAD)"
# others.log: the masking conformance tests of CuPy, Numba and Triton on every array library (session 37 call 3:
# 12 failed, all CuPy arrays with a mask value of -0.0, before this fix); then the CuPy backend's GPU suites
# (its own GPU tests, the conformance suite at real shapes), last run in full in session 23.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(the CuPy-array -0.0 fix: masking tests, CuPy GPU suites)"
QRITA_TEST_BACKENDS=cupy,numba,triton timeout 200 python3 -m pytest -q -p no:cacheprovider \
  -k "apply_in_place or masking_entry_points" tests/test_conformance.py > "$OUT/others.log" 2>&1
echo "others rc=$? t=$((SECONDS - T0))" >> "$P"
tail -3 "$OUT/others.log" >> "$P"
run_suite backend "" 260 -m gpu tests/test_cupy_backend.py &
run_suite conf cupy 260 -m gpu tests/test_conformance.py &
wait
summarize_suites conf backend
