#!/usr/bin/env bash
# session 22, call B: the cluster combine only for requests that may hold a top-p-only row again
# (_launch._wants_clusters) and the review clean-ups (mask_slice, no non-cluster stubs, no info
# in ccombine).  The CuPy GPU suite, the GPU conformance for cupy, kernel times of small batches
# (prof22.py), then the issue-5 matrix (B=1024 and B=16, fp32 and bf16), CuPy beside Triton.
#   bash docs/bench/h200-2026-12-04/session22/s22a.sh <SHA>
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
D=docs/bench/h200-2026-12-04/session22
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import torch, triton, cupy; print(torch.__version__, triton.__version__, cupy.__version__)"; } > $P 2>&1
timeout 300 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu --durations=15 tests/test_cupy_backend.py > /tmp/suite_cupy.log 2>&1
echo "suite rc=$? t=$((SECONDS-T0))" >> $P
QRITA_TEST_BACKENDS=cupy timeout 90 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_conformance.py > /tmp/conf.log 2>&1
echo "conf rc=$? t=$((SECONDS-T0))" >> $P
{ for f in /tmp/suite_cupy.log /tmp/conf.log; do
    echo "== $f passed=$(grep -c PASSED $f) skipped=$(grep -c SKIPPED $f) failed=$(grep -c FAILED $f)"
    grep -E "FAILED|ERROR|Error" $f | head -20 | cut -c1-300; grep -A16 "slowest" $f | cut -c1-200; tail -2 $f | cut -c1-300
  done; } > $OUT/suite.log
timeout 60 python3 $D/prof22.py $OUT/prof.json > /tmp/prof.log 2>&1
echo "prof rc=$? t=$((SECONDS-T0))" >> $P
tail -3 /tmp/prof.log >> $P
for b in 1024 16; do
  left=$((570 - (SECONDS - T0)))
  [ $b = 1024 ] && left=$((left / 2))
  [ $left -lt 40 ] && break
  QRITA_GIT_COMMIT=$SHA timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/b$b --budget-s $((left-15)) \
    --providers qrita-triton-select,qrita-cupy-select,qrita-triton,qrita-cupy \
    --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches $b --vocabs 131072 \
    --no-plots > /tmp/b$b.log 2>&1
  echo "b$b rc=$? t=$((SECONDS-T0))" >> $P
  tail -4 /tmp/b$b.log >> $P
done
