#!/usr/bin/env bash
# session 14, call B: the new finish defaults (fused_rounds; search_maxnreg=128 for the top-k geometry above 64
# rows). Quiet GPU first: B=1 (ab12 AB_B1), the defaults sweep (select) and the sampler; then the small-shape adversarial tests and the sampling GPU suite
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
AB_B1=1 timeout 90 python3 docs/bench/h200-2026-12-01/session12/ab12.py b1 $OUT/ab_b1.json > $OUT/ab.log 2>&1
echo "ab b1 rc=$? t=$((SECONDS-T0))" >> $P
timeout 165 python3 benchmarks/sweep_triton.py --set defaults --budget-s 140 --out $OUT/defaults.json > $OUT/defaults.log 2>&1
echo "defaults rc=$? t=$((SECONDS-T0))" >> $P
timeout 110 python3 docs/bench/h200-2026-12-01/session14/opt_defaults.py $OUT/defaults_sample.json 85 >> $OUT/defaults.log 2>&1
echo "sample rc=$? t=$((SECONDS-T0))" >> $P
left=$((550 - (SECONDS - T0)))
QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m gpu -p no:cacheprovider -rfE tests/test_sampling.py > /tmp/suite_sampling.log 2>&1 &
QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m "not gpu" -p no:cacheprovider -rfE \
  -k "subnormal or signed_zeros or extreme or infinities or nan_and_empty" tests/test_conformance.py > /tmp/suite_small.log 2>&1 &
wait
echo "suite t=$((SECONDS-T0))" >> $P
for f in sampling small; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -2 /tmp/suite_$f.log
done > $OUT/suite.log
