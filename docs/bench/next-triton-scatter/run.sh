#!/usr/bin/env bash
# Fill-and-scatter masking again (option scatter, session 38), one device call of at most about 9 minutes:
#   bash docs/bench/next-triton-scatter/run.sh "$(git rev-parse HEAD)"
# scatter.json: sweep_triton.py --set scatter on a quiet GPU (masked out of place, the bits against the default's:
# scatter, with 512 / 256 slot keys a span, and span_cap 512 alone); then the Triton GPU suites with SCATTER = True
# (every masked call with a row that hits takes the fill and the scatter) and the scatter's small-shape tests.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(scatter: sweep, suites with SCATTER=True)"
sweep_set scatter scatter "${SWEEP_S:-170}"
SUITES_END=${SUITES_END:-500} suites_with_defaults "fill_and_scatter or mask_values_bits or poisoned" SCATTER=True
sweep_tails scatter
