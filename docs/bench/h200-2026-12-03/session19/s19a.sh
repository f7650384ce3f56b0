#!/usr/bin/env bash
# session 19, call A: the CuPy search rounds without 64-bit shared atomics (two u32 words a mass,
# zmn/zmx from the second pass, four copies of the bins).  The CuPy GPU suite and the small-shape
# conformance tests with the CuPy backend, side by side; then on a quiet GPU ab19.py with the
# session-start kernels (.scratch/old = `git archive 1b623ad qrita`) and with the new ones.
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
D=docs/bench/h200-2026-12-03/session19
PYTHONPATH=. timeout 200 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_cupy_backend.py \
  > /tmp/suite_cupy.log 2>&1 &
PYTHONPATH=. QRITA_TEST_BACKENDS=cupy timeout 200 python3 -m pytest -v -p no:cacheprovider -rfE -m "not gpu" \
  tests/test_conformance.py > /tmp/suite_conf.log 2>&1 &
wait
echo "suite t=$((SECONDS-T0))" >> $P
for f in cupy conf; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log)" \
    "failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -30 | cut -c1-300; tail -3 /tmp/suite_$f.log | cut -c1-300
done > $OUT/suite.log
PYTHONPATH=.scratch/old timeout 85 python3 $D/ab19.py $OUT/old.json old 65 > /tmp/old.log 2>&1
echo "old rc=$? t=$((SECONDS-T0))" >> $P
PYTHONPATH=. timeout 170 python3 $D/ab19.py $OUT/new.json new 150 > /tmp/new.log 2>&1
echo "new rc=$? t=$((SECONDS-T0))" >> $P
tail -3 /tmp/old.log /tmp/new.log >> $P
