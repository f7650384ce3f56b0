#!/usr/bin/env bash
# session 10, call E: k100+p0.9 at small B with the new default (updates folded) against no fold
export PYTHONPATH=. PYTHONUNBUFFERED=1
echo "== commit $1" > $OUT/probe.log
timeout 75 python3 benchmarks/sweep_triton.py --set fold --match "k=100" --out $OUT/sweep_fold_kp.json --budget-s 65 >> $OUT/probe.log 2>&1
echo "sweep rc=$?" >> $OUT/probe.log
