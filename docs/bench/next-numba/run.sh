#!/usr/bin/env bash
# next GPU session, Numba (issue 6): the branch next/numba-speed on an H200. Run from the repository root:
#   bash docs/bench/next-numba/run.sh <commit SHA>      ($OUT: the folder whose files come back; 8 files at most)
# 1. the Numba GPU suite (exactness of the changed kernels: split vs unsplit bits, adversarial rows, fused
#    masking, the >2**31-entry view), 2. the harness, Numba `select` beside Triton's, fp32, B=1024 and 16.
# Files: $OUT/probe.log, $OUT/suite.log, $OUT/numba/ (the harness's own files, two).
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=${1:?usage: run.sh <commit SHA>}
OUT=${OUT:?set OUT}
T0=$SECONDS
P=$OUT/probe.log
{
  echo "== commit $SHA (tree HEAD: $(git rev-parse --short HEAD 2>/dev/null || echo none))"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import numba, numba_cuda, torch; print('numba', numba.__version__, 'numba-cuda', numba_cuda.__version__, 'torch', torch.__version__)"
} > "$P" 2>&1
# session 15 ran this suite in 137 s (32 passed); the first call compiles the kernels (tens of seconds a variant)
timeout -s ABRT 230 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_numba_backend.py > /tmp/numba_suite.log 2>&1
echo "suite rc=$? t=$((SECONDS - T0))" >> "$P"
{
  echo "== passed=$(grep -c PASSED /tmp/numba_suite.log) skipped=$(grep -c SKIPPED /tmp/numba_suite.log)" \
    "failed=$(grep -c FAILED /tmp/numba_suite.log) errors=$(grep -c ERROR /tmp/numba_suite.log)"
  grep -E "PASSED|FAILED|ERROR|Error" /tmp/numba_suite.log | head -60 | cut -c1-250
  tail -3 /tmp/numba_suite.log | cut -c1-250
} > "$OUT/suite.log"
# the harness: whatever time is left (the call's limit is 600 s; keep 20 s for the copy back)
left=$((570 - (SECONDS - T0)))
[ $left -gt 300 ] && left=300
mkdir -p "$OUT/numba"
QRITA_GIT_COMMIT=$SHA timeout -s ABRT $left python3 -m qrita.bench --full --out "$OUT/numba" --budget-s $((left - 20)) \
  --providers qrita-triton-select,qrita-numba-select --scenarios topk50,k100p0.9,topp0.9 \
  --dists llm,gaussian,zipf --dtypes fp32 --batches 1024,16 --vocabs 131072 --no-plots > /tmp/numba_bench.log 2>&1
echo "bench rc=$? t=$((SECONDS - T0))" >> "$P"
tail -12 /tmp/numba_bench.log | cut -c1-250 >> "$P"
ls -la "$OUT" "$OUT/numba" >> "$P" 2>&1
