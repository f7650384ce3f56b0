#!/usr/bin/env bash
# Session 34's options on the GPU, main's kernels (one device call of at most about 9.5 minutes):
#   bash docs/bench/next-slot-ties/run.sh "$(git rev-parse HEAD)"   # the SHA from the local machine
# 1. On a quiet GPU, benchmarks/sweep_triton.py --set slotties (slotties.json): masked out of place, the option
#    slot_ties (cut tie groups of rows that hit resolved from the slot) against the default (the tie count from
#    the row), bf16 first; every row's bits compared with the default's ("same").
# 2. --set samplecut4096 (samplecut4096.json): select with sample_cut=4096 against the default 1024 on Gaussian,
#    LLM-like and Zipf rows.
# 3. The Triton GPU suites with SLOT_TIES = True (a sed on this disposable copy of the tree, put back after), so
#    that the default can be turned on from this call's evidence.
# Turn slot_ties on (for the dtypes where it is faster) if every slotties row is "same" and faster, and the suites
# pass; sample_cut 4096 if Zipf is faster and Gaussian / LLM-like rows level.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(slot ties, sample cut 4096)"
sweep_set slotties slotties 100
sweep_set samplecut4096 samplecut4096 45
suites_with_defaults "scatter or sample_cut or waves" SLOT_TIES=True
sweep_tails slotties samplecut4096
