#!/usr/bin/env bash
# session 13, call A: the twelfth session's final tree on the GPU. FlashInfer's warm-up starts at t=0;
# ab12.py at B=1024 (hashes against session12 call B), then the GPU suites, the small-shape adversarial
# tests and the CuPy backend's subnormal tests side by side, then the harness (masked, select, torch-topk)
# and the sampler against FlashInfer on a quiet GPU
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >> $P 2>&1
(PYTHONPATH=/tmp/site:. timeout 430 python3 -c "import sys; sys.argv[1:] = ['flashinfer-sample', 'float32']
from qrita.bench.providers import _FLASHINFER_WARMUP as s; exec(s)" > /tmp/fi_warm.log 2>&1 &)
export PYTHONPATH=.
AB_B1024=1 timeout 90 python3 docs/bench/h200-2026-12-01/session12/ab12.py new $OUT/ab_new.json > /tmp/ab_new.log 2>&1
echo "ab new rc=$? t=$((SECONDS-T0))" >> $P
cut -c1-220 /tmp/ab_new.log >> $P
left=$((400 - (SECONDS - T0)))
for f in conformance triton_backend sampling; do
  QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m gpu -p no:cacheprovider -rfE tests/test_$f.py > /tmp/suite_$f.log 2>&1 &
done
QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m "not gpu" -p no:cacheprovider -rfE \
  -k "subnormal or signed_zeros or extreme or infinities or nan_and_empty" tests/test_conformance.py > /tmp/suite_small.log 2>&1 &
QRITA_TEST_BACKENDS=cupy timeout $left python3 -m pytest -v -p no:cacheprovider -rfE -k subnormal tests/test_conformance.py > /tmp/suite_cupy.log 2>&1 &
wait
echo "suite t=$((SECONDS-T0))" >> $P
for f in conformance triton_backend sampling small cupy; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -2 /tmp/suite_$f.log
done > $OUT/suite.log
mkdir -p $OUT/bench $OUT/sample
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 60 python3 -m qrita.bench --full --out $OUT/bench --budget-s 45 \
  --providers qrita-triton,qrita-triton-select,torch-topk --scenarios topk50,topp0.9,k100p0.9 \
  --dists llm,zipf,gaussian --dtypes fp32,bf16 --batches 1024,1 --vocabs 131072 --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
tail -3 /tmp/bench.log >> $P
echo "fi t=$((SECONDS-T0))" >> $P; tail -2 /tmp/fi_warm.log >> $P
left=$((560 - (SECONDS - T0)))
QRITA_GIT_COMMIT=$SHA PYTHONPATH=/tmp/site:. timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/sample --budget-s $((left-15)) \
  --providers qrita-triton-sample,flashinfer-sample --scenarios topk50,topp0.9,k100p0.9 \
  --dists llm --dtypes fp32 --batches 64,1024 --vocabs 128256,151936 --no-plots > $OUT/sample/bench.log 2>&1
echo "sample rc=$? t=$((SECONDS-T0))" >> $P
