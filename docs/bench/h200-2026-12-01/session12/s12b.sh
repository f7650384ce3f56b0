#!/usr/bin/env bash
# session 12, call B: A/B of the float-compare miss rounds (HEAD tree in .scratch/old against the
# working tree), append_scan A/B, top-p profiles; then the GPU suite beside exact_scan and the
# small-shape adversarial tests
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
T0=$SECONDS
P=$OUT/probe.log
echo "== commit $1" > $P
AB_B1024=1 PYTHONPATH=.scratch/old timeout 90 python3 docs/bench/h200-2026-12-01/session12/ab12.py old $OUT/ab_old.json > /tmp/ab_old.log 2>&1
echo "ab old rc=$? t=$((SECONDS-T0))" >> $P
AB_B1024=1 PYTHONPATH=. timeout 90 python3 docs/bench/h200-2026-12-01/session12/ab12.py new $OUT/ab_new.json > /tmp/ab_new.log 2>&1
echo "ab new rc=$? t=$((SECONDS-T0))" >> $P
paste -d'\n' /tmp/ab_old.log /tmp/ab_new.log | cut -c1-220 >> $P
PYTHONPATH=. timeout 125 python3 docs/bench/h200-2026-12-01/session12/opt12.py $OUT/opt.json 105 > $OUT/opt.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
for d in gauss; do
  PYTHONPATH=. timeout 25 python3 benchmarks/profile_triton.py --mode select --B 1024 --dist $d --cases p0.9 2>&1 | grep -v Warn >> $P
done
echo "profile t=$((SECONDS-T0))" >> $P
export PYTHONPATH=.
left=$((580 - (SECONDS - T0)))
for f in conformance triton_backend sampling; do
  QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m gpu -p no:cacheprovider -rfE tests/test_$f.py > /tmp/suite_$f.log 2>&1 &
done
timeout $left python3 benchmarks/exact_scan.py --out $OUT/scan.json --npz $OUT/rows.npz --budget-s $((left-30)) > /tmp/scan.log 2>&1 &
QRITA_TEST_BACKENDS=cupy timeout $left python3 -m pytest -v -m "not gpu" -p no:cacheprovider -rfE \
  -k "subnormal" tests/test_conformance.py > /tmp/small_cupy.log 2>&1 &
QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m "not gpu" -p no:cacheprovider -rfE \
  -k "subnormal or signed_zeros or extreme or infinities or nan_and_empty" tests/test_conformance.py > /tmp/small.log 2>&1
wait
echo "suite+scan t=$((SECONDS-T0))" >> $P
for f in suite_conformance suite_triton_backend suite_sampling small small_cupy; do
  echo "== $f passed=$(grep -c PASSED /tmp/$f.log) skipped=$(grep -c SKIPPED /tmp/$f.log) failed=$(grep -c FAILED /tmp/$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/$f.log | head -20 | cut -c1-300; tail -2 /tmp/$f.log
done > $OUT/suite.log
cat /tmp/scan.log >> $P
