#!/usr/bin/env bash
# Prepared in session 22 (no device time left) for the next session's first call, on branch
# next/cupy-cut-record: the split path's combine takes the row's cuts from the partial kernel
# (RowCut, written by slice 0) instead of reading the sample again (row_setup).  About 6 minutes:
#  1. the CuPy GPU suite, the GPU and small-shape conformance for cupy (the same bits expected);
#  2. ab22d.py of session 22 (B=16/4/1 rows, variants), to compare with session22/callD-ca37de5/ab.json;
#  3. the issue-5 matrix at B=16 (fp32, bf16) with a budget that reaches every row.
#   bash docs/bench/next-cupy/run.sh <SHA>
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
timeout 200 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_cupy_backend.py > /tmp/suite_cupy.log 2>&1
echo "suite rc=$? t=$((SECONDS-T0))" >> $P
QRITA_TEST_BACKENDS=cupy timeout 60 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_conformance.py > /tmp/conf.log 2>&1
echo "conf rc=$? t=$((SECONDS-T0))" >> $P
QRITA_TEST_BACKENDS=cupy timeout 60 python3 -m pytest -v -p no:cacheprovider -rfE -m "not gpu" tests/test_conformance.py > /tmp/small.log 2>&1
echo "small rc=$? t=$((SECONDS-T0))" >> $P
{ for f in /tmp/suite_cupy.log /tmp/conf.log /tmp/small.log; do
    echo "== $f passed=$(grep -c PASSED $f) skipped=$(grep -c SKIPPED $f) failed=$(grep -c FAILED $f)"
    grep -E "FAILED|ERROR|Error" $f | head -20 | cut -c1-300; tail -2 $f | cut -c1-300
  done; } > $OUT/suite.log
timeout 100 python3 docs/bench/h200-2026-12-04/session22/ab22d.py $OUT/ab.json > /tmp/ab.log 2>&1
echo "ab rc=$? t=$((SECONDS-T0))" >> $P
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 170 python3 -m qrita.bench --full --out $OUT/b16 --budget-s 150 \
  --providers qrita-triton-select,qrita-cupy-select,qrita-triton,qrita-cupy \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 16 --vocabs 131072 \
  --no-plots > /tmp/b16.log 2>&1
echo "b16 rc=$? t=$((SECONDS-T0))" >> $P
python3 docs/bench/h200-2026-12-04/session22/ratios.py $OUT/b16/results.json >> $P 2>&1
