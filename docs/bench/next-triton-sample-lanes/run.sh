#!/usr/bin/env bash
# Session 30's prepared Triton option sample_lanes (docs/bench/prepared/triton-sample-lanes/), one device call
# of at most about 8.5 minutes (limits 200 + 220 + 2 x 45 s), after
#   git switch -c try/triton-sample-lanes main && git am docs/bench/prepared/triton-sample-lanes/*.patch
#   bash docs/bench/next-triton-sample-lanes/run.sh "$(git rev-parse HEAD)"   # the SHA from the local machine
# 1. the backend's miss-lane tests on the GPU (small shapes) and the miss-round tests, beside
# 2. the round counts at V=131072 on the real kernels (benchmarks/miss_rounds.py, every answer against the oracle);
# 3. on a quiet GPU, the A/B: CUDA-graph medians of select with the default lanes, sample_lanes (16 and 8 lanes a
#    round) and value_lanes
#    (benchmarks/sweep_triton.py --set lanes: the harness's generators, top-p 0.9 fp32 / bf16 at B=1024, top-p 0.99,
#    B=1 and 16; an answer that differs from the default's is checked against the oracle);
# 4. per-kernel profiles of masked Gaussian and Zipf top-p 0.9 at B=1024, default and sample_lanes (16, 8 lanes).
# Merge (the option on by default: launch.SAMPLE_LANES) only if the tests pass and the A/B is faster where rows
# miss and level where they hit.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(sample_lanes)"
run_suite lanes "" 200 tests/test_triton_backend.py -k "lanes or miss or rounds" &
timeout 200 python3 benchmarks/miss_rounds.py --V 131072 --rows 8 --ps 0.9,0.99 --out "$OUT/rounds.json" \
  > /tmp/rounds.log 2>&1
echo "rounds rc=$? t=$((SECONDS - T0))" >> "$P"
wait
summarize_suites lanes
timeout 220 python3 benchmarks/sweep_triton.py --set lanes --budget-s 190 --out "$OUT/lanes.json" > /tmp/lanes.log 2>&1
echo "lanes rc=$? t=$((SECONDS - T0))" >> "$P"
for d in hgauss hzipf; do
  timeout 45 python3 benchmarks/profile_triton.py --mode masked --dist "$d" --cases p0.9 --options '{}' \
    --options '{"sample_lanes": true}' --options '{"sample_lanes": true, "miss_pivots": 7}' >> "$OUT/profile.log" 2>&1
done
echo "profile t=$((SECONDS - T0))" >> "$P"
cat /tmp/rounds.log /tmp/lanes.log | grep -v -i warning | tail -60 >> "$P"
