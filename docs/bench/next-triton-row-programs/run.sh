#!/usr/bin/env bash
# Session 30's prepared Triton row_programs (docs/bench/prepared/triton-row-programs/, stacked on triton-sample-lanes,
# whose option stays off here), one device call of at most about 9 minutes, after
#   git switch -c try/triton-row-programs main && git am docs/bench/prepared/triton-sample-lanes/*.patch \
#     docs/bench/prepared/triton-row-programs/*.patch
#   bash docs/bench/next-triton-row-programs/run.sh "$(git rev-parse HEAD)"   # the SHA from the local machine
# 1. On a quiet GPU, the A/B (benchmarks/sweep_triton.py --set rowprog, CUDA-graph medians of select): the branch's
#    default (row-mode miss rounds in two programs a multiprocessor, each taking several rows) against one program
#    a row (row_programs=0), top-k 50 at B=1024 and 256 (the issue-3 rows at 1.51-1.52x roofline in place), bf16,
#    B=64 top-k and k+p, and truncation off (every row misses: the rounds' work);
# 2. side by side, the Triton GPU suites (the branch changes a default path: the row-mode rounds and the update's
#    slot): conformance at real shapes (three -k processes), the backend's and the sampler's GPU tests, and the
#    backend's small-shape row-round, chain and schedule tests on the GPU.
# Merge only if every suite passes and the A/B is faster (or level) at B=1024 and 256 and level with truncation off.
# (On an 80 GB H100 the >2^31 conformance cases may run out of memory beside five other pytest processes: rerun
# them alone, `-k more_than_2_pow_31`.)
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(triton-row-programs)"
timeout 170 python3 benchmarks/sweep_triton.py --set rowprog --budget-s 150 --out "$OUT/rowprog.json" \
  > /tmp/rowprog.log 2>&1
echo "rowprog rc=$? t=$((SECONDS - T0))" >> "$P"
left=$((540 - (SECONDS - T0)))
[ $left -lt 60 ] && left=60
triton_gpu_suites $left "row_rounds or chain_rounds or schedule_options"
grep -v -i warning /tmp/rowprog.log | tail -30 >> "$P"
