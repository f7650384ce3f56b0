#!/usr/bin/env bash
# try/triton-sample-cut-skip on the GPU (one device call of at most about 9.5 minutes), after
#   git switch -c try/triton-sample-cut-skip main && git am docs/bench/prepared/triton-sample-cut-skip/*.patch
#   bash docs/bench/next-triton-sample-cut-skip/run.sh "$(git rev-parse HEAD)"   # the SHA from the local machine
# 1. On a quiet GPU, benchmarks/sweep_triton.py --set samplecut (select, V=131072; Gaussian and LLM-like rows first,
#    then Zipf) with the branch's kernels (skip.json: the sample cut's search skipped where it cannot raise the cut),
#    then with main's (main_kernels.patch applied to this disposable copy of the tree and taken back; main.json).
#    The rows with options {} compare the two; the cuts, so the bits, are the same by construction.  Session 33 call 2
#    (H100, main's kernels): Gaussian / LLM-like top-k 50 B=1024 298.8 / 301.8 us with the sample cut, 284.8 / 288.3
#    without.
# 2. The Triton GPU suites with the branch's kernels.
# Merge if every suite passes and the Gaussian / LLM-like rows are faster than with main's kernels, Zipf level.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(triton-sample-cut-skip)"
sweep_set skip samplecut 95
git apply docs/bench/next-triton-sample-cut-skip/main_kernels.patch && echo "main kernels applied" >> "$P"
sweep_set main samplecut 95
git apply -R docs/bench/next-triton-sample-cut-skip/main_kernels.patch && echo "branch kernels again" >> "$P"
left=$((560 - (SECONDS - T0)))
[ $left -lt 60 ] && left=60
triton_gpu_suites $left "sample_cut or cut_pass or waves"
for f in skip main; do echo "== $f"; grep -v -i warning "/tmp/$f.log" | tail -30; done >> "$P"
