#!/usr/bin/env bash
# session 14, call C (the session's last device time): row_rounds (one program a row runs a miss round over its
# spans, then its update) against one program a span, on the sampler and select (quiet GPU); then the Triton GPU
# conformance and backend suites side by side
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader; } > $P 2>&1
timeout 60 python3 docs/bench/h200-2026-12-01/session14/opt_rows.py $OUT/rows_sample.json 45 > $OUT/rows.log 2>&1
echo "rows sample rc=$? t=$((SECONDS-T0))" >> $P
timeout 50 python3 benchmarks/sweep_triton.py --set rows --budget-s 35 --out $OUT/rows.json >> $OUT/rows.log 2>&1
echo "rows select rc=$? t=$((SECONDS-T0))" >> $P
left=$((350 - (SECONDS - T0)))
for f in conformance triton_backend; do
  QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m gpu -p no:cacheprovider -rfE tests/test_$f.py > /tmp/suite_$f.log 2>&1 &
done
wait
echo "suite t=$((SECONDS-T0))" >> $P
for f in conformance triton_backend; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -2 /tmp/suite_$f.log
done > $OUT/suite.log
cp /tmp/suite_triton_backend.log $OUT/suite_backend_full.log
