#!/usr/bin/env bash
# session 14, call A: the finish's occupancy/latency options (fused_rounds, search_maxnreg, reg_cap=2048),
# first on select (sweep_triton.py --set occupancy), then on the sampler (session13/opt_occupancy.py)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"; } > $P 2>&1
timeout 270 python3 benchmarks/sweep_triton.py --set occupancy --budget-s 240 --out $OUT/occ.json > $OUT/occ.log 2>&1
echo "occ rc=$? t=$((SECONDS-T0))" >> $P
left=$((540 - (SECONDS - T0)))
timeout $left python3 docs/bench/h200-2026-12-01/session13/opt_occupancy.py $OUT/occ_sample.json $((left-40)) > $OUT/occ_sample.log 2>&1
echo "occ_sample rc=$? t=$((SECONDS-T0))" >> $P
