#!/usr/bin/env bash
# session 16, call B: FlashInfer's warm-up from t=0, nearly alone (call A's, beside seven test processes, ran past
# 420 s); beside it opt16b.py (fold_pick), sweep_triton.py --set kp_harness (issue 3: the harness's LLM-like
# k100+p0.9 slowdown) and the Triton GPU tests call A left unfinished; then the sampler against FlashInfer (issue 7)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >> $P 2>&1
(PYTHONPATH=/tmp/site:. timeout 480 python3 -c "import sys; sys.argv[1:] = ['flashinfer-sample', 'float32']
from qrita.bench.providers import _FLASHINFER_WARMUP as s; exec(s)" > /tmp/fi_warm.log 2>&1; echo "fi end t=$((SECONDS-T0))" >> $P) &
export PYTHONPATH=.
timeout 110 python3 docs/bench/h200-2026-12-02/session16/opt16b.py $OUT/opt.json 95 > $OUT/ab.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
timeout 130 python3 benchmarks/sweep_triton.py --set kp_harness --budget-s 110 --out $OUT/kp.json > $OUT/kp.log 2>&1
echo "kp rc=$? t=$((SECONDS-T0))" >> $P
left=$((430 - (SECONDS - T0)))
QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m gpu -p no:cacheprovider -rfE \
  -k "no_sync or top_p_hits or scratch or small_batch" tests/test_triton_backend.py > /tmp/suite_backend.log 2>&1
echo "suite rc=$? t=$((SECONDS-T0))" >> $P
{ echo "== backend passed=$(grep -c PASSED /tmp/suite_backend.log) failed=$(grep -c FAILED /tmp/suite_backend.log)"
  grep -E "PASSED|FAILED|ERROR|Error" /tmp/suite_backend.log | head -30 | cut -c1-250; tail -2 /tmp/suite_backend.log; } > $OUT/suite.log
while ! grep -q "fi end" $P && [ $((SECONDS - T0)) -lt 485 ]; do sleep 2; done
tail -2 /tmp/fi_warm.log >> $P
left=$((565 - (SECONDS - T0)))
mkdir -p $OUT/sample
QRITA_GIT_COMMIT=$SHA PYTHONPATH=/tmp/site:. timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/sample --budget-s $((left-8)) \
  --providers qrita-triton-sample,flashinfer-sample --scenarios k100p0.9,topk50,topp0.9 \
  --dists llm --dtypes fp32 --batches 64,1024 --vocabs 128256,151936 --no-plots > /tmp/sample.log 2>&1
echo "sample rc=$? t=$((SECONDS-T0))" >> $P
tail -4 /tmp/sample.log >> $P
