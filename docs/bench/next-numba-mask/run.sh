#!/usr/bin/env bash
# next/numba-mask on the GPU (torch, numba-cuda, pytest; no nox, no network), from the repository root:
#   bash docs/bench/next-numba-mask/run.sh <SHA>
# 6 files under $OUT: probe.log (with the compile check), masked/results.{json,md}, profile.log, suite.log.
# About 8 minutes.  On a quiet GPU first: the harness's masking rows of issue 6 (Numba top_k_top_p in place
# beside torch.topk masking and the Triton backend, top-k 50 and k100+p0.9, fp32 and bf16, B=64 and 1024),
# the per-kernel profile of the masked path; then side by side the backend's GPU tests (the fused masking's
# test at real shapes among them) and the Numba conformance suite at real shapes.
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=${1:?commit SHA}
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import torch, triton, numba, numba_cuda; print('torch', torch.__version__, 'triton', triton.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__)"
} > $P 2>&1
timeout 60 python3 -m qrita.backends.numba.compile_check --ptxas > /tmp/compile.log 2>&1
echo "compile rc=$? t=$((SECONDS-T0))" >> $P
grep -E "^ok|FAILED" /tmp/compile.log >> $P
mkdir -p $OUT/masked
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 170 python3 -m qrita.bench --full --out $OUT/masked --budget-s 150 \
  --providers qrita-numba,torch-topk,qrita-triton --scenarios topk50,k100p0.9 --dists llm,gaussian,zipf \
  --dtypes fp32,bf16 --batches 1024,64 --vocabs 131072 --no-plots > /tmp/masked.log 2>&1
echo "masked rc=$? t=$((SECONDS-T0))" >> $P
tail -5 /tmp/masked.log >> $P
for B in 64 1024; do
  echo "=== numba masked B=$B llm fp32" >> $OUT/profile.log
  timeout 40 python3 benchmarks/profile_triton.py --backend numba --mode masked --B $B --dist llm \
    --cases k50,k100p0.9 2>&1 | grep -v -i warn >> $OUT/profile.log
  echo "profile B=$B t=$((SECONDS-T0))" >> $P
done
left=$((540 - (SECONDS - T0)))
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
