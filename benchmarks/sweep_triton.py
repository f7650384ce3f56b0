"""Launch-geometry sweep of the Triton backend's full-row kernels (span pass, miss rounds).

    PYTHONPATH=. python3 benchmarks/sweep_triton.py --out $OUT/sweep.json

Times ``qrita.select`` (CUDA-graph medians) at B=1024, V=131072, fp32 Zipf logits for each
option set, after checking the answer is identical to the default's.  A developer probe:
the chosen defaults go into ``qrita/backends/triton/launch.py``.
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from gpu_check import graph_time, make_logits  # same folder: run as a script

import qrita

SPAN_CONFIGS = [dict(span_block=b, span_warps=w) for b, w in
                ((1024, 4), (2048, 4), (2048, 8), (4096, 8), (4096, 16), (8192, 16), (1024, 8))]
SPAN_CONFIGS += [dict(span=s, span_block=2048, span_warps=8) for s in (8192, 32768)]
SPAN_CONFIGS += [dict(span_block=b, span_warps=w, span_prefetch=True) for b, w in ((1024, 8), (2048, 8), (1024, 4))]
ROUND_CONFIGS = [dict(round_block=b, round_warps=w, miss_pivots=p) for b, w, p in
                 ((512, 8, 15), (256, 4, 15), (1024, 8, 15), (256, 8, 15), (512, 4, 15), (512, 8, 7),
                  (512, 8, 3), (1024, 8, 3))]
ROUND_CONFIGS += [dict(round_block=b, round_warps=8, round_prefetch=True) for b in (256, 512)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="sweep.json")
    ap.add_argument("--budget-s", type=float, default=200)
    args = ap.parse_args()
    x = make_logits("zipf", 1024, 131072, torch.float32)
    rows = []
    t0 = time.time()
    for request, configs in (((50, None), SPAN_CONFIGS), ((None, 0.9), SPAN_CONFIGS[:3]),
                             ((None, 0.9), ROUND_CONFIGS), ((100, 0.9), SPAN_CONFIGS[:4])):
        k, p = request
        base = qrita.select(x, k, p, backend="triton")
        for opts in configs:
            if time.time() - t0 > args.budget_s:
                break
            try:
                sel = qrita.select(x, k, p, backend="triton", options=opts)
                same = bool(torch.equal(sel.count, base.count) and torch.equal(sel.num_ties, base.num_ties))
                us = graph_time(lambda o=opts: qrita.select(x, k, p, backend="triton", options=o))
                row = dict(k=k, p=p, options=opts, us=round(us, 1), same=same)
            except Exception as exc:  # noqa: BLE001 - a probe: report and go on
                row = dict(k=k, p=p, options=opts, error=f"{type(exc).__name__}: {str(exc)[:200]}")
            rows.append(row)
            print(row, flush=True)
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
