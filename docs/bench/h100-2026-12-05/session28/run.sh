#!/usr/bin/env bash
# Session 28's last device call (the branch with packed rank_select and two cuts only on the one-block path), from
# the repository root on the GPU (torch, numba-cuda, pytest; no nox, no network), about 5 min:
#   bash docs/bench/h100-2026-12-05/session28/run.sh <SHA>
# probe.log; suite.log: the Numba backend's GPU tests and its conformance suite at real shapes, side by side;
# ab_rank_live.json: rank_select off, then on once at most 512 / 256 / 128 keys are live (top-k 50, 100 and
# k+p, B = 16 and 1024, LLM-like and Gaussian, same bits); select/: the harness's B=16 k100+p0.9 and top-p rows,
# Numba beside Triton (issue 6's rows that missed 2x in call 1)
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1 PYTHONPATH=.
. benchmarks/device_lib.sh
SHA=${1:?commit SHA}
T0=$SECONDS
P=$OUT/probe.log
device_probe "$SHA" "(session 28, last call)"
numba_gpu_suites 230
timeout 110 python3 benchmarks/numba_ab.py "$OUT/ab_rank_live.json" --set rank_live > /tmp/ab.log 2>&1
echo "ab rank_live rc=$? t=$((SECONDS - T0))" >> "$P"
run_bench select "$SHA" 70 --providers qrita-triton-select,qrita-numba-select --scenarios k100p0.9,topp0.9,topk50 \
  --dists llm,gaussian --dtypes fp32 --batches 16
