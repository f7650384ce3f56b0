#!/usr/bin/env bash
# Session 44's prepared branch numba-rank-groups on the GPU (about 8 minutes; no carry):
#   (ran in session 45 call 1; the patches are on main since then: b7cde04, 76fc041)
#   bash docs/bench/next-numba-rank-groups/run.sh <SHA of try/numba-rank-groups>
# First the A/B on a quiet GPU (numba_ab.py --set rank_groups: rank_select a thread a key / a group of threads a
# key / that and kp_mass, the k+p top-p stage's mass in one block sum; the same bits expected in every case), then the Numba GPU suites with the branch's default (groups on; the
# backend's tests include test_gpu_rank_groups_give_the_single_thread_bits), then the per-kernel probe of the split
# path's finish at B = 1 and 4 (docs/bench/next-session44/probe_finish.py: session 44's call 7 measured it on main
# before this branch), then the harness's rows of Numba beside Triton at B = 1, 16 and 1024 (rows/): the A/B's
# variants share one compiled kernel, so what the branch's extra select_kernel spills cost shows only against main's
# rows of session 44 (docs/bench/h100-2026-12-07/session44/ calls 3-4), Triton's rows beside them the yardstick
# between the runs.  Files: probe.log, ab_rank_groups.json, suite.log, probe1.log, rows/results.{json,md}.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(numba-rank-groups: A/B, GPU suites, finish probe)"
run_ab rank_groups 150
numba_gpu_suites 260
timeout 120 python3 docs/bench/next-session44/probe_finish.py combine_warps=1 > "$OUT/probe1.log" 2>&1
echo "probe1 rc=$? t=$((SECONDS - T0))" >> "$P"
run_bench rows "$SHA" 120 --providers qrita-numba,qrita-triton --scenarios topk50,k100p0.9 --dists llm,gaussian \
  --dtypes fp32,bf16 --batches 1,16,1024
