#!/usr/bin/env bash
# next/numba-scan32 on the GPU (torch, numba-cuda, pytest; no nox, no network), from the repository root; give
# the SHA from this machine (the device's copy of the tree has no branch):
#   bash docs/bench/next-numba-scan32/run.sh <SHA>      (about 8 min)
# probe.log, suite.log: the Numba backend's GPU tests and its conformance suite at real shapes with the 32-bit
# scan and keys; scan32/ then main/ (results.{json,md}): the harness's Numba rows (select and masked in place;
# top-k 50 and top-p 0.9; LLM-like and Gaussian; fp32 and bf16; B = 1024 and 64), first with the branch's
# kernels, then with main's (main_kernels.patch applied to this disposable copy of the tree: the same launcher,
# main's kernels.py), then the branch's again (scan32b/) to show the drift between runs.  No answer may differ:
# the harness gates every row against the oracle.
. benchmarks/device_lib.sh
device_start "$1" "(next/numba-scan32)"
numba_gpu_suites 260
ROWS="--providers qrita-numba-select,qrita-numba --scenarios topk50,topp0.9 --dists llm,gaussian --dtypes fp32,bf16
  --batches 1024,64"
run_bench scan32 "$SHA" 90 $ROWS
git apply docs/bench/next-numba-scan32/main_kernels.patch && echo "main kernels applied" >> "$P"
run_bench main "$SHA+main-kernels" 90 $ROWS
git apply -R docs/bench/next-numba-scan32/main_kernels.patch && echo "branch kernels again" >> "$P"
run_bench scan32b "$SHA" 90 $ROWS
