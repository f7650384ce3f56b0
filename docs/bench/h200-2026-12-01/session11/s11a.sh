#!/usr/bin/env bash
# session 11, call A: span-pass A/B (HEAD tree in .scratch/old against the working tree), then the sampler
# against FlashInfer (warm-up started at t=0)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .whl/*.whl >> $P 2>&1
(PYTHONPATH=/tmp/site:. timeout 420 python3 -c "import sys; sys.argv[1:] = ['flashinfer-sample', 'float32']
from qrita.bench.providers import _FLASHINFER_WARMUP as s; exec(s)" > /tmp/fi_warm.log 2>&1 &)
PYTHONPATH=.scratch/old timeout 170 python3 .scratch/ab.py old $OUT/ab_old.json > /tmp/ab_old.log 2>&1
echo "ab old rc=$? t=$((SECONDS-T0))" >> $P
PYTHONPATH=. timeout 170 python3 .scratch/ab.py new $OUT/ab_new.json > /tmp/ab_new.log 2>&1
echo "ab new rc=$? t=$((SECONDS-T0))" >> $P
paste -d'\n' /tmp/ab_old.log /tmp/ab_new.log > $OUT/ab.log
# wait for the FlashInfer build (at most until t=380)
while [ $((SECONDS-T0)) -lt 380 ] && ! grep -q "warm\|done\|ok" /tmp/fi_warm.log 2>/dev/null; do sleep 5; done
echo "fi t=$((SECONDS-T0))" >> $P; tail -3 /tmp/fi_warm.log >> $P
left=$((550 - (SECONDS - T0)))
mkdir -p $OUT/sample
QRITA_GIT_COMMIT=$SHA PYTHONPATH=/tmp/site:. timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/sample --budget-s $((left-20)) \
  --providers qrita-triton-sample,flashinfer-sample --scenarios topk50,topp0.9,k100p0.9 \
  --dists llm --dtypes fp32 --batches 64,1024 --vocabs 128256,151936 --no-plots > $OUT/sample/bench.log 2>&1
echo "harness rc=$? t=$((SECONDS-T0))" >> $P
