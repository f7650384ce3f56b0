#!/usr/bin/env bash
# Session 49's next call, for session 50 (about 8 minutes; no carry):  bash docs/bench/next-session49/call3.sh <SHA>
# Branch next/numba-finish with its defaults (rank_tight, cut_regs, finish_k on; mask_blocks 3), none of which
# has met the GPU suites yet:
# 1. the stamps probe, B = 64 LLM-like top-k 50 masked, fp32 and bf16, the branch's defaults and all three options
#    off (the finish's sub-stamps: rank_tight should take its ranking from about 12.7 to about 4-5 thousand cycles,
#    finish_k its 7.3 before the packing down if instruction fetch is what they are);
# 2. numba_ab.py --set finish (each option alone and all three, the same bits asked, 13 cases);
# 3. the Numba GPU suites with the branch's defaults: the backend's GPU tests in four -k processes and the
#    conformance suite at real shapes in three, side by side.
# If the suites pass, merge the branch into main; set off any option whose A/B loses first.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(branch next/numba-finish: stamps, A/B finish, Numba GPU suites at its defaults)"
timeout 100 python3 benchmarks/probe_stamps.py "$OUT/stamps.json" --B 64 --dtypes float32,bfloat16 --cases k50 \
  --options '{}' --options '{"rank_tight": false, "cut_regs": false, "finish_k": false}' > /tmp/stamps.log 2>&1
echo "stamps rc=$? t=$((SECONDS - T0))" >> "$P"
run_ab finish 150
grep -v -i warn /tmp/ab_finish.log | tail -2 | cut -c1-300 >> "$P"
left=$((560 - (SECONDS - T0)))
run_suite real "" "$left" -m gpu -k "real_shapes" tests/test_numba_backend.py &
run_suite paths "" "$left" -m gpu -k "large_batch or split_path or wide_miss or rank_groups or split_wide or two_cuts" \
  tests/test_numba_backend.py &
run_suite mask "" "$left" -m gpu -k "adversarial or strided or fused or cut_in_mask or scratch or cupy or stream" \
  tests/test_numba_backend.py &
run_suite big "" "$left" -m gpu -k "more_than" tests/test_numba_backend.py &
run_suite conf32 numba "$left" -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
run_suite conf16 numba "$left" -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
run_suite confrest numba "$left" -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
wait
summarize_suites real paths mask big conf32 conf16 confrest
echo "end t=$((SECONDS - T0))" >> "$P"
