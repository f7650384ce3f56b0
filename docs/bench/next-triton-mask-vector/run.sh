#!/usr/bin/env bash
# next/triton-mask-vector on the GPU (torch, triton, pytest; no nox, no network), from the repository root; give
# the SHA from this machine (the device's copy of the tree has no branch):
#   bash docs/bench/next-triton-mask-vector/run.sh <SHA>      (about 9 min)
# vector/, main/, vector_b/ (results.{json,md}) first, on a quiet GPU: the harness's Triton masking rows (in
# place; top-k 50 and top-p 0.9; LLM-like, Gaussian, Zipf; fp32 and bf16; B = 1024 and 64) with the branch's
# kernels, with main's (main_kernels.patch applied to this disposable copy of the tree), and with the branch's
# again (the drift between runs); every row gated against the oracle.  Then probe.log, suite.log: the Triton
# conformance suite at real shapes (three -k processes) and the backend's GPU tests, side by side.
. benchmarks/device_lib.sh
device_start "$1" "(next/triton-mask-vector)"
ROWS="--providers qrita-triton --scenarios topk50,topp0.9 --dists llm,gaussian,zipf --dtypes fp32,bf16
  --batches 1024,64"
run_bench vector "$SHA" 70 $ROWS
git apply docs/bench/next-triton-mask-vector/main_kernels.patch && echo "main kernels applied" >> "$P"
run_bench main "$SHA+main-kernels" 70 $ROWS
git apply -R docs/bench/next-triton-mask-vector/main_kernels.patch && echo "branch kernels again" >> "$P"
run_bench vector_b "$SHA" 70 $ROWS
left=$((570 - (SECONDS - T0)))
[ $left -lt 60 ] && left=60
run_suite tconf32 triton $left -m gpu -k "test_gpu_shapes and float32" tests/test_conformance.py &
run_suite tconf16 triton $left -m gpu -k "test_gpu_shapes and not float32" tests/test_conformance.py &
run_suite tconfrest triton $left -m gpu -k "not test_gpu_shapes" tests/test_conformance.py &
run_suite tback "" $left -m gpu tests/test_triton_backend.py &
run_suite tsampling triton $left -m gpu tests/test_sampling.py &
wait
summarize_suites tconf32 tconf16 tconfrest tback tsampling
