#!/usr/bin/env bash
# session 16, call C (the session's last device time): the final tree. The sampling GPU suite and the sampler's
# draw tests side by side; then on a quiet GPU the row_rounds A/B of k100+p0.9 above 64 rows (opt16c.py, sweep
# --set kp_rows), the harness for issue 3 (masked, select, torch-topk, B=1024, fp32 and bf16) and for issues 5/6
# (select of Triton, CuPy and Numba; masked Triton and CuPy; B=1024 and 16)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
run() { name=$1; shift; QRITA_TEST_BACKENDS=triton timeout 110 python3 -m pytest -v -p no:cacheprovider -rfE "$@" > /tmp/suite_$name.log 2>&1; }
run sampling -m gpu tests/test_sampling.py &
run draws -m "not gpu" -k "sample_draws and default or row_rounds" tests/test_triton_backend.py &
wait
echo "suite t=$((SECONDS-T0))" >> $P
for f in sampling draws; do
  echo "== $f passed=$(grep -c PASSED /tmp/suite_$f.log) skipped=$(grep -c SKIPPED /tmp/suite_$f.log) failed=$(grep -c FAILED /tmp/suite_$f.log)"
  grep -E "PASSED|FAILED|ERROR|Error" /tmp/suite_$f.log | head -30 | cut -c1-250; tail -2 /tmp/suite_$f.log | cut -c1-250
done > $OUT/suite.log
timeout 60 python3 docs/bench/h200-2026-12-02/session16/opt16c.py $OUT/opt.json 50 > $OUT/ab.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
timeout 80 python3 benchmarks/sweep_triton.py --set kp_rows --budget-s 70 --out $OUT/kp.json > /tmp/kp.log 2>&1
echo "kp rc=$? t=$((SECONDS-T0))" >> $P
mkdir -p $OUT/bench $OUT/backends
QRITA_GIT_COMMIT=$SHA timeout -s ABRT 70 python3 -m qrita.bench --full --out $OUT/bench --budget-s 55 \
  --providers qrita-triton,qrita-triton-select,torch-topk --scenarios topk50,topp0.9,k100p0.9 \
  --dists llm,zipf,gaussian --dtypes fp32,bf16 --batches 1024 --vocabs 131072 --no-plots > /tmp/bench.log 2>&1
echo "bench rc=$? t=$((SECONDS-T0))" >> $P
left=$((415 - (SECONDS - T0)))
QRITA_GIT_COMMIT=$SHA timeout -s ABRT $left python3 -m qrita.bench --full --out $OUT/backends --budget-s $((left-12)) \
  --providers qrita-triton-select,qrita-cupy-select,qrita-numba-select,qrita-triton,qrita-cupy \
  --scenarios topk50,k100p0.9,topp0.9 --dists llm,gaussian,zipf --dtypes fp32 --batches 1024,16 --vocabs 131072 \
  --no-plots > /tmp/backends.log 2>&1
echo "backends rc=$? t=$((SECONDS-T0))" >> $P
tail -8 /tmp/backends.log >> $P
