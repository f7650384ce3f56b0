#!/usr/bin/env bash
# session 10, call B: the GPU suite in three processes beside exact_scan --set fold; then the fold sweep and
# the small-batch harness
export PYTHONPATH=. PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 QRITA_TEST_BACKENDS=triton
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $1"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $P 2>&1
for f in conformance triton_backend sampling; do
  timeout 390 python3 -m pytest -q -m gpu -p no:cacheprovider -rfE tests/test_$f.py > /tmp/suite_$f.log 2>&1 &
done
timeout 390 python3 benchmarks/exact_scan.py --set fold --out $OUT/scan_fold.json --npz $OUT/scan_rows.npz --budget-s 300 > /tmp/scan.log 2>&1 &
wait
echo "suite+scan t=$((SECONDS-T0))" >> $P
for f in conformance triton_backend sampling; do echo "== $f"; tail -25 /tmp/suite_$f.log; done > $OUT/suite.log
cat /tmp/scan.log >> $P
timeout 80 python3 benchmarks/sweep_triton.py --set fold --out $OUT/sweep_fold.json --budget-s 70 >> $P 2>&1
echo "sweep rc=$? t=$((SECONDS-T0))" >> $P
left=$((565 - (SECONDS - T0)))
mkdir -p $OUT/bench
QRITA_GIT_COMMIT=$1 timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/bench --budget-s $((left-15)) \
  --providers qrita-triton,qrita-triton-select --scenarios topk50,topp0.9,k100p0.9 \
  --dists llm,zipf,gaussian --dtypes fp32,bf16 --batches 1,16 --vocabs 131072 --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
tail -5 /tmp/bench.log >> $P
