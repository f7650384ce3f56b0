#!/usr/bin/env bash
# Branch next/numba-mask-counts, one call (about 9 minutes; no carry):  bash docs/bench/next-numba-mask-counts/call.sh <SHA>
# Option mask_counts (on there): no cut_count_kernel; the mask blocks of a row left at CUT_SCAN count their own
# spans and take the earlier spans' published counts (a ticket a block, atomics).  Written in session 48, when no
# GPU was lent: simulator tests only.  This call:
# 1. every Numba GPU test of the branch (tests/test_numba_backend.py in four processes, among them the 7 that main
#    owes since session 47, and test_gpu_cut_in_mask_gives_selection_apply_bits with mask_counts on and off, bf16
#    B = 256 too) and the conformance suite at real shapes (three processes), side by side, 300 s each;
# 2. numba_ab.py --set mask_counts (the count kernel / the mask blocks' counts, each with tie_index on and off; the
#    same bits asked of all four; graph medians of select and of masking in place).
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(branch next/numba-mask-counts: GPU tests and the mask_counts A/B)"
owed="fused_mask_matches or scratch_is_bounded or cut_in_mask or cupy"
run_suite backend "" 300 -m gpu -k "not ($owed)" tests/test_numba_backend.py &
run_suite fused "" 300 -m gpu -k "fused_mask_matches or scratch_is_bounded" tests/test_numba_backend.py &
run_suite cutmask "" 300 -m gpu -k cut_in_mask tests/test_numba_backend.py &
run_suite cupy "" 300 -m gpu -k cupy tests/test_numba_backend.py &
run_suite conf32 numba 300 -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
run_suite conf16 numba 300 -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
run_suite confrest numba 300 -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
wait
summarize_suites cutmask backend fused cupy conf32 conf16 confrest
run_ab mask_counts 220
grep -v -i warn /tmp/ab_mask_counts.log | tail -3 >> "$P"
