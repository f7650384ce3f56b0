#!/usr/bin/env bash
# Smaller slots for top-p rows (issue 3), one call of about 10 minutes: sweep_triton.py --set toppslot on a quiet GPU
# (select; 512 and 256 keys a span with the second cut's share scaled, and 256 without, against main's 1024;
# p 0.5 / 0.9 / 0.99, three distributions, bf16, B=1 / 64 / 1024), then the Triton GPU suites with TOPP_SPAN_CAP = 256 set on the device's
# copy (launch.span_of's top-p geometry at every B; two_cut_share_of scales the share), until 585 s.
#   bash docs/bench/next-topp-slot/run.sh "$(git rev-parse HEAD)"
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(toppslot sweep, GPU suites with TOPP_SPAN_CAP = 256)"
sweep_set toppslot toppslot 180
SUITES_END=585 suites_with_defaults "top_p_geometry or two_cuts or top_p or poisoned" TOPP_SPAN_CAP=256
sweep_tails toppslot
