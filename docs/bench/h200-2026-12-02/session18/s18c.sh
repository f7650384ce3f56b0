#!/usr/bin/env bash
# session 18, call C: the final defaults (mask / tie orders, pdl=2).  The harness first on a quiet GPU (issue 3's
# B=1024 table, fp32 and bf16, with torch-topk and the sampler; B=1), then the Triton GPU suites: conformance in
# three processes, triton_backend's GPU tests, sampling's
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
export PYTHONPATH=.
mkdir -p $OUT/bench $OUT/b1
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 100 python3 -m qrita.bench --full --out $OUT/bench --budget-s 90 \
  --providers qrita-triton,qrita-triton-select,torch-topk --dtypes fp32,bf16 \
  --scenarios topk50,topp0.9,k100p0.9 --dists llm,zipf,gaussian --batches 1024 --vocabs 131072 --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 60 python3 -m qrita.bench --full --out $OUT/b1 --budget-s 50 \
  --providers qrita-triton,qrita-triton-select,qrita-triton-sample --scenarios topk50,topp0.9,k100p0.9 \
  --dists llm,zipf,gaussian --dtypes fp32 --batches 1,64 --vocabs 131072 --no-plots > /tmp/b1.log 2>&1
echo "b1 rc=$? t=$((SECONDS-T0))" >> $P
run() { name=$1; shift; QRITA_TEST_BACKENDS=triton timeout 390 python3 -m pytest -v -p no:cacheprovider -rfE "$@" > /tmp/suite_$name.log 2>&1; }
run conf32 -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
C1=$!
run conf16 -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
C2=$!
run confrest -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
C3=$!
run backend -m gpu tests/test_triton_backend.py &
C4=$!
run sampling -m gpu tests/test_sampling.py &
C5=$!
wait $C1 $C2 $C3 $C4 $C5
echo "suite t=$((SECONDS-T0))" >> $P
for f in conf32 conf16 confrest backend sampling; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -2 /tmp/suite_$f.log | cut -c1-300
done > $OUT/suite.log
for f in bench b1; do tail -7 /tmp/$f.log; done >> $P
