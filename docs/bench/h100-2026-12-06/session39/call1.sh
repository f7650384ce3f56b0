#!/usr/bin/env bash
# Session 39 call 1: the span-cap branch (try/cap = main + docs/bench/prepared/triton-span-cap/) on the GPU, trimmed
# to the device time left after the failed starts: the masked A/B (`sweep_triton.py --set spancap_masked`, the
# branch's default against span_cap=1024, the bits must equal), then the Triton GPU suites with the branch's
# defaults until SUITES_END seconds, then the `select` A/B (`--set spancap`) if SELECT_S > 0.
#   bash docs/bench/h100-2026-12-06/session39/call1.sh "$(git rev-parse HEAD)"
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 39 call 1: span-cap masked A/B, Triton GPU suites)"
sweep_set spancap_masked spancap_masked "${MASKED_S:-100}"
SUITES_END=${SUITES_END:-440} suites_with_defaults "wide_geometry_slot or small_batch_top_k_geometry or poisoned" \
  WIDE_SPAN_CAP=512
[ "${SELECT_S:-0}" -gt 0 ] && sweep_set spancap spancap "$SELECT_S"
sweep_tails spancap_masked spancap
