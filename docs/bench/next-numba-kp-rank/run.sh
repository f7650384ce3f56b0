#!/usr/bin/env bash
# Session 45's branch numba-kp-rank on the GPU (about 3 minutes on a warm machine; no carry):
#   bash docs/bench/next-numba-kp-rank/run.sh <SHA of the branch>
# numba_ab.py --set kp_rank (a k+p row's two searches / one ranking; the same bits expected everywhere) beside the
# backend's GPU test of the rank options (test_gpu_rank_groups_give_the_single_thread_bits: kp_rank on against
# rank_groups, kp_mass and kp_rank off, and the oracle); then, if time is left, the Numba conformance suite at
# real shapes.  Files: probe.log, ab_kp_rank.json, suite.log.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(numba-kp-rank: A/B, rank test)"
run_suite rank "" 200 -m gpu -k "rank_groups" tests/test_numba_backend.py &
run_ab kp_rank 150
wait
run_suite conf32 numba 150 -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py
summarize_suites rank conf32
