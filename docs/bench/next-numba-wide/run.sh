#!/usr/bin/env bash
# next/numba-wide-miss on an H200 (torch, numba-cuda, pytest; no nox, no network), from the repository root:
#   bash docs/bench/next-numba-wide/run.sh <SHA>
# At most 7 files under $OUT: probe.log, ab.json, ab.log, profile.log, gpu_tests.log, suite.log, compile.log.
# About 9 minutes.  On a quiet GPU first: the A/B (ab.py: main's kernels, the finish at one block an SM, the
# wide miss rounds; same bits and CUDA-graph medians), the per-kernel profile of the branch at B=16 and 1024;
# then the backend's GPU tests (the wide rounds' bit test with real atomics among them) beside the Numba
# conformance suite at real shapes (QRITA_TEST_BACKENDS=numba -m gpu, three -k processes).
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=${1:?commit SHA}
T0=$SECONDS
D=docs/bench/next-numba-wide
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import torch, numba, numba_cuda; print('torch', torch.__version__, 'numba', numba.__version__, 'numba-cuda', numba_cuda.__version__)"
} > $P 2>&1
timeout 60 python3 -m qrita.backends.numba.compile_check --ptxas > $OUT/compile.log 2>&1
echo "compile rc=$? t=$((SECONDS-T0))" >> $P
timeout 240 python3 $D/ab.py $OUT/ab.json > $OUT/ab.log 2>&1
echo "ab rc=$? t=$((SECONDS-T0))" >> $P
for B in 16 1024; do
  echo "=== numba select B=$B llm fp32 (branch defaults)" >> $OUT/profile.log
  timeout 60 python3 benchmarks/profile_triton.py --backend numba --mode select --B $B --dist llm \
    --cases k50,p0.9 >> $OUT/profile.log 2>&1
  echo "profile B=$B rc=$? t=$((SECONDS-T0))" >> $P
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
cp /tmp/suite_backend.log $OUT/gpu_tests.log
