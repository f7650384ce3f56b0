#!/usr/bin/env bash
# session 22, call E: last_tie_col_row a span of 8 chunks a scan.  The CuPy GPU suite, the
# issue-5 matrix at B=16, the GPU and small-shape conformance for cupy, then the matrix at
# B=1024 with what time is left (fp32 and bf16), CuPy beside Triton.
#   bash docs/bench/h200-2026-12-04/session22/s22e.sh <SHA>
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
timeout 200 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_cupy_backend.py > /tmp/suite_cupy.log 2>&1
echo "suite rc=$? t=$((SECONDS-T0))" >> $P
bench() {  # batches dtypes seconds
  QRITA_GIT_COMMIT=$SHA timeout -s ABRT $3 python3 -m qrita.bench --full --out $OUT/b$1 --budget-s $(($3-15)) \
    --providers qrita-triton-select,qrita-cupy-select,qrita-triton,qrita-cupy \
    --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes $2 --batches $1 --vocabs 131072 \
    --no-plots > /tmp/b$1.log 2>&1
  echo "b$1 rc=$? t=$((SECONDS-T0))" >> $P
  tail -4 /tmp/b$1.log >> $P
}
bench 16 fp32,bf16 70
QRITA_TEST_BACKENDS=cupy timeout 60 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_conformance.py > /tmp/conf.log 2>&1
echo "conf rc=$? t=$((SECONDS-T0))" >> $P
QRITA_TEST_BACKENDS=cupy timeout 60 python3 -m pytest -v -p no:cacheprovider -rfE -m "not gpu" tests/test_conformance.py > /tmp/small.log 2>&1
echo "small rc=$? t=$((SECONDS-T0))" >> $P
{ for f in /tmp/suite_cupy.log /tmp/conf.log /tmp/small.log; do
    echo "== $f passed=$(grep -c PASSED $f) skipped=$(grep -c SKIPPED $f) failed=$(grep -c FAILED $f)"
    grep -E "FAILED|ERROR|Error" $f | head -20 | cut -c1-300; tail -2 $f | cut -c1-300
  done; } > $OUT/suite.log
left=$((400 - (SECONDS - T0)))
[ $left -gt 60 ] && bench 1024 fp32,bf16 $left
