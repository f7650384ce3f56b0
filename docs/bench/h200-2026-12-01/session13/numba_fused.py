"""Numba's masking, generic (``Selection.apply``) against fused (``options={"fused_mask": True}``),
session 13: eager medians (CUDA events, 10 calls) and the peak extra memory, fp32, V=131072.

    python3 numba_fused.py OUT.json

Run from the repository root.
"""

import json
import sys

import numpy as np
import torch

sys.path.insert(0, "benchmarks")
from gpu_check import make_logits  # noqa: E402

import qrita  # noqa: E402


def eager_us(fn, reps: int = 10) -> float:
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3)
    return float(np.median(times))


def main() -> None:
    rows = []
    for dist, B, k, p in (("llm", 1024, 50, None), ("llm", 1024, 100, 0.9), ("gauss", 1024, None, 0.9),
                          ("llm", 16, 50, None)):
        x = make_logits(dist, B, 131072, torch.float32, seed=9)
        for fused in (False, True):
            def fn(fused=fused, x=x, k=k, p=p):
                return qrita.top_k_top_p(x, k, p, backend="numba", options={"fused_mask": fused})

            us = eager_us(fn)
            torch.cuda.synchronize()
            base = torch.cuda.memory_allocated()
            torch.cuda.reset_peak_memory_stats()
            out = fn()
            torch.cuda.synchronize()
            peak = (torch.cuda.max_memory_allocated() - base - out.numel() * out.element_size()) / 2**20
            row = dict(dist=dist, B=B, k=k, p=p, fused=fused, us=round(us, 1), extra_mib=round(peak, 1))
            rows.append(row)
            print(row, flush=True)
            with open(sys.argv[1], "w") as f:  # after every row: a cut-off run keeps what it measured
                json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
