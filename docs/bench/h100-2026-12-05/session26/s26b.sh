#!/usr/bin/env bash
# session 26 call B: main's Triton kernels (chain_rounds on for one row since session 25) on the GPU that came.
# On a quiet GPU first the harness's B=1 rows of issue 3 (select and masked in place, fp32 and bf16, V=131072;
# a budget for cold compiles), then side by side the Triton GPU suites: conformance at real shapes (three -k
# processes), the backend's and the sampler's GPU tests, and the small-shape conformance tests from
# test_in_place_on_non_contiguous_views on (the ones session 25's call did not reach).
#   bash docs/bench/session26/s26b.sh <SHA>      (probe.log, suite.log, b1/ under $OUT)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=${1:?commit SHA}
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > $P 2>&1
mkdir -p $OUT/b1
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 200 python3 -m qrita.bench --full --out $OUT/b1 --budget-s 185 \
  --providers qrita-triton-select,qrita-triton --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf \
  --dtypes fp32,bf16 --batches 1 --vocabs 131072 --no-plots > /tmp/b1.log 2>&1
echo "b1 rc=$? t=$((SECONDS-T0))" >> $P
left=$((520 - (SECONDS - T0)))
[ $left -lt 60 ] && left=60
run() { name=$1; shift; QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -p no:cacheprovider -rfE "$@" \
  > /tmp/suite_$name.log 2>&1; echo "$name rc=$? t=$((SECONDS-T0))" >> $P; }
TAIL="in_place_on_non_contiguous or forced_truncation or truncation_hits or natural_truncation or k_near_V_and_p"
TAIL="$TAIL or deterministic or batch_invariant or apply_in_place or masking_entry or selection_methods or test_repr"
TAIL="$TAIL or check_true"
run backend -m gpu tests/test_triton_backend.py &
run conf32 -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
run conf16 -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
run confrest -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
run sampling -m gpu tests/test_sampling.py &
run smalltail -m "not gpu" -k "$TAIL" tests/test_conformance.py &
wait
echo "suite t=$((SECONDS-T0))" >> $P
for f in backend conf32 conf16 confrest sampling smalltail; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -2 /tmp/suite_$f.log | cut -c1-300
done > $OUT/suite.log
grep -E "PASSED|FAILED|ERROR" /tmp/suite_backend.log | cut -c1-200 >> $OUT/suite.log
tail -6 /tmp/b1.log >> $P
