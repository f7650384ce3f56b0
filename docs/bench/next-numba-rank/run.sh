#!/usr/bin/env bash
# next/numba-rank (with next/numba-mask below it) on the GPU (torch, numba-cuda, pytest; no nox, no network).
# Two calls, from the repository root, the machine kept warm between them:
#   bash docs/bench/next-numba-rank/run.sh <SHA> timings   (about 8 min; quiet GPU)
#     probe.log, ab.json, ab_wide.json (split_wide off / on, session 27), profile.log, select/results.{json,md}, masked/results.{json,md}: the harness's issue-6
#     rows (Numba select beside Triton select, fp32, B=1024 and 16), Numba masking beside torch.topk masking and
#     Triton (top-k 50 and k100+p0.9, fp32 and bf16, B=64 and 1024), the A/B (ab.py: rank_select off / on, select
#     and masked, same bits), the per-kernel profile of select and of masking at B=16 and 64
#   bash docs/bench/next-numba-rank/run.sh <SHA> suites    (about 4 min)
#     probe.log, suite.log: the backend's GPU tests and the Numba conformance suite at real shapes, side by side
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
. benchmarks/device_lib.sh
SHA=${1:?commit SHA}
PART=${2:?timings or suites}
T0=$SECONDS
D=docs/bench/next-numba-rank
P=$OUT/probe.log
device_probe "$SHA" "($PART)"
if [ "$PART" = timings ]; then
  mkdir -p $OUT/select $OUT/masked
  QRITA_GIT_COMMIT=$SHA timeout -s ABRT 120 python3 -m qrita.bench --full --out $OUT/select --budget-s 100 \
    --providers qrita-triton-select,qrita-numba-select --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf \
    --dtypes fp32 --batches 1024,16 --vocabs 131072 --no-plots > /tmp/select.log 2>&1
  echo "select rc=$? t=$((SECONDS-T0))" >> $P; tail -4 /tmp/select.log >> $P
  QRITA_GIT_COMMIT=$SHA timeout -s ABRT 130 python3 -m qrita.bench --full --out $OUT/masked --budget-s 110 \
    --providers qrita-numba,torch-topk,qrita-triton --scenarios topk50,k100p0.9 --dists llm,gaussian,zipf \
    --dtypes fp32,bf16 --batches 1024,64 --vocabs 131072 --no-plots > /tmp/masked.log 2>&1
  echo "masked rc=$? t=$((SECONDS-T0))" >> $P; tail -5 /tmp/masked.log >> $P
  timeout 110 python3 benchmarks/numba_ab.py $OUT/ab.json --set rank > /tmp/ab.log 2>&1
  echo "ab rc=$? t=$((SECONDS-T0))" >> $P; grep -v -i warn /tmp/ab.log | grep -v '^{' | tail -3 >> $P
  timeout 80 python3 benchmarks/numba_ab.py $OUT/ab_wide.json --set wide > /tmp/abw.log 2>&1
  echo "ab --wide rc=$? t=$((SECONDS-T0))" >> $P; grep -v -i warn /tmp/abw.log | grep -v '^{' | tail -3 >> $P
  for mb in "select 16 k50,k100p0.9,p0.9" "masked 64 k50,k100p0.9"; do
    set -- $mb
    echo "=== numba $1 B=$2 llm fp32" >> $OUT/profile.log
    timeout 30 python3 benchmarks/profile_triton.py --backend numba --mode $1 --B $2 --dist llm \
      --cases $3 2>&1 | grep -v -i warn >> $OUT/profile.log
    echo "profile $1 B=$2 t=$((SECONDS-T0))" >> $P
  done
else
  run_suite backend "" 400 -m gpu tests/test_numba_backend.py &
  run_suite conf32 numba 400 -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
  run_suite conf16 numba 400 -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
  run_suite confrest numba 400 -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
  wait
  summarize_suites backend conf32 conf16 confrest
fi
