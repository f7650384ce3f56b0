#!/usr/bin/env bash
# The Triton GPU suites with launch defaults set for this call (a sed on the device's disposable copy of the tree,
# put back after; one device call of at most about 9.5 minutes):
#   bash docs/bench/next-wide-streams/suites.sh "$(git rev-parse HEAD)" SAMPLE_WIDE=4096 STREAMS=2
# (the defaults that sweeps.sh's rows say to turn on; none: main's defaults).  With the options off the cut kernels'
# PTX is main's instruction for instruction and the launch is the one stream's, so these suites also stand for
# main's kernels (exp2 + the top-p floor), which owe the 16-bit conformance's last 28 cases and the backend's
# graph-capture / determinism test since session 35 call 3.  Six pytest processes share the GPU (device_lib.sh).
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(suites: ${*:2})"
shift
suites_with_defaults "sample_cut or waves or cut_floor or poisoned" "$@"
