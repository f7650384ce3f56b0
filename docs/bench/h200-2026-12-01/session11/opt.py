"""Option A/B of qrita.select and qrita.sample on the Triton backend (session 11, call B).

    python3 opt.py OUT.json [budget_s]

``qrita.sample`` takes no backend options, so the script adds them to every request the Triton
backend builds (it wraps ``qrita.backends.triton._torch_request``).  Each option set is timed as
CUDA-graph medians and its bits (or tokens) are compared with the default's.  Run from the
repository root (it imports ``benchmarks/gpu_check.py``).
"""

import dataclasses
import json
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from ab import digest  # noqa: E402  (the same folder)
from gpu_check import graph_time, make_logits  # noqa: E402

import qrita  # noqa: E402
import qrita.backends.triton as tb  # noqa: E402

OPTS: dict = {}
_request = tb._torch_request


def _with_options(req):
    r = _request(req)
    return dataclasses.replace(r, options={**r.options, **OPTS})


tb._torch_request = _with_options
SETS = [{}, dict(fold_updates=True), dict(span_prefetch=True), dict(span_block=2048), dict(span=8192),
        dict(span_warps=4), dict(span_block=2048, span_prefetch=True)]
F32 = torch.float32
CASES = [("llm", F32, 64, 128256, 50, None, "sample"), ("llm", F32, 64, 151936, 100, 0.9, "sample"),
         ("llm", F32, 64, 128256, 100, 0.9, "sample"), ("llm", F32, 64, 151936, 50, None, "sample"),
         ("llm", F32, 1024, 151936, 100, 0.9, "sample"), ("gauss", F32, 1024, 131072, 50, None, "select"),
         ("llm", torch.bfloat16, 1024, 131072, 50, None, "select"), ("zipf", F32, 1024, 131072, 50, None, "select"),
         ("llm", F32, 16, 131072, 50, None, "select")]


def main() -> None:
    out, budget = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150
    res = []
    t0 = time.time()
    for dist, dt, B, V, k, p, mode in CASES:
        x = make_logits(dist, B, V, dt, seed=3)
        seeds = torch.arange(B, device="cuda", dtype=torch.int64)
        ref = None
        for o in SETS:
            if time.time() - t0 > budget:
                break
            if mode == "select" and B >= 1024 and "fold_updates" in o:
                continue
            OPTS.clear()
            OPTS.update(o)
            if mode == "sample":
                def fn(x=x, k=k, p=p, seeds=seeds):
                    return qrita.sample(x, k=k, p=p, seeds=seeds, backend="triton")

                h = digest(fn())
            else:
                def fn(x=x, k=k, p=p):
                    return qrita.select(x, k=k, p=p, backend="triton")

                s = fn()
                h = digest(s.threshold, s.count, s.num_ties)
            ref = ref or h
            us = graph_time(fn, iters=20, reps=5)
            row = dict(dist=dist, dtype=str(dt).split(".")[-1], B=B, V=V, k=k, p=p, mode=mode, opts=o,
                       us=round(us, 1), same=h == ref)
            res.append(row)
            print(row, f"t={time.time() - t0:.0f}", flush=True)
    OPTS.clear()
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
