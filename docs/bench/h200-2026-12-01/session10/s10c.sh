#!/usr/bin/env bash
# session 10, call C: the harness with the new defaults and in-place timing; then GPU tests of the fold options
export PYTHONPATH=. PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 QRITA_TEST_BACKENDS=triton
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $1"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $P 2>&1
mkdir -p $OUT/bench
QRITA_GIT_COMMIT=$1 timeout -s ABRT 330 python3 -m qrita.bench --full --out $OUT/bench --budget-s 300 \
  --providers qrita-triton,qrita-triton-select,torch-topk --scenarios topk50,topp0.9,k100p0.9 \
  --dists llm,zipf,gaussian --dtypes fp32,bf16 --batches 1,16,1024 --vocabs 131072 --no-plots > $OUT/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
left=$((500 - (SECONDS - T0)))
timeout $left python3 -m pytest -q -m gpu -p no:cacheprovider -rfE tests/test_triton_backend.py -k "schedule or no_sync or miss" > $OUT/tests.log 2>&1
echo "tests rc=$? t=$((SECONDS-T0))" >> $P
