#!/usr/bin/env bash
# session 15, call C (the session's last device time): four-warp span programs for the sampler's scalar top-k
# with a top-p at 16 < B <= 64 (launch.span_warps_of). FlashInfer's warm-up starts at t=0; beside its compile
# phase: opt15c.py, the harness's B=1 rows (issue 3) and the tests of the changed paths (sampling -m gpu with the
# new small-batch test; the slot draw over several steps); then the sampler against FlashInfer on a quiet GPU (top-k 50 and k100+p0.9; top-p 0.9 in call A)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >> $P 2>&1
(PYTHONPATH=/tmp/site:. timeout 430 python3 -c "import sys; sys.argv[1:] = ['flashinfer-sample', 'float32']
from qrita.bench.providers import _FLASHINFER_WARMUP as s; exec(s)" > /tmp/fi_warm.log 2>&1; echo "fi end t=$((SECONDS-T0))" >> $P) &
export PYTHONPATH=.
timeout 185 python3 docs/bench/h200-2026-12-02/session15/opt15c.py $OUT/opt.json 165 > $OUT/ab.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
mkdir -p $OUT/bench $OUT/sample
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 75 python3 -m qrita.bench --full --out $OUT/bench --budget-s 55 \
  --providers qrita-triton,qrita-triton-select --scenarios topk50,topp0.9,k100p0.9 \
  --dists gaussian,zipf,llm --dtypes fp32 --batches 1 --vocabs 131072 --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
tail -3 /tmp/bench.log >> $P
left=$((395 - (SECONDS - T0)))
QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m gpu -p no:cacheprovider -rfE tests/test_sampling.py \
  > /tmp/suite_sampling.log 2>&1 &
QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m "not gpu" -p no:cacheprovider -rfE -k sample_draws \
  tests/test_triton_backend.py > /tmp/suite_draws.log 2>&1 &
wait -n; wait -n
echo "suite t=$((SECONDS-T0))" >> $P
for f in sampling draws; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -3 /tmp/suite_$f.log | cut -c1-300
  grep -E "PASSED|SKIPPED|FAILED" /tmp/suite_$f.log | cut -c1-200
done > $OUT/suite.log
while ! grep -q "fi end" $P && [ $((SECONDS - T0)) -lt 425 ]; do sleep 2; done
echo "fi t=$((SECONDS-T0))" >> $P; tail -2 /tmp/fi_warm.log >> $P
left=$((447 - (SECONDS - T0)))
QRITA_GIT_COMMIT=$SHA PYTHONPATH=/tmp/site:. timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/sample --budget-s $((left-8)) \
  --providers qrita-triton-sample,flashinfer-sample --scenarios topk50,k100p0.9 \
  --dists llm --dtypes fp32 --batches 64,1024 --vocabs 128256,151936 --no-plots > /tmp/sample.log 2>&1
echo "sample rc=$? t=$((SECONDS-T0))" >> $P
tail -4 /tmp/sample.log >> $P
