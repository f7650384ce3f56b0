#!/usr/bin/env bash
# session 12, call A: B=1 A/B against 40976fc, append_scan A/B, top-p profiles, then the small-shape
# conformance and property tests on the CUDA target
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $1"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
AB_B1=1 PYTHONPATH=.scratch/old timeout 80 python3 docs/bench/h200-2026-12-01/session12/ab12.py old $OUT/ab_old.json > /tmp/ab_old.log 2>&1
echo "ab old rc=$? t=$((SECONDS-T0))" >> $P
AB_B1=1 PYTHONPATH=. timeout 80 python3 docs/bench/h200-2026-12-01/session12/ab12.py new $OUT/ab_new.json > /tmp/ab_new.log 2>&1
echo "ab new rc=$? t=$((SECONDS-T0))" >> $P
cat /tmp/ab_old.log /tmp/ab_new.log >> $P
PYTHONPATH=. timeout 170 python3 docs/bench/h200-2026-12-01/session12/opt12.py $OUT/opt.json 150 > $OUT/opt.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
for d in gauss zipf; do
  PYTHONPATH=. timeout 30 python3 benchmarks/profile_triton.py --mode select --B 1024 --dist $d --cases p0.9 >> $P 2>&1
done
PYTHONPATH=. timeout 30 python3 benchmarks/profile_triton.py --mode select --B 1 --dist zipf --cases p0.9,k50 >> $P 2>&1
echo "profile t=$((SECONDS-T0))" >> $P
left=$((545 - (SECONDS - T0)))
QRITA_TEST_BACKENDS=triton PYTHONPATH=. timeout $left python3 -m pytest -q -m "not gpu" -p no:cacheprovider -rfE \
  tests/test_conformance.py tests/test_properties.py > $OUT/small.log 2>&1
echo "small rc=$? t=$((SECONDS-T0))" >> $P
