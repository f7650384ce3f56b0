#!/usr/bin/env bash
# session 17, call D: the final tree (its default kernels are 1fd236e's, whose GPU conformance call A ran). FlashInfer's
# warm-up from t=0 beside the Triton GPU tests (triton_backend's and sampling's, radix select's bits, the small-shape
# adversarial tests); then, on a quiet GPU, the sampler against FlashInfer (issue 7)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
SHA=$1
LIMIT=${2:-500}
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >> $P 2>&1
(PYTHONPATH=/tmp/site:. timeout $((LIMIT - 80)) python3 -c "import sys; sys.argv[1:] = ['flashinfer-sample', 'float32']
from qrita.bench.providers import _FLASHINFER_WARMUP as s; exec(s)" > /tmp/fi_warm.log 2>&1; echo "fi end t=$((SECONDS-T0))" >> $P) &
FI=$!
export PYTHONPATH=.
run() { name=$1; shift; QRITA_TEST_BACKENDS=triton timeout $((LIMIT - 130)) python3 -m pytest -v -p no:cacheprovider -rfE "$@" > /tmp/suite_$name.log 2>&1; }
run backend -m gpu tests/test_triton_backend.py &
A=$!
run sampling -m gpu tests/test_sampling.py &
B=$!
run radix -m "not gpu" -k radix tests/test_triton_backend.py &
C=$!
run small -m "not gpu" -k "subnormal or signed_zeros or extreme or infinities or nan_and_empty" tests/test_conformance.py &
D=$!
wait $A $B $C $D
echo "suite t=$((SECONDS-T0))" >> $P
for f in backend sampling radix small; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -2 /tmp/suite_$f.log | cut -c1-300
done > $OUT/suite.log
wait $FI
tail -2 /tmp/fi_warm.log >> $P
left=$((LIMIT - 12 - (SECONDS - T0)))
mkdir -p $OUT/sample
QRITA_GIT_COMMIT=$SHA PYTHONPATH=/tmp/site:. timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/sample --budget-s $((left-8)) \
  --providers qrita-triton-sample,flashinfer-sample --scenarios k100p0.9,topk50,topp0.9 \
  --dists llm --dtypes fp32 --batches 64,1024 --vocabs 128256,151936 --no-plots > /tmp/sample.log 2>&1
echo "sample rc=$? t=$((SECONDS-T0))" >> $P
tail -4 /tmp/sample.log >> $P
