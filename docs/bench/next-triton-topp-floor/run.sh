#!/usr/bin/env bash
# try/triton-topp-floor on the GPU (one device call of at most about 9.5 minutes), after
#   git switch -c try/triton-topp-floor main && git am docs/bench/prepared/triton-topp-floor/*.patch
#   bash docs/bench/next-triton-topp-floor/run.sh "$(git rev-parse HEAD)"   # the SHA from the local machine
# 1. On a quiet GPU, benchmarks/sweep_triton.py --set toppfloor (select, V=131072: sharp rows, sigma 6, and small p,
#    where main's top-p cut can lie above the row's largest entries; then Gaussian, LLM-like and Zipf rows it leaves
#    alone) with the branch's kernels (floor.json), then with main's (main_kernels.patch applied to this disposable
#    copy of the tree and taken back; main.json).  The hit rates say which rows the floor turns into hits.
# 2. The Triton GPU suites with the branch's kernels.
# Merge if every suite passes, the sharp and small-p rows are faster, and the others level.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(triton-topp-floor)"
sweep_set floor toppfloor 80
git apply docs/bench/next-triton-topp-floor/main_kernels.patch && echo "main kernels applied" >> "$P"
sweep_set main toppfloor 80
git apply -R docs/bench/next-triton-topp-floor/main_kernels.patch && echo "branch kernels again" >> "$P"
left=$((560 - (SECONDS - T0)))
[ $left -lt 60 ] && left=60
triton_gpu_suites $left "cut_floor or two_cuts or sample_lanes"
for f in floor main; do echo "== $f"; grep -v -i warning "/tmp/$f.log" | tail -14; done >> "$P"
