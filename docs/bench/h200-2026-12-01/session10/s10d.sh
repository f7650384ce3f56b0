#!/usr/bin/env bash
# session 10, call D: the B=1 fold A/B (sweep) and the B=1 harness on one machine
export PYTHONPATH=. PYTHONUNBUFFERED=1
T0=$SECONDS
P=$OUT/probe.log
echo "== commit $1" > $P
QRITA_GIT_COMMIT=$1 timeout -s ABRT 60 python3 -m qrita.bench --full --out $OUT/bench --budget-s 45 \
  --providers qrita-triton,qrita-triton-select --scenarios topk50,topp0.9 \
  --dists llm,gaussian --dtypes fp32 --batches 1 --vocabs 131072 --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
timeout 100 python3 benchmarks/sweep_triton.py --set fold --match "B=1 " --out $OUT/sweep_fold_b1.json --budget-s 85 >> $P 2>&1
echo "sweep rc=$? t=$((SECONDS-T0))" >> $P
