#!/usr/bin/env bash
# session 21, call D: the cluster combine only for requests that may hold a top-p-only row
# (_launch._wants_clusters).  The CuPy GPU suite, then the harness at B=16 and B=1 (fp32, bf16),
# CuPy beside Triton.
#   bash docs/bench/h200-2026-12-04/session21/s21d.sh <SHA>
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
timeout 200 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_cupy_backend.py > /tmp/suite_cupy.log 2>&1
echo "suite rc=$? t=$((SECONDS-T0))" >> $P
{ echo "== cupy passed=$(grep -c PASSED /tmp/suite_cupy.log) skipped=$(grep -c SKIPPED /tmp/suite_cupy.log)" \
    "failed=$(grep -c FAILED /tmp/suite_cupy.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_cupy.log | head -30 | cut -c1-300; tail -3 /tmp/suite_cupy.log | cut -c1-300
} > $OUT/suite.log
mkdir -p $OUT/backends16
left=$((330 - (SECONDS - T0)))
QRITA_GIT_COMMIT=$SHA timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/backends16 --budget-s $((left-15)) \
  --providers qrita-triton-select,qrita-cupy-select,qrita-triton,qrita-cupy \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 16,1 --vocabs 131072 \
  --no-plots > /tmp/backends16.log 2>&1
echo "backends16 rc=$? t=$((SECONDS-T0))" >> $P
tail -4 /tmp/backends16.log >> $P
