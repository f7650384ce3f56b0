#!/usr/bin/env bash
# session 11, call C: the GPU suite (three processes) beside exact_scan, then the harness (masked, select,
# torch-topk; B=1024 then 1; fp32 and bf16) in the time left
export PYTHONPATH=. PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $1"; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } > $P 2>&1
for f in conformance triton_backend sampling; do
  QRITA_TEST_BACKENDS=triton timeout 345 python3 -m pytest -q -m gpu -p no:cacheprovider -rfE tests/test_$f.py > /tmp/suite_$f.log 2>&1 &
done
QRITA_TEST_BACKENDS=triton timeout 330 python3 benchmarks/exact_scan.py --out $OUT/scan.json --npz $OUT/scan_rows.npz --budget-s 280 > /tmp/scan.log 2>&1 &
wait
echo "suite+scan t=$((SECONDS-T0))" >> $P
for f in conformance triton_backend sampling; do echo "== $f"; tail -25 /tmp/suite_$f.log; done > $OUT/suite.log
cat /tmp/scan.log >> $P
left=$((575 - (SECONDS - T0)))
mkdir -p $OUT/bench
QRITA_GIT_COMMIT=$1 timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/bench --budget-s $((left-20)) \
  --providers qrita-triton,qrita-triton-select,torch-topk --scenarios topk50,topp0.9,k100p0.9 \
  --dists llm,zipf,gaussian --dtypes fp32,bf16 --batches 1024,1 --vocabs 131072 --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
tail -3 /tmp/bench.log >> $P
