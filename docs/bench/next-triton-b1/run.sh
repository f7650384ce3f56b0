#!/usr/bin/env bash
# next/triton-b1 on an H200 (torch, triton, pytest; no nox, no network), from the repository root:
#   bash docs/bench/next-triton-b1/run.sh <SHA>
# Writes at most 6 files under $OUT: probe.log, ab.json, ab.log, chain_test.log, gpu_tests.log, times.log.
# About 5 minutes: the A/B of chain_rounds first (the point of the call; a hang shows as its timeout),
# then the new bit test on the GPU (real concurrency of the waits, misses included), then the GPU tests.
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=${1:?commit SHA}
T0=$SECONDS
D=docs/bench/next-triton-b1
P=$OUT/probe.log
{ echo "== commit $SHA (tree $(git rev-parse HEAD 2>/dev/null))"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $P 2>&1
timeout 170 python3 $D/ab.py $OUT/ab.json > $OUT/ab.log 2>&1
echo "ab rc=$? t=$((SECONDS-T0))" >> $P
timeout 60 python3 -m pytest -q -p no:cacheprovider -rfE tests/test_triton_backend.py -k chain_rounds \
  > $OUT/chain_test.log 2>&1
echo "chain_test rc=$? t=$((SECONDS-T0))" >> $P
left=$((290 - (SECONDS - T0)))
[ $left -lt 30 ] && left=30
timeout $left python3 -m pytest -q -p no:cacheprovider -rfE --durations=8 -m gpu tests/test_triton_backend.py \
  > $OUT/gpu_tests.log 2>&1
echo "gpu_tests rc=$? t=$((SECONDS-T0)) (timeout $left s)" >> $P
# the verdicts in one place: bits, and the A/B per case (us, default -> chain)
python3 - $OUT/ab.json > $OUT/times.log 2>&1 <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
print(f"{len(rows)} cases, bits differ in {sum(not r['same_bits'] for r in rows)}")
for r in rows:
    what = f"{r['dist']:8s} B={r['B']:<2d} {r['dtype']:8s} k={r['k']} p={r['p']} {'masked' if r['masked'] else 'select'}"
    print(f"{what:52s} {r['options']!s:22s} {r.get('default')} -> {r.get('chain')} us "
          f"({r.get('chain_minus_default')}) same_bits={r['same_bits']} hit_rows={r.get('hit_rows')}")
PY
tail -3 $OUT/gpu_tests.log >> $P
tail -2 $OUT/chain_test.log >> $P
