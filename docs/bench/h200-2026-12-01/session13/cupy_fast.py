"""The CuPy backend's opt-in fast paths (``options={"fast_paths": ...}``) on and off (session 13).

    python3 cupy_fast.py OUT.json [budget_s]

``select`` (and masking in place for two cases), fp32, V=131072: CUDA-graph medians with the fast
paths off and on, and whether the two give the same bits (``same``).  Run from the repository root.
"""

import json
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from gpu_check import graph_time, make_logits  # noqa: E402

import qrita  # noqa: E402

sys.path.insert(0, "docs/bench/h200-2026-12-01/session11")
from ab import digest  # noqa: E402  (session11/ab.py)

CASES = [(d, B, k, p, "select") for B in (1024, 16) for d in ("zipf", "gauss", "llm")
         for k, p in ((None, 0.9), (50, None), (100, 0.9))]
CASES += [("gauss", 1024, None, 0.9, "masked"), ("llm", 1024, 50, None, "masked")]


def main() -> None:
    out, budget = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 100
    rows, t0 = [], time.time()
    for dist, B, k, p, mode in CASES:
        x0 = make_logits(dist, B, 131072, torch.float32, seed=5)
        x = x0.clone()
        hashes = {}
        for fast in (False, True):
            if time.time() - t0 > budget:
                break
            opts = {"fast_paths": fast}
            if mode == "select":
                def fn(opts=opts, k=k, p=p, x0=x0):
                    return qrita.select(x0, k, p, backend="cupy", options=opts)

                s = fn()
                hashes[fast] = digest(s.threshold, s.count, s.num_ties)
            else:
                def fn(opts=opts, k=k, p=p, x0=x0, x=x):
                    x.copy_(x0)
                    return qrita.top_k_top_p(x, k, p, backend="cupy", inplace=True, options=opts)

                hashes[fast] = digest(fn())
            us = graph_time(fn, iters=4 if p is not None and k is None else 20, reps=5)
            same = hashes[fast] == hashes[False]
            row = dict(dist=dist, B=B, k=k, p=p, mode=mode, fast=fast, us=round(us, 1), same=same)
            rows.append(row)
            print(row, f"t={time.time() - t0:.0f}", flush=True)
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
