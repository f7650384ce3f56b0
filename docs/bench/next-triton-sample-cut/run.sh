#!/usr/bin/env bash
# next/triton-sample-cut on the GPU, one device call of at most about 9.5 minutes, after
#   git switch -c try/triton-sample-cut main && git am docs/bench/prepared/triton-sample-cut/*.patch
#   bash docs/bench/next-triton-sample-cut/run.sh "$(git rev-parse HEAD)"   # the SHA from the local machine
# 1. On a quiet GPU, the A/B (benchmarks/sweep_triton.py --set samplecut, CUDA-graph medians of select; an answer
#    that differs from the default's is checked against the oracle): the branch's default (a top-k row's cut no
#    lower than the order statistic of a 1024-entry sample (32 runs of 32 neighbours), taken by max-extractions) against the Gaussian cut
#    alone (sample_cut=0, main) and samples of 2048 and 4096; Gaussian and LLM-like rows first (fp32, B=1024: level
#    expected), then top-k 50 and k100+p0.9 on Zipf rows (fp32, bf16; B=1024, 256; session 32's H100 A/B with a
#    sort: 1024 entries 20-25% faster on Zipf);
# 2. side by side, the Triton GPU suites with the sample cut on (the branch's default).
# Merge only if every suite passes and the A/B is faster on Zipf rows and level elsewhere.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(triton-sample-cut)"
triton_ab_suites samplecut 550 "sample_cut or cut_pass or waves"
