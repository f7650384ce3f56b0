#!/usr/bin/env bash
# session 22, call C: kernel times at small batches (prof22.py), the split path's variants
# (ab22.py: slices a row, cluster of 4 or 8, plain), then the small-shape conformance suite for
# cupy on the GPU (-m "not gpu"), last run in session 19.
#   bash docs/bench/h200-2026-12-04/session22/s22c.sh <SHA>
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
D=docs/bench/h200-2026-12-04/session22
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
timeout 120 python3 $D/prof22.py $OUT/prof.json > $OUT/prof.log 2>&1
echo "prof rc=$? t=$((SECONDS-T0))" >> $P
timeout 240 python3 $D/ab22.py $OUT/ab.json > $OUT/ab.log 2>&1
echo "ab rc=$? t=$((SECONDS-T0))" >> $P
left=$((530 - (SECONDS - T0)))
QRITA_TEST_BACKENDS=cupy timeout $left python3 -m pytest -q -p no:cacheprovider -rfE -m "not gpu" tests/test_conformance.py > /tmp/small.log 2>&1
echo "small rc=$? t=$((SECONDS-T0))" >> $P
{ grep -E "FAILED|ERROR" /tmp/small.log | head -20 | cut -c1-300; tail -3 /tmp/small.log | cut -c1-300; } >> $P
