#!/usr/bin/env bash
# Session 46's second call (about 8 minutes; no carry):  bash docs/bench/next-session46/call2.sh <SHA>
# 1. The GPU tests of the two new Numba options (scan_prefetch, tie_index): the split path's bits with the scan a
#    tile ahead, and the masked bits where the boundary group is cut (tie_index, with cut_in_mask on and off).
# 2. numba_ab.py --set scan_prefetch (plain / prefetch / prefetch + tie_index): bits compared, graph medians.
# 3. The Numba GPU suites with both options on by default (benchmarks/numba_defaults.py sets launch's constants),
#    for flipping the defaults on this tree if the A/B says so.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 46 call 2: scan_prefetch and tie_index A/B; suites with both on)"
run_suite opts "" 100 -m gpu -k "split_path_is_bit_identical or cut_in_mask_gives" tests/test_numba_backend.py
summarize_suites opts
mv "$OUT/suite.log" "$OUT/suite_opts.log"
timeout 200 python3 benchmarks/numba_ab.py "$OUT/ab_scan_prefetch.json" --set scan_prefetch > /tmp/ab.log 2>&1
echo "ab rc=$? t=$((SECONDS - T0))" >> "$P"
export QRITA_NUMBA_DEFAULTS='{"SCAN_PREFETCH": true, "TIE_INDEX": true}' PYTHONPATH=.:benchmarks
numba_gpu_suites 170 -p numba_defaults
