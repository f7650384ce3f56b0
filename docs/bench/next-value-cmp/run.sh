#!/usr/bin/env bash
# Session 40: the option value_cmp (the mask and the tie counts compare float32 values) against main's key compares,
# masked out of place on a quiet GPU (sweep_triton.py --set valuecmp), then the Triton GPU suites with
# VALUE_CMP = 2 as the default (a sed on the device's copy), until 570 s: conformance at real shapes, the backend's
# GPU tests (the scratch bound and top-p hit tests owed since session 39 among them), sampling, and the small-shape
# mask tests.  About 10 minutes.
#   bash docs/bench/next-value-cmp/run.sh "$(git rev-parse HEAD)"
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(value_cmp A/B, GPU suites with VALUE_CMP = 2)"
sweep_set valuecmp valuecmp 150
SUITES_END=570 suites_with_defaults "value_compares or mask_block or masked_entries or wide_geometry_slot or poisoned" \
  VALUE_CMP=2
sweep_tails valuecmp
