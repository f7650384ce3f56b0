#!/usr/bin/env bash
# session 20, call A: the CuPy GPU suite and the conformance GPU shapes at the tree with a4aaab4 and d776e77 (host changes
# not yet run on a GPU) and this session's warp-aggregated bin atomics, after tail20.py (bin atomics A/B, missed rows).
#   bash docs/bench/h200-2026-12-03/session20/s20a.sh <SHA>
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
timeout 200 python3 docs/bench/h200-2026-12-03/session20/tail20.py $OUT/tail.json > $OUT/tail.log 2>&1
echo "tail rc=$? t=$((SECONDS-T0))" >> $P
timeout 200 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_cupy_backend.py > /tmp/suite_cupy.log 2>&1
echo "suite rc=$? t=$((SECONDS-T0))" >> $P
QRITA_TEST_BACKENDS=cupy timeout 200 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_conformance.py \
  > /tmp/suite_conf.log 2>&1
echo "conf rc=$? t=$((SECONDS-T0))" >> $P
{ echo "== cupy passed=$(grep -c PASSED /tmp/suite_cupy.log) skipped=$(grep -c SKIPPED /tmp/suite_cupy.log)" \
    "failed=$(grep -c FAILED /tmp/suite_cupy.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_cupy.log | head -30 | cut -c1-300; tail -3 /tmp/suite_cupy.log | cut -c1-300
  echo "== conf passed=$(grep -c PASSED /tmp/suite_conf.log) failed=$(grep -c FAILED /tmp/suite_conf.log)"
  grep -E "FAILED|ERROR" /tmp/suite_conf.log | head -20 | cut -c1-300; tail -2 /tmp/suite_conf.log | cut -c1-300
} > $OUT/suite.log
