#!/usr/bin/env bash
# session 21, calls B and C: the CuPy cluster combine (sm_90: a missed row searched by 8 blocks, masking fused).
# ab21.py (cluster on/off, bits and time), the CuPy GPU suite and the conformance GPU shapes with the
# CuPy backend, then the harness at B=1 and B=16 (fp32, bf16), CuPy beside Triton.
#   bash docs/bench/h200-2026-12-04/session21/s21b.sh <SHA>   (call C: the leader/follower cluster combine)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import torch, triton, cupy; print(torch.__version__, triton.__version__, cupy.__version__)"; } > $P 2>&1
D=docs/bench/h200-2026-12-04/session21
timeout 150 python3 $D/ab21.py $OUT/ab.json > /tmp/ab.log 2>&1
echo "ab rc=$? t=$((SECONDS-T0))" >> $P
tail -3 /tmp/ab.log | cut -c1-400 >> $P
cp /tmp/ab.log $OUT/ab.log
timeout 260 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_cupy_backend.py > /tmp/suite_cupy.log 2>&1
echo "suite rc=$? t=$((SECONDS-T0))" >> $P
QRITA_TEST_BACKENDS=cupy timeout 110 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_conformance.py \
  > /tmp/suite_conf.log 2>&1
echo "conf rc=$? t=$((SECONDS-T0))" >> $P
for f in cupy conf; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log)" \
    "failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -30 | cut -c1-300; tail -3 /tmp/suite_$f.log | cut -c1-300
done > $OUT/suite.log
mkdir -p $OUT/backends16
left=$((400 - (SECONDS - T0)))
QRITA_GIT_COMMIT=$SHA timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/backends16 --budget-s $((left-15)) \
  --providers qrita-triton-select,qrita-cupy-select,qrita-triton,qrita-cupy \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 16,1 --vocabs 131072 \
  --no-plots > /tmp/backends16.log 2>&1
echo "backends16 rc=$? t=$((SECONDS-T0))" >> $P
tail -4 /tmp/backends16.log >> $P
left=$((570 - (SECONDS - T0)))
if [ $left -gt 60 ]; then
  mkdir -p $OUT/backends
  QRITA_GIT_COMMIT=$SHA timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/backends --budget-s $((left-15)) \
    --providers qrita-triton-select,qrita-cupy-select,qrita-triton,qrita-cupy \
    --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32 --batches 1024 --vocabs 131072 \
    --no-plots > /tmp/backends.log 2>&1
  echo "backends rc=$? t=$((SECONDS-T0))" >> $P
  tail -4 /tmp/backends.log >> $P
fi
