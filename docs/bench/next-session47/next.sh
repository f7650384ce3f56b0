#!/usr/bin/env bash
# Session 48's first call (about 9 minutes; carry .whl):  bash docs/bench/next-session47/next.sh <SHA>
# 1. The 7 Numba backend GPU tests that session 47's calls did not reach (main's defaults: scan_prefetch and
#    tie_index on; 39 of 46 passed there, none failed), in three processes side by side, FlashInfer's JIT build
#    beside them: the fused mask against Selection.apply (bf16 not run), the cut_in_mask / tie_index masking bits,
#    CuPy in and out, the masked output's scratch bound.  (The first fused-mask test, float32, passed; it runs again.)
# 2. Issue 6's masking rows with a budget that covers them: Numba / torch.topk / FlashInfer / Triton, top-k 50 in
#    place, LLM-like and Gaussian, fp32 and bf16, B = 64 and 256 (session 47 ran 5 of 32 rows in its 60 s).
# 3. Numba B=64 profiles (LLM-like top-k 50 masked, fp32 and bf16): where the 6.7 % to FlashInfer in fp32 goes; each
#    with main's options, then with tie_index off (what the finish's index cut and the count kernel cost).
set -u
. benchmarks/device_lib.sh
device_start "${1:?commit SHA}" "(session 48 call 1: the Numba tests session 47 did not reach; issue 6 rows)"
flashinfer_warmup flashinfer float32,bfloat16 300
run_suite fused "" 300 -m gpu -k fused_mask_matches tests/test_numba_backend.py &
run_suite cutmask "" 300 -m gpu -k cut_in_mask tests/test_numba_backend.py &
run_suite cupy "" 300 -m gpu -k "cupy or scratch_is_bounded" tests/test_numba_backend.py &
wait
summarize_suites fused cutmask cupy
issue6_rows "$SHA" 110 50 '{}' '{"tie_index": false}'
