#!/usr/bin/env bash
# session 17, call B: the small-batch launch chain and the finish's warps (opt17.py): Triton's cache filled by
# eight untimed processes, then one timing process on a quiet GPU; then per-kernel profiles at B=1
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
S=docs/bench/h200-2026-12-02/session17
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
for i in 0 1 2 3 4 5 6 7; do timeout 200 python3 $S/opt17.py /tmp/w$i.json 190 --warm $i/8 > /tmp/warm$i.log 2>&1 & done
wait
echo "warm t=$((SECONDS-T0))" >> $P
grep -h error /tmp/warm*.log | head -5 | cut -c1-300 >> $P
timeout 230 python3 $S/opt17.py $OUT/opt.json 215 > $OUT/ab.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
{ timeout 50 python3 benchmarks/profile_triton.py --B 1 --V 131072 --dist llm --cases k50,k100p0.9,p0.9 --mode select
  timeout 30 python3 benchmarks/profile_triton.py --B 1 --V 131072 --dist llm --cases k50,k100p0.9 --mode masked
  timeout 30 python3 benchmarks/profile_triton.py --B 1 --V 131072 --dist zipf --cases k50 --mode select
} > $OUT/profile.log 2>&1
echo "profile t=$((SECONDS-T0))" >> $P
