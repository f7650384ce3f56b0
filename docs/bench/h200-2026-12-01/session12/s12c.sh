#!/usr/bin/env bash
# session 12, call C: miss-round schedule options (loads in flight), with per-kernel profiles
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
T0=$SECONDS
P=$OUT/probe.log
echo "== commit $1" > $P
timeout 330 python3 docs/bench/h200-2026-12-01/session12/opt13.py $OUT/opt.json 310 > $OUT/opt.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
for o in '{}' '{"round_unroll": 8}' '{"round_unroll": 16}'; do
  timeout 40 python3 benchmarks/profile_triton.py --mode select --B 1024 --dist gauss --cases p0.9 --options "$o" 2>&1 | grep -v Warn >> $P
done
echo "profile t=$((SECONDS-T0))" >> $P
