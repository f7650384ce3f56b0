#!/usr/bin/env bash
# session 11, call B: option A/B (select, sample) and sampler profiles on a quiet GPU, then the GPU suite
# (three processes) beside exact_scan's default cases
export PYTHONPATH=. PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
T0=$SECONDS
P=$OUT/probe.log
echo "== commit $1" > $P
timeout 150 python3 .scratch/opt.py $OUT/opt.json 125 > $OUT/opt.log 2>&1
echo "opt rc=$? t=$((SECONDS-T0))" >> $P
for V in 128256 151936; do
  timeout 25 python3 benchmarks/profile_triton.py --mode sample --B 64 --V $V --dist llm --cases k50,k100p0.9 >> $P 2>&1
done
echo "profile t=$((SECONDS-T0))" >> $P
export QRITA_TEST_BACKENDS=triton
left=$((560 - (SECONDS - T0)))
for f in conformance triton_backend sampling; do
  timeout $left python3 -m pytest -q -m gpu -p no:cacheprovider -rfE tests/test_$f.py > /tmp/suite_$f.log 2>&1 &
done
timeout $left python3 benchmarks/exact_scan.py --out $OUT/scan.json --npz $OUT/scan_rows.npz --budget-s $((left-30)) > /tmp/scan.log 2>&1 &
wait
echo "suite+scan t=$((SECONDS-T0))" >> $P
for f in conformance triton_backend sampling; do echo "== $f"; tail -25 /tmp/suite_$f.log; done > $OUT/suite.log
cat /tmp/scan.log >> $P
