#!/usr/bin/env bash
# session 22, call D: the combine's partials and candidate copy a slice a thread.  ab22d.py
# (variants at B=16/4/1), the CuPy GPU suite, the GPU conformance for cupy, the small-shape
# conformance for cupy, then the issue-5 matrix at B=16 (fp32, bf16), CuPy beside Triton.
#   bash docs/bench/h200-2026-12-04/session22/s22d.sh <SHA>
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
D=docs/bench/h200-2026-12-04/session22
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
timeout 120 python3 $D/ab22d.py $OUT/ab.json > /tmp/ab.log 2>&1
echo "ab rc=$? t=$((SECONDS-T0))" >> $P
tail -3 /tmp/ab.log | cut -c1-400 >> $P
timeout 240 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu --durations=5 tests/test_cupy_backend.py > /tmp/suite_cupy.log 2>&1
echo "suite rc=$? t=$((SECONDS-T0))" >> $P
QRITA_TEST_BACKENDS=cupy timeout 80 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_conformance.py > /tmp/conf.log 2>&1
echo "conf rc=$? t=$((SECONDS-T0))" >> $P
QRITA_TEST_BACKENDS=cupy timeout 100 python3 -m pytest -v -p no:cacheprovider -rfE -m "not gpu" tests/test_conformance.py > /tmp/small.log 2>&1
echo "small rc=$? t=$((SECONDS-T0))" >> $P
{ for f in /tmp/suite_cupy.log /tmp/conf.log /tmp/small.log; do
    echo "== $f passed=$(grep -c PASSED $f) skipped=$(grep -c SKIPPED $f) failed=$(grep -c FAILED $f)"
    grep -E "FAILED|ERROR|Error" $f | head -20 | cut -c1-300; tail -2 $f | cut -c1-300
  done; } > $OUT/suite.log
left=$((560 - (SECONDS - T0)))
if [ $left -gt 50 ]; then
  QRITA_GIT_COMMIT=$SHA timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/b16 --budget-s $((left-15)) \
    --providers qrita-triton-select,qrita-cupy-select,qrita-triton,qrita-cupy \
    --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 16 --vocabs 131072 \
    --no-plots > /tmp/b16.log 2>&1
  echo "b16 rc=$? t=$((SECONDS-T0))" >> $P
  tail -4 /tmp/b16.log >> $P
fi
