#!/usr/bin/env bash
# session 10, call A: confirm the ninth session's finish fix on the H200
export PYTHONPATH=. PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 QRITA_TEST_BACKENDS=triton
T0=$SECONDS
{ echo "== commit $1"; nvidia-smi --query-gpu=name,driver_version --format=csv; python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"; } > $OUT/env.log 2>&1
timeout 60 python3 benchmarks/finish_replay.py replay docs/bench/h200-2026-12-01/session9/finish_inputs.npz > $OUT/replay.log 2>&1
echo "replay rc=$? t=$((SECONDS-T0))" >> $OUT/env.log
timeout 345 python3 -m pytest -q -m gpu -p no:cacheprovider tests/test_conformance.py tests/test_triton_backend.py tests/test_sampling.py > $OUT/suite.log 2>&1
echo "suite rc=$? t=$((SECONDS-T0))" >> $OUT/env.log
left=$((560 - (SECONDS - T0)))
timeout $left python3 benchmarks/exact_scan.py --out $OUT/scan.json --npz $OUT/scan_rows.npz --budget-s $((left-40)) > $OUT/scan.log 2>&1
echo "scan rc=$? t=$((SECONDS-T0))" >> $OUT/env.log
