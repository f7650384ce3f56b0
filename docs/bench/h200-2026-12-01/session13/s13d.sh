#!/usr/bin/env bash
# session 13, call D: the harness (select of the three GPU backends, masked Triton and CuPy; B=1024 and 16,
# fp32) with CuPy's fast paths on; then Numba's fused masking: its new GPU test and times/memory on and off
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
T0=$SECONDS
P=$OUT/probe.log
echo "== commit $1" > $P
mkdir -p $OUT/bench
QRITA_GIT_COMMIT=$1 timeout -s ABRT 130 python3 -m qrita.bench --full --out $OUT/bench --budget-s 110 \
  --providers qrita-triton-select,qrita-cupy-select,qrita-numba-select,qrita-triton,qrita-cupy \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32 --batches 1024,16 --vocabs 131072 \
  --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
tail -8 /tmp/bench.log >> $P
timeout 90 python3 -m pytest -v -m gpu -p no:cacheprovider -rfE -k "fused_mask or scratch_is_bounded" \
  tests/test_numba_backend.py > $OUT/numba_suite.log 2>&1
echo "numba suite rc=$? t=$((SECONDS-T0))" >> $P
timeout $((250 - (SECONDS - T0))) python3 docs/bench/h200-2026-12-01/session13/numba_fused.py $OUT/numba_fused.json > $OUT/numba_fused.log 2>&1
echo "numba fused rc=$? t=$((SECONDS-T0))" >> $P
