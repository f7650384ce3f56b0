#!/usr/bin/env bash
# The full benchmark on one H200, in one 10-minute device call; everything lands in $OUT.
#
#   From the repository root on the GPU machine (.git does not travel, so pass the commit in):
#     QRITA_GIT_COMMIT=<sha> bash benchmarks/run_h200.sh [extra `qrita bench` options]
#
#   FlashInfer: wheels in .whl/ (flashinfer-python + apache-tvm-ffi, downloaded beforehand) are
#   installed into /tmp/site; its ~2 min JIT build starts at once in a child process and its
#   rows are measured when it is done.  BUDGET_S (default 470) caps the measuring; what is left
#   is recorded as skipped.  Outputs (5 files): results.json, results.md, latency.png,
#   roofline.png, bench.log.
set -uo pipefail
OUT=${OUT:-bench_results}
BUDGET_S=${BUDGET_S:-470}
mkdir -p "$OUT"
LOG="$OUT/bench.log"
export PYTHONUNBUFFERED=1
{
  echo "== $(date -u +%FT%TZ) qrita bench, commit ${QRITA_GIT_COMMIT:-unknown}"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,temperature.gpu --format=csv 2>&1 || true
} >"$LOG"
if compgen -G ".whl/*.whl" >/dev/null; then
  t0=$SECONDS
  if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >>"$LOG" 2>&1; then
    export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
    echo "installed $(ls .whl | tr '\n' ' ')in $((SECONDS - t0)) s" >>"$LOG"
  else
    echo "pip install of .whl/ failed; FlashInfer will be reported unavailable" >>"$LOG"
  fi
else
  echo "no .whl/ wheels: FlashInfer will be reported unavailable unless it is installed" >>"$LOG"
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
python3 -m qrita.bench --full --out "$OUT" --budget-s "$BUDGET_S" "$@" 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}
echo "== exit $rc after ${SECONDS} s" | tee -a "$LOG"
exit "$rc"
