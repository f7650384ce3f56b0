#!/usr/bin/env bash
# session 13, call C: the CuPy fast paths on and off (times and bits, quiet GPU), then side by side: their
# GPU equality test and the CuPy GPU suite, and the Triton GPU conformance and backend suites (call A's
# 400 s limit cut both short)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $1"; nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader; } > $P 2>&1
timeout 110 python3 docs/bench/h200-2026-12-01/session13/cupy_fast.py $OUT/cupy_fast.json 90 > $OUT/cupy_fast.log 2>&1
echo "cupy_fast rc=$? t=$((SECONDS-T0))" >> $P
left=$((450 - (SECONDS - T0)))
for f in conformance triton_backend; do
  QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m gpu -p no:cacheprovider -rfE tests/test_$f.py > /tmp/suite_$f.log 2>&1 &
done
(QRITA_TEST_BACKENDS=cupy timeout $left python3 -m pytest -v -m gpu -p no:cacheprovider -rfE -k fast_paths tests/test_cupy_backend.py > /tmp/suite_fast.log 2>&1
 QRITA_TEST_BACKENDS=cupy timeout $((450 - (SECONDS - T0))) python3 -m pytest -v -m gpu -p no:cacheprovider -rfE -k "not fast_paths" tests/test_cupy_backend.py > /tmp/suite_cupy.log 2>&1) &
wait
echo "suite t=$((SECONDS-T0))" >> $P
for f in conformance triton_backend fast cupy; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -2 /tmp/suite_$f.log
done > $OUT/suite.log
