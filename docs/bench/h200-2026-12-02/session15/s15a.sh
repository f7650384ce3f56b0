#!/usr/bin/env bash
# session 15, call A: the fourteenth session's final tree (every default of f294f7a; kernels.py unchanged since)
# on the GPU. FlashInfer's warm-up starts at t=0; the Triton GPU suites (conformance split over three processes,
# triton_backend, sampling) and the small-shape adversarial tests side by side; then, on a quiet GPU, the
# harness for issue 3 (masked, select, torch-topk; B=1024 and 1; fp32, bf16) and the sampler against FlashInfer
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >> $P 2>&1
(PYTHONPATH=/tmp/site:. timeout 430 python3 -c "import sys; sys.argv[1:] = ['flashinfer-sample', 'float32']
from qrita.bench.providers import _FLASHINFER_WARMUP as s; exec(s)" > /tmp/fi_warm.log 2>&1 &)
export PYTHONPATH=. QRITA_TEST_BACKENDS=triton
left=$((425 - (SECONDS - T0)))
run() { name=$1; shift; timeout $left python3 -m pytest -v -p no:cacheprovider -rfE "$@" > /tmp/suite_$name.log 2>&1; }
run conf32 -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
run conf16 -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
run confrest -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
run backend -m gpu tests/test_triton_backend.py &
run sampling -m gpu tests/test_sampling.py &
run small -m "not gpu" -k "subnormal or signed_zeros or extreme or infinities or nan_and_empty" tests/test_conformance.py &
wait
echo "suite t=$((SECONDS-T0))" >> $P
for f in conf32 conf16 confrest backend sampling small; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -2 /tmp/suite_$f.log | cut -c1-300
done > $OUT/suite.log
mkdir -p $OUT/bench $OUT/sample
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 60 python3 -m qrita.bench --full --out $OUT/bench --budget-s 45 \
  --providers qrita-triton,qrita-triton-select,torch-topk --scenarios topk50,topp0.9,k100p0.9 \
  --dists llm,zipf,gaussian --dtypes fp32,bf16 --batches 1024,1 --vocabs 131072 --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
tail -3 /tmp/bench.log >> $P
echo "fi t=$((SECONDS-T0))" >> $P; tail -2 /tmp/fi_warm.log >> $P
left=$((565 - (SECONDS - T0)))
QRITA_GIT_COMMIT=$SHA PYTHONPATH=/tmp/site:. timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/sample --budget-s $((left-15)) \
  --providers qrita-triton-sample,flashinfer-sample --scenarios topk50,topp0.9,k100p0.9 \
  --dists llm --dtypes fp32 --batches 64,1024 --vocabs 128256,151936 --no-plots > $OUT/sample/bench.log 2>&1
echo "sample rc=$? t=$((SECONDS-T0))" >> $P
