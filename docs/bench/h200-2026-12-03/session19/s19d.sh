#!/usr/bin/env bash
# session 19, call D: 256-thread blocks (var19.py), the CuPy GPU suite with the loads and stores
# of any ITEMS, and the harness rows of B=16 that call C had no time for.
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
D=docs/bench/h200-2026-12-03/session19
timeout 120 python3 $D/var19.py $OUT/var.json > $OUT/var.log 2>&1
echo "var rc=$? t=$((SECONDS-T0))" >> $P
timeout 150 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_cupy_backend.py > /tmp/suite_cupy.log 2>&1
echo "suite rc=$? t=$((SECONDS-T0))" >> $P
{ echo "== cupy passed=$(grep -c PASSED /tmp/suite_cupy.log) skipped=$(grep -c SKIPPED /tmp/suite_cupy.log)" \
    "failed=$(grep -c FAILED /tmp/suite_cupy.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_cupy.log | head -30 | cut -c1-300; tail -3 /tmp/suite_cupy.log | cut -c1-300
} > $OUT/suite.log
mkdir -p $OUT/backends
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 150 python3 -m qrita.bench --full --out $OUT/backends --budget-s 130 \
  --providers qrita-triton-select,qrita-cupy-select,qrita-triton,qrita-cupy \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16 --batches 16 --vocabs 131072 \
  --no-plots > /tmp/backends.log 2>&1
echo "backends rc=$? t=$((SECONDS-T0))" >> $P
tail -8 /tmp/backends.log >> $P
