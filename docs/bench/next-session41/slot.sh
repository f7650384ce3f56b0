#!/usr/bin/env bash
# Smaller slots for top-p rows (issue 3) in one call when device time is short (session 41: about 20 minutes left
# after failed starts): sweep_triton.py --set toppslot on a quiet GPU (120 s), the harness rows at B=1024 and
# B=1 / 16 / 64 with TOPP_SPAN_CAP = SPAN_CAP (main's) and then 256 set by a sed on the device's copy (base*/ and slot*/),
# then the Triton GPU suites with 256 until 585 s.
#   bash docs/bench/next-session41/slot.sh "$(git rev-parse HEAD)"
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(toppslot sweep; harness rows with TOPP_SPAN_CAP 1024 then 256; GPU suites with 256)"
rows() {
  run_bench "$1"1024 "$SHA" 40 --providers qrita-triton,qrita-triton-select \
    --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 1024
  run_bench "$1"1 "$SHA" 40 --providers qrita-triton,qrita-triton-select \
    --scenarios k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32 --batches 1,16,64
}
cap() {  # TOPP_SPAN_CAP in the device's copy (put back from /tmp/launch.py.slot after)
  sed -i "s/^TOPP_SPAN_CAP = .*\$/TOPP_SPAN_CAP = $1/" qrita/backends/triton/launch.py
  grep -n "^TOPP_SPAN_CAP = " qrita/backends/triton/launch.py >> "$P"
}
cp qrita/backends/triton/launch.py /tmp/launch.py.slot
cap SPAN_CAP
sweep_set toppslot toppslot 120
rows base
cap 256
rows slot
cp /tmp/launch.py.slot qrita/backends/triton/launch.py
SUITES_END=585 suites_with_defaults "top_p_geometry or two_cuts or top_p or poisoned or scatter" TOPP_SPAN_CAP=256
sweep_tails toppslot
