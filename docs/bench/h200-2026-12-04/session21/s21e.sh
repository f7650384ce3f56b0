#!/usr/bin/env bash
# Prepared in session 21 (no device time left) for the next session's first call:
#  1. session 21 call D's timeout: test_crowded_bins_and_carried_words alone, with the default
#     (clusters) and with the plain combine as the default (-p plain_combine), per-test durations;
#  2. ab21e.py: the cluster size (one block, 2, 4, 8), bits and time.
#   bash docs/bench/h200-2026-12-04/session21/s21e.sh <SHA>
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.:docs/bench/h200-2026-12-04/session21
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
D=docs/bench/h200-2026-12-04/session21
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
for mode in cluster plain; do
  plugin=""; [ $mode = plain ] && plugin="-p plain_combine"
  timeout 150 python3 -m pytest -v -p no:cacheprovider $plugin -rfE -m gpu --durations=0 \
    tests/test_cupy_backend.py -k crowded_bins > $OUT/crowded_$mode.log 2>&1
  echo "crowded $mode rc=$? t=$((SECONDS-T0))" >> $P
done
timeout 200 python3 $D/ab21e.py $OUT/ab.json > $OUT/ab.log 2>&1
echo "ab rc=$? t=$((SECONDS-T0))" >> $P
