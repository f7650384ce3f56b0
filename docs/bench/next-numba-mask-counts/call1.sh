#!/usr/bin/env bash
# Branch next/numba-mask-counts, call 1 of 2 (about 7 minutes; carry .whl):
#   bash docs/bench/next-numba-mask-counts/call1.sh <SHA>
# Ran in session 48 (docs/bench/h100-2026-12-07/session48/ call 1, H100); the branch is on main since.  It had
# option mask_counts (on there: no cut_count_kernel; the mask blocks of a row left at CUT_SCAN count their own
# spans and take the earlier spans' published counts, a ticket a block) and the probe build's stamps (kernels.STAMPS, off: compiled away).
# 1. Every Numba GPU test of the branch (tests/test_numba_backend.py in four processes: among them the 7 main owes
#    since session 47, and test_gpu_cut_in_mask_gives_selection_apply_bits with mask_counts on and off, bf16
#    B = 256 too) and the conformance suite at real shapes (three processes), 300 s each, FlashInfer's JIT build
#    beside them (for call 2's harness rows);
# 2. benchmarks/probe_stamps.py: per-block phase times of the split path's scan, finish and mask at B = 64 (LLM-like,
#    masked in place; fp32 and bf16 top-k 50 with main's options, mask_counts off, tie_index off; fp32 k100+p0.9 and
#    top-p 0.9): where the finish's ~22 us and the gaps between launches go.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(branch next/numba-mask-counts call 1: GPU tests, stamps probe)"
flashinfer_warmup flashinfer float32,bfloat16 300
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
{ timeout 100 python3 benchmarks/probe_stamps.py "$OUT/stamps.json" --B 64 --dtypes float32,bfloat16 --cases k50 \
    --options '{}' --options '{"mask_counts": false}' --options '{"tie_index": false}'
  timeout 60 python3 benchmarks/probe_stamps.py "$OUT/stamps.json" --B 64 --dtypes float32 --cases k100p0.9,p0.9
} > /tmp/stamps.log 2>&1
echo "stamps rc=$? t=$((SECONDS - T0))" >> "$P"
grep -v -i warn /tmp/stamps.log | tail -3 | cut -c1-300 >> "$P"
