#!/usr/bin/env bash
# session 24, call B: the Numba backend.  On a quiet GPU first the per-kernel profile (torch.profiler) of Numba
# select at B=16 and B=1024 (issue 6: where the time goes), then the Numba conformance suite at real shapes
# (QRITA_TEST_BACKENDS=numba -m gpu, three -k processes), the first run of it on the tiled kernels.
#   bash docs/bench/h200-2026-12-05/session24/s24b.sh <SHA>      (probe.log, profile.log, suite.log under $OUT)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=${1:?commit SHA}
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 -c "import numba, numba_cuda; print('numba', numba.__version__, 'numba-cuda', numba_cuda.__version__)"; } > $P 2>&1
for B in 16 1024; do
  echo "=== numba select B=$B llm fp32" >> $OUT/profile.log
  timeout 100 python3 benchmarks/profile_triton.py --backend numba --mode select --B $B --dist llm \
    --cases k50,p0.9 >> $OUT/profile.log 2>&1
  echo "profile B=$B rc=$? t=$((SECONDS-T0))" >> $P
done
echo "=== triton select B=16 llm fp32 (beside)" >> $OUT/profile.log
timeout 60 python3 benchmarks/profile_triton.py --backend triton --mode select --B 16 --dist llm --cases k50,p0.9 \
  >> $OUT/profile.log 2>&1
echo "profile triton rc=$? t=$((SECONDS-T0))" >> $P
run() { name=$1; shift; QRITA_TEST_BACKENDS=numba timeout $((560 - (SECONDS - T0))) python3 -m pytest -v \
  -p no:cacheprovider -rfE "$@" > /tmp/suite_$name.log 2>&1; echo "$name rc=$? t=$((SECONDS-T0))" >> $P; }
run conf32 -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
run conf16 -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
run confrest -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
wait
for f in conf32 conf16 confrest; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -2 /tmp/suite_$f.log | cut -c1-300
  grep -E "PASSED|FAILED" /tmp/suite_$f.log | tail -3 | cut -c1-200
done > $OUT/suite.log
