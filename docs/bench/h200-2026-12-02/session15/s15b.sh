#!/usr/bin/env bash
# session 15, call B: on a quiet GPU, option A/B for the sampler's k100+p0.9 gap at B=64 and the B=1 select
# (opt15.py: num_pivots, span_warps, span_block, cut_pass), per-kernel profiles of the sampler at B=64,
# V=151936, rows that miss under row_rounds (sweep set rows_miss), and the harness's B=1 rows (issue 3) that
# call A's budget skipped; then the rest of the GPU suites side by side: triton_backend's no-sync / graph /
# determinism / batch-invariance tests, the Numba GPU suite (its fused masking of cupy arrays among them) and
# exact_scan.py
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
timeout 150 python3 docs/bench/h200-2026-12-02/session15/opt15.py $OUT/opt.json 130 > $OUT/ab.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
{ for m in sample select; do
    timeout 40 python3 benchmarks/profile_triton.py --mode $m --B 64 --V 151936 --dist llm --cases k50,k100p0.9
  done
  timeout 30 python3 benchmarks/profile_triton.py --mode select --B 64 --V 151936 --dist llm --cases k100p0.9 \
    --options '{"num_pivots": 15}' --options '{"span_warps": 4}'
} > $OUT/profile.txt 2>&1
echo "profile rc=$? t=$((SECONDS-T0))" >> $P
timeout 75 python3 benchmarks/sweep_triton.py --set rows_miss --budget-s 60 --out $OUT/rows_miss.json >> $OUT/ab.log 2>&1
echo "rows_miss rc=$? t=$((SECONDS-T0))" >> $P
mkdir -p $OUT/bench
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 75 python3 -m qrita.bench --full --out $OUT/bench --budget-s 60 \
  --providers qrita-triton,qrita-triton-select,torch-topk --scenarios topk50,topp0.9,k100p0.9 \
  --dists llm,zipf,gaussian --dtypes fp32,bf16 --batches 1 --vocabs 131072 --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
tail -3 /tmp/bench.log >> $P
left=$((540 - (SECONDS - T0)))
QRITA_TEST_BACKENDS=triton timeout $left python3 -m pytest -v -m gpu -p no:cacheprovider -rfE -k "not real_shapes" \
  tests/test_triton_backend.py > /tmp/suite_backend.log 2>&1 &
timeout $left python3 -m pytest -v -m gpu -p no:cacheprovider -rfE \
  tests/test_numba_backend.py > /tmp/suite_numba.log 2>&1 &
timeout $left python3 benchmarks/exact_scan.py --out /tmp/scan.json --npz /tmp/scan.npz --budget-s $((left-60)) > /tmp/suite_scan.log 2>&1 &
wait
echo "suite t=$((SECONDS-T0))" >> $P
for f in backend numba; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_$f.log | head -20 | cut -c1-300; tail -3 /tmp/suite_$f.log | cut -c1-300
  grep -E "PASSED|SKIPPED|FAILED" /tmp/suite_$f.log | cut -c1-200
done > $OUT/suite.log
{ echo "== exact_scan"; cut -c1-400 /tmp/suite_scan.log; } >> $OUT/suite.log
