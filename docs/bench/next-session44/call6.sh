#!/usr/bin/env bash
# Session 44's sixth call (about 4 minutes): bash docs/bench/next-session44/call6.sh <SHA>
# Where the split path's finish spends its time at B = 1 and 4 (probe_finish.py), with combine_parts' 64-bit shared
# atomics a partial (COMBINE_WARPS off) and warp-aggregated (on), in two processes; then the Numba GPU suites with
# the tree's default (on).  Files: probe.log, probe0.log, probe1.log, suite.log.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(finish probe; combine_parts warp-aggregated)"
timeout 120 python3 docs/bench/next-session44/probe_finish.py combine_warps=0 > "$OUT/probe0.log" 2>&1
echo "probe0 rc=$? t=$((SECONDS - T0))" >> "$P"
timeout 120 python3 docs/bench/next-session44/probe_finish.py combine_warps=1 > "$OUT/probe1.log" 2>&1
echo "probe1 rc=$? t=$((SECONDS - T0))" >> "$P"
numba_gpu_suites 240
