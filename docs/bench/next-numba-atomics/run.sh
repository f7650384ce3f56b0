#!/usr/bin/env bash
# next/numba-atomics on the GPU (torch, numba-cuda, pytest; no nox, no network), from the repository root:
#   bash docs/bench/next-numba-atomics/run.sh <SHA>
# 8 files under $OUT: probe.log (with the compile check), ab.json, profile.log, suite.log, numba/results.{json,md},
# masked/results.{json,md}.  About 9 minutes.  On a quiet GPU first: the harness's issue-6 rows (Numba select
# beside Triton select, fp32, B=1024 and 16; Numba's masking beside torch.topk masking at B=64 and 1024), the
# A/B (ab.py: base, agg, branch, each in its own process, same bits), the per-kernel profile at B=16 and 1024;
# then side by side the backend's GPU tests (the warp paths run only on a GPU: the simulator has no warp
# intrinsics) and the Numba conformance suite at real shapes.
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=${1:?commit SHA}
T0=$SECONDS
D=docs/bench/next-numba-atomics
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import torch, triton, numba, numba_cuda; print('torch', torch.__version__, 'triton', triton.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__)"
} > $P 2>&1
timeout 60 python3 -m qrita.backends.numba.compile_check --ptxas > /tmp/compile.log 2>&1
echo "compile rc=$? t=$((SECONDS-T0))" >> $P
grep -E "^ok|FAILED" /tmp/compile.log >> $P
mkdir -p $OUT/numba
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 130 python3 -m qrita.bench --full --out $OUT/numba --budget-s 110 \
  --providers qrita-triton-select,qrita-numba-select --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf \
  --dtypes fp32 --batches 1024,16 --vocabs 131072 --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
tail -5 /tmp/bench.log >> $P
mkdir -p $OUT/masked
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 80 python3 -m qrita.bench --full --out $OUT/masked --budget-s 60 \
  --providers qrita-numba,torch-topk --scenarios topk50 --dists llm,gaussian,zipf \
  --dtypes fp32 --batches 1024,64 --vocabs 131072 --no-plots > /tmp/masked.log 2>&1
echo "masked rc=$? t=$((SECONDS-T0))" >> $P
tail -4 /tmp/masked.log >> $P
for v in base agg branch; do
  timeout 100 python3 $D/ab.py $OUT/ab.json $v > /tmp/ab_$v.log 2>&1
  echo "ab $v rc=$? t=$((SECONDS-T0))" >> $P
done
for B in 16 1024; do
  echo "=== numba select B=$B llm fp32 (branch defaults)" >> $OUT/profile.log
  timeout 40 python3 benchmarks/profile_triton.py --backend numba --mode select --B $B --dist llm \
    --cases k50,p0.9 2>&1 | grep -v -i warn >> $OUT/profile.log
  echo "profile B=$B t=$((SECONDS-T0))" >> $P
done
left=$((560 - (SECONDS - T0)))
[ $left -lt 60 ] && left=60
run() { name=$1; backends=$2; shift 2; QRITA_TEST_BACKENDS=$backends timeout $left python3 -m pytest -v -p no:cacheprovider -rfE "$@" > /tmp/suite_$name.log 2>&1
  echo "$name rc=$? t=$((SECONDS-T0))" >> $P; }
run backend "" -m gpu tests/test_numba_backend.py &
run conf32 numba -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
run conf16 numba -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
run confrest numba -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
wait
for f in backend conf32 conf16 confrest; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -2 /tmp/suite_$f.log | cut -c1-300
done > $OUT/suite.log
grep -v -i warn /tmp/suite_backend.log | grep -E "PASSED|FAILED|ERROR|SKIPPED" | cut -c1-200 >> $OUT/suite.log
for v in base agg branch; do grep -v -i warn /tmp/ab_$v.log | grep -v '^{' | tail -3; done >> $P
