#!/usr/bin/env bash
# session 19, call B: kernel-source variants of the CuPy backend side by side (var19.py: the new
# rounds against the session-start kernels, one copy of the bins, padded copies), then the CuPy
# GPU suite at the tree with the second cut of top-p rows.
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
SHA=$1
T0=$SECONDS
P=$OUT/probe.log
{ echo "== commit $SHA"; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader; } > $P 2>&1
D=docs/bench/h200-2026-12-03/session19
timeout 250 python3 $D/var19.py $OUT/var.json > $OUT/var.log 2>&1
echo "var rc=$? t=$((SECONDS-T0))" >> $P
for c in "hgauss 1024 - 0.9" "hllm 1024 50 -"; do
  set -- $c
  timeout 60 ncu --clock-control none -k regex:select_kernel --launch-skip 1 -c 1 --section SpeedOfLight \
    --section Occupancy --section LaunchStats --section WarpStateStats --section SchedulerStats \
    --section InstructionStats --section MemoryWorkloadAnalysis python3 $D/ncu19.py $c > $OUT/ncu_$1_$3.txt 2>&1
done
echo "ncu t=$((SECONDS-T0))" >> $P
timeout 150 python3 -m pytest -v -p no:cacheprovider -rfE -m gpu tests/test_cupy_backend.py > /tmp/suite_cupy.log 2>&1
echo "suite rc=$? t=$((SECONDS-T0))" >> $P
{ echo "== cupy passed=$(grep -c PASSED /tmp/suite_cupy.log) skipped=$(grep -c SKIPPED /tmp/suite_cupy.log)" \
    "failed=$(grep -c FAILED /tmp/suite_cupy.log)"
  grep -E "FAILED|ERROR|Error" /tmp/suite_cupy.log | head -30 | cut -c1-300; tail -3 /tmp/suite_cupy.log | cut -c1-300
} > $OUT/suite.log
