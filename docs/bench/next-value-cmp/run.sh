#!/usr/bin/env bash
# Session 40: the option value_cmp (the mask and the tie counts compare float32 values) against main's key compares,
# masked out of place on a quiet GPU, then the Triton backend's GPU tests owed since session 39 (the 512-key slot's
# scratch bound and the top-p hit tests) and value_cmp's test on the GPU.  About 6 minutes.
#   bash docs/bench/next-value-cmp/run.sh "$(git rev-parse HEAD)"
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(value_cmp A/B, owed backend tests)"
sweep_set valuecmp valuecmp 170
run_suite owed triton 200 -m gpu -k "scratch_memory_is_bounded or top_p" tests/test_triton_backend.py &
run_suite vcmp "" 200 -m "not gpu" -k "value_compares or mask_block or masked_entries" tests/test_triton_backend.py &
wait
summarize_suites owed vcmp
sweep_tails valuecmp
