#!/usr/bin/env bash
# Session 29's second device call (torch, numba-cuda, triton, pytest; no nox, no network), from the repository
# root; give the SHA from this machine (the device's copy of the tree has no branch):
#   bash docs/bench/next-s29/run.sh <SHA>        (about 7 min)
# probe.log, suite.log: first the GPU tests of both changes side by side: the Numba conformance suite at real
# shapes and the Numba backend's GPU tests (mask_loads), the Triton conformance suite at real shapes
# (three -k processes) and the Triton backend's masking, tie and sampling tests on the GPU (tie_defer); then on a quiet GPU
# ab_mask_loads.json (Numba mask_kernel: each entry loaded, then written / a thread's entries loaded first) and
# ab_tie_defer.json (Triton masking alone: small cut tie groups counted from the row first / resolved after
# the mask pass), every answer compared bit for bit, CUDA-graph medians
. benchmarks/device_lib.sh
device_start "$1" "(session 29 call 6)"
run_suite nconf numba 210 -m gpu tests/test_conformance.py &
run_suite nback "" 210 -m gpu tests/test_numba_backend.py &
run_suite tconf32 triton 230 -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
run_suite tconf16 triton 230 -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
run_suite tconfrest triton 230 -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
run_suite tback "" 230 -k "deferred or scatter or pass_order or masked_output or real_shapes or no_sync or scratch \
  or poisoned or sample_draws or non_contiguous" tests/test_triton_backend.py &
wait
summarize_suites nconf nback tconf32 tconf16 tconfrest tback
run_ab mask_loads 90
run_ab tie_defer 100
