#!/usr/bin/env bash
# session 17, call C: radix select for the register tiles' top-k (opt17c.py): Triton's cache filled by eight
# untimed processes beside the new GPU test of its bits; then one timing process on a quiet GPU; then the
# per-kernel profile at B=1
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
S=docs/bench/h200-2026-12-02/session17
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
for i in 0 1 2 3 4 5 6 7; do timeout 130 python3 $S/opt17c.py /tmp/w$i.json 125 --warm $i/8 > /tmp/warm$i.log 2>&1 & done
QRITA_TEST_BACKENDS=triton timeout 130 python3 -m pytest -v -p no:cacheprovider -rfE -k "radix or fused_rounds" \
  tests/test_triton_backend.py > /tmp/suite_radix.log 2>&1 &
wait
echo "warm t=$((SECONDS-T0))" >> $P
grep -h error /tmp/warm*.log | head -5 | cut -c1-300 >> $P
{ echo "== radix passed=$(grep -c PASSED /tmp/suite_radix.log) failed=$(grep -c FAILED /tmp/suite_radix.log)"
  grep -E "PASSED|FAILED|ERROR|Error" /tmp/suite_radix.log | head -30 | cut -c1-250; tail -2 /tmp/suite_radix.log; } > $OUT/suite.log
timeout 150 python3 $S/opt17c.py $OUT/opt.json 140 > $OUT/ab.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
timeout 40 python3 benchmarks/profile_triton.py --B 1 --V 131072 --dist llm --cases k50,k100p0.9 --mode select \
  --options '{}' --options '{"radix_topk": false}' > $OUT/profile.log 2>&1
echo "profile t=$((SECONDS-T0))" >> $P
