#!/usr/bin/env bash
# session 12, call D: the final tree (8 round blocks an iteration, append_scan removed): A/B bits and
# times at B=1024 against call B's hashes, then the GPU conformance and sampling suites
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
T0=$SECONDS
P=$OUT/probe.log
echo "== commit $1" > $P
AB_B1024=1 timeout 80 python3 docs/bench/h200-2026-12-01/session12/ab12.py new $OUT/ab_new.json > /tmp/ab_new.log 2>&1
echo "ab new rc=$? t=$((SECONDS-T0))" >> $P
cut -c1-220 /tmp/ab_new.log >> $P
left=$((320 - (SECONDS - T0)))
for f in conformance sampling; do
  QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m gpu -p no:cacheprovider -rfE tests/test_$f.py > /tmp/suite_$f.log 2>&1 &
done
wait
echo "suite t=$((SECONDS-T0))" >> $P
for f in suite_conformance suite_sampling; do
  echo "== $f passed=$(grep -c PASSED /tmp/$f.log) skipped=$(grep -c SKIPPED /tmp/$f.log) failed=$(grep -c FAILED /tmp/$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/$f.log | head -20 | cut -c1-300; tail -2 /tmp/$f.log
done > $OUT/suite.log
