#!/usr/bin/env bash
# session 25, call C (tree try/all: main + numba-wide-miss + triton-chain-b1).  First, on a quiet GPU, the
# harness's issue-6 rows (Numba select beside Triton select, fp32, B=16 and 1024, V=131072); then side by side
# the Triton backend's GPU tests (timed out in call A only because seven suites shared the GPU), the rest of the
# Triton small-shape conformance, and the tiny-p test on every GPU backend.
#   bash docs/bench/h100-2026-12-05/session25/s25c.sh <SHA>     (probe.log, suite.log, numba/ under $OUT)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=${1:?commit SHA}
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import torch, triton, numba_cuda; print('torch', torch.__version__, 'triton', triton.__version__, 'numba-cuda', numba_cuda.__version__)"; } > $P 2>&1
mkdir -p $OUT/numba
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 150 python3 -m qrita.bench --full --out $OUT/numba --budget-s 130 \
  --providers qrita-triton-select,qrita-numba-select --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf \
  --dtypes fp32 --batches 1024,16 --vocabs 131072 --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
run() { name=$1; be=$2; shift 2; QRITA_TEST_BACKENDS=$be timeout 230 python3 -m pytest -v -p no:cacheprovider -rfE "$@" \
  > /tmp/suite_$name.log 2>&1; echo "$name rc=$? t=$((SECONDS-T0))" >> $P; }
run backend triton -m gpu tests/test_triton_backend.py &
run small triton -m "not gpu" -k "test_k_ or test_p_special or test_tiny or test_top_p_renorm or test_empty or test_one_dim or test_non_contig or test_in_place or test_forced or test_truncation_hits or test_natural or test_deterministic or test_batch_inv or test_apply or test_masking or test_selection_methods or test_repr or test_check_true" tests/test_conformance.py &
run tiny "cupy,numba" -k "tiny_positive or p_special" tests/test_conformance.py &
wait
echo "suite t=$((SECONDS-T0))" >> $P
for f in backend small tiny; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -2 /tmp/suite_$f.log | cut -c1-300
done > $OUT/suite.log
tail -8 /tmp/bench.log >> $P
