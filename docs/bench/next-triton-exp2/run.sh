#!/usr/bin/env bash
# next/triton-exp2 on the GPU (torch, triton, pytest; no nox, no network), from the repository root; give the SHA
# from this machine (the device's copy of the tree has no branch):
#   bash docs/bench/next-triton-exp2/run.sh <SHA>      (about 9 min)
# exp2/, main/, exp2_b/ (results.{json,md}) first, on a quiet GPU: the harness's Triton rows (select and masked in
# place; top-p 0.9, k100+p0.9 and top-k 50 as the control; LLM-like, Gaussian, Zipf; fp32 and bf16; B=1024) with
# the branch's kernels (one exp an entry in the span pass's online softmax, ex2.approx.ftz everywhere), with main's
# (main_kernels.patch applied to this disposable copy of the tree), and with the branch's again (the drift between
# runs); every row gated against the oracle.  Then probe.log, suite.log: the Triton GPU suites.
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(next/triton-exp2)"
ROWS="--providers qrita-triton,qrita-triton-select --scenarios topp0.9,k100p0.9,topk50 --dists llm,gaussian,zipf
  --dtypes fp32,bf16 --batches 1024"
run_bench exp2 "$SHA" 60 $ROWS
git apply docs/bench/next-triton-exp2/main_kernels.patch && echo "main kernels applied" >> "$P"
run_bench main "$SHA+main-kernels" 60 $ROWS
git apply -R docs/bench/next-triton-exp2/main_kernels.patch && echo "branch kernels again" >> "$P"
run_bench exp2_b "$SHA" 60 $ROWS
left=$((560 - (SECONDS - T0)))
[ $left -lt 60 ] && left=60
triton_gpu_suites $left "lanes or miss or rounds"
