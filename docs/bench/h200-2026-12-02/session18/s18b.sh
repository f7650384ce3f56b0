#!/usr/bin/env bash
# session 18, call B: programmatic dependent launch A/B (opt18b.py; two processes fill the Triton cache beside the
# order/PDL bit test at GPU sizes), then the harness at the new order defaults (issue 3's B=1024 table, fp32 and
# bf16, with torch-topk), the masked rows again at the old orders, and B=1 without and with pdl=1
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
D=docs/bench/h200-2026-12-02/session18
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
export PYTHONPATH=.
QRITA_TEST_BACKENDS=triton timeout 200 python3 -m pytest -v -p no:cacheprovider -rfE -m "not gpu" \
  -k "pass_order" tests/test_triton_backend.py > /tmp/suite_order.log 2>&1 &
A=$!
timeout 150 python3 $D/opt18b.py /tmp/w0.json 140 --warm 0/2 > /tmp/w0.log 2>&1 &
W0=$!
timeout 150 python3 $D/opt18b.py /tmp/w1.json 140 --warm 1/2 > /tmp/w1.log 2>&1 &
W1=$!
wait $W0 $W1 $A
echo "warm t=$((SECONDS-T0))" >> $P
{ echo "== order passed=$(grep -c PASSED /tmp/suite_order.log) failed=$(grep -c FAILED /tmp/suite_order.log)"
  grep -E "PASSED|FAILED|Error" /tmp/suite_order.log | head -20 | cut -c1-300; tail -2 /tmp/suite_order.log; } > $OUT/suite.log
tail -2 /tmp/w0.log /tmp/w1.log >> $P
timeout 120 python3 $D/opt18b.py $OUT/opt.json 110 > $OUT/opt.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
B1024="--scenarios topk50,topp0.9,k100p0.9 --dists llm,zipf,gaussian --batches 1024 --vocabs 131072 --no-plots"
mkdir -p $OUT/bench $OUT/old $OUT/b1 $OUT/b1pdl
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 90 python3 -m qrita.bench --full --out $OUT/bench --budget-s 80 \
  --providers qrita-triton,qrita-triton-select,torch-topk --dtypes fp32,bf16 $B1024 > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 60 python3 $D/benchwith.py '{"mask_reverse": false, "tie_reverse": false}' \
  --full --out $OUT/old --budget-s 50 --providers qrita-triton --dtypes fp32,bf16 $B1024 > /tmp/old.log 2>&1
echo "old rc=$? t=$((SECONDS-T0))" >> $P
B1="--providers qrita-triton,qrita-triton-select --scenarios topk50,topp0.9,k100p0.9 --dists llm,zipf,gaussian --dtypes fp32 --batches 1 --vocabs 131072 --no-plots"
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 50 python3 -m qrita.bench --full --out $OUT/b1 --budget-s 40 $B1 > /tmp/b1.log 2>&1
echo "b1 rc=$? t=$((SECONDS-T0))" >> $P
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 60 python3 $D/benchwith.py '{"pdl": 1}' --full --out $OUT/b1pdl --budget-s 50 $B1 \
  > /tmp/b1pdl.log 2>&1
echo "b1pdl rc=$? t=$((SECONDS-T0))" >> $P
for f in bench old b1 b1pdl; do tail -6 /tmp/$f.log; done >> $P
