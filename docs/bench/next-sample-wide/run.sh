#!/usr/bin/env bash
# The option sample_wide on the GPU, main's kernels (one device call of at most about 9.5 minutes):
#   bash docs/bench/next-sample-wide/run.sh "$(git rev-parse HEAD)"   # the SHA from the local machine
# 1. On a quiet GPU, benchmarks/sweep_triton.py --set samplewide (samplewide.json): select, sample_wide 4096 and
#    8192 (rows whose 1024-entry sample does not skip take the wide sample's order statistic) against the default,
#    and sample_cut=4096 for every row beside them; every row's answer compared with the default's ("same").
#    --set samplewide_masked (samplewide_masked.json): bf16 top-k 50 masking with the wide sample, and slot_ties on it.
# 2. The Triton GPU suites with SAMPLE_WIDE = 4096 (a sed on this disposable copy of the tree, put back after).
#    With it off the cut kernels' PTX is main's instruction for instruction (session 35), so these suites also
#    stand for main's kernels (exp2 + the top-p floor: session 35 call 3's 16-bit conformance and the backend's
#    graph-capture test were cut by its time limit).
# Turn SAMPLE_WIDE on (4096 or 8192, the faster on Zipf) if Zipf rows are faster, Gaussian / LLM-like rows level,
# every row "same" (or oracle-checked) and the suites pass; slot_ties for 16-bit top-k masking if it is faster there
# with the wide sample on every distribution.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(sample_wide)"
sweep_set samplewide samplewide 100
sweep_set samplewide_masked samplewide_masked 60
suites_with_default SAMPLE_WIDE 4096 "sample_cut or waves or cut_floor"
sweep_tails samplewide samplewide_masked
