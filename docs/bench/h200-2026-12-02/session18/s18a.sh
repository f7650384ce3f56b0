#!/usr/bin/env bash
# session 18, call A: FlashInfer's warm-up from t=0 (CPU) beside triton_backend's four GPU tests not rerun
# since 97130fa, the new order options' bit test at GPU sizes and the L2-reuse A/B (opt18.py: two processes
# fill the Triton cache, one times); then, on a quiet GPU, the sampler against FlashInfer (issue 7)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
D=docs/bench/h200-2026-12-02/session18
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >> $P 2>&1
(PYTHONPATH=/tmp/site:. timeout 480 python3 -c "import sys; sys.argv[1:] = ['flashinfer-sample', 'float32']
from qrita.bench.providers import _FLASHINFER_WARMUP as s; exec(s)" > /tmp/fi_warm.log 2>&1; echo "fi end t=$((SECONDS-T0))" >> $P) &
FI=$!
export PYTHONPATH=.
QRITA_TEST_BACKENDS=triton timeout 300 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu \
  -k "no_sync or top_p_hits or scratch or small_batch" tests/test_triton_backend.py > /tmp/suite_gpu4.log 2>&1 &
A=$!
QRITA_TEST_BACKENDS=triton timeout 300 python3 -m pytest -v -p no:cacheprovider -rfE -m "not gpu" \
  -k "pass_order or schedule_options or one_row_waves" tests/test_triton_backend.py > /tmp/suite_order.log 2>&1 &
B=$!
timeout 200 python3 $D/opt18.py /tmp/w0.json 190 --warm 0/2 > /tmp/w0.log 2>&1 &
W0=$!
timeout 200 python3 $D/opt18.py /tmp/w1.json 190 --warm 1/2 > /tmp/w1.log 2>&1 &
W1=$!
wait $W0 $W1
echo "warm t=$((SECONDS-T0))" >> $P
wait $A $B
echo "suites t=$((SECONDS-T0))" >> $P
for f in gpu4 order; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "PASSED|FAILED|ERROR|Error" /tmp/suite_$f.log | head -30 | cut -c1-300; tail -2 /tmp/suite_$f.log | cut -c1-300
done > $OUT/suite.log
tail -3 /tmp/w0.log /tmp/w1.log >> $P
timeout 170 python3 $D/opt18.py $OUT/opt.json 160 > $OUT/opt.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
wait $FI
tail -2 /tmp/fi_warm.log >> $P
left=$((590 - (SECONDS - T0)))
mkdir -p $OUT/sample
QRITA_GIT_COMMIT=$SHA PYTHONPATH=/tmp/site:. timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/sample --budget-s $((left-8)) \
  --providers qrita-triton-sample,flashinfer-sample --scenarios k100p0.9,topk50,topp0.9 \
  --dists llm --dtypes fp32 --batches 64,1024 --vocabs 128256,151936 --no-plots > /tmp/sample.log 2>&1
echo "sample rc=$? t=$((SECONDS-T0))" >> $P
tail -4 /tmp/sample.log >> $P
