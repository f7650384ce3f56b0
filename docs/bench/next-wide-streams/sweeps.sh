#!/usr/bin/env bash
# Session 35's two options on the GPU, main's kernels, sweeps only (one device call of at most about 9.5 minutes):
#   bash docs/bench/next-wide-streams/sweeps.sh "$(git rev-parse HEAD)"   # the SHA from the local machine
# On a quiet GPU, benchmarks/sweep_triton.py (CUDA-graph medians, V=131072, every row's answer compared with the
# default's: "same"):
# - --set samplewide (samplewide.json): select, sample_wide 4096 and 8192 (a row whose 1024-entry sample does not
#   skip takes the wide sample's order statistic) against the default, sample_cut=4096 for every row beside them;
# - --set samplewide_masked: bf16 top-k 50 masking with it, and slot_ties on it;
# - --set streams, streams_masked: streams=2 (waves alternating over two CUDA streams, each with its own scratch)
#   against one stream, select and masked;
# - --set b1cut: one row (and 16), the cut kernel with the sample cut (cut_pass) and the wide sample against the cut
#   in the span programs (the default at B <= 64).
# Then suites.sh with the defaults to turn on: SAMPLE_WIDE (4096 or 8192) if Zipf rows are faster and Gaussian /
# LLM-like rows level; STREAMS = 2 if faster on most rows and slower on none by more than 1 %; slot_ties for 16-bit
# top-k masking if faster on every distribution with the wide sample.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(sample_wide, streams: sweeps)"
sweep_set samplewide samplewide 100
sweep_set streams streams 100
sweep_set streams_masked streams_masked 100
sweep_set samplewide_masked samplewide_masked 60
sweep_set b1cut b1cut 40
sweep_tails samplewide streams streams_masked samplewide_masked b1cut
