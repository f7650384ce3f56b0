#!/usr/bin/env bash
# Branch next/triton-span-cap (the wide geometry's slot of 512 keys a span for k <= 128; docs/bench/prepared/
# triton-span-cap/) on the GPU, one device call of at most about 9.5 minutes, after
#   git switch -c try/cap main && git am docs/bench/prepared/triton-span-cap/*.patch
#   bash docs/bench/next-triton-span-cap/run.sh "$(git rev-parse HEAD)"
# spancap_masked.json / spancap.json: sweep_triton.py, masked out of place and `select`, the branch's default against
# span_cap=1024 (main's), B=1024 and 256, fp32 and bf16, top-k 50 / k100+p0.9 / top-k 100 and 128; the bits must
# equal.  Then the Triton GPU suites with the branch's defaults (the sed only logs WIDE_SPAN_CAP's line) and the
# geometry's small-shape tests.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(next/triton-span-cap: sweeps, suites)"
sweep_set spancap_masked spancap_masked "${SWEEP_S:-110}"
sweep_set spancap spancap "${SWEEP_S:-110}"
SUITES_END=${SUITES_END:-560} suites_with_defaults "wide_geometry_slot or small_batch_top_k_geometry or poisoned" \
  WIDE_SPAN_CAP=512
sweep_tails spancap_masked spancap
