#!/usr/bin/env bash
# session 26 call B: main's Triton kernels (chain_rounds on for one row since session 25) on the GPU that came.
# On a quiet GPU first the harness's B=1 rows of issue 3 (select and masked in place, fp32 and bf16, V=131072;
# a budget for cold compiles), then side by side the Triton GPU suites: conformance at real shapes (three -k
# processes), the backend's and the sampler's GPU tests, and the small-shape conformance tests from
# test_in_place_on_non_contiguous_views on (the ones session 25's call did not reach).
#   bash docs/bench/h100-2026-12-05/session26/s26b.sh <SHA>      (probe.log, suite.log, b1/ under $OUT)
# (Session 27 rewrote its steps with benchmarks/device_lib.sh, the same runs; the copy that ran is in git history)
. benchmarks/device_lib.sh
device_start "$1" "(s26b)"
run_bench b1 "$SHA" 185 --providers qrita-triton-select,qrita-triton --scenarios topk50,k100p0.9,topp0.9 \
  --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1
left=$((520 - (SECONDS - T0)))
[ $left -lt 60 ] && left=60
TAIL="in_place_on_non_contiguous or forced_truncation or truncation_hits or natural_truncation or k_near_V_and_p"
TAIL="$TAIL or deterministic or batch_invariant or apply_in_place or masking_entry or selection_methods or test_repr"
TAIL="$TAIL or check_true"
run_suite backend triton $left -m gpu tests/test_triton_backend.py &
run_suite conf32 triton $left -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
run_suite conf16 triton $left -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
run_suite confrest triton $left -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
run_suite sampling triton $left -m gpu tests/test_sampling.py &
run_suite smalltail triton $left -m "not gpu" -k "$TAIL" tests/test_conformance.py &
wait
echo "suite t=$((SECONDS-T0))" >> $P
summarize_suites backend conf32 conf16 confrest sampling smalltail
