"""A/B timing of qrita.select and qrita.sample between package trees (session 11, calls A and D).

    PYTHONPATH=<tree> python3 ab.py TAG OUT.json     # AB_B1024=1: the B=1024 cases only

Times each case as CUDA-graph medians and hashes (threshold, count, num_ties) and the sampled
tokens, so that two trees can be compared for speed and bits.  Run from the repository root
(it imports ``benchmarks/gpu_check.py``).
"""

import hashlib
import json
import os
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from gpu_check import graph_time, make_logits  # noqa: E402

import qrita  # noqa: E402

V = 131072


def cases():
    out = []
    for dist in ("gauss", "zipf", "llm"):
        for dt in (torch.float32, torch.bfloat16):
            out.append((dist, dt, 1024, 50, None))
        out.append((dist, torch.float32, 1024, None, 0.9))
        out.append((dist, torch.float32, 1024, 100, 0.9))
    for dist in () if os.environ.get("AB_B1024") else ("llm", "zipf"):
        for B in (1, 16, 64):
            out.append((dist, torch.float32, B, 50, None))
        out.append((dist, torch.float32, 1, None, 0.9))
    return out


def digest(*tensors) -> str:
    h = hashlib.sha1()
    for t in tensors:
        h.update(t.contiguous().view(torch.uint8).cpu().numpy().tobytes())
    return h.hexdigest()[:12]


def main() -> None:
    tag, out = sys.argv[1], sys.argv[2]
    res = []
    t0 = time.time()
    for dist, dt, B, k, p in cases():
        x = make_logits(dist, B, V, dt, seed=7)
        sel = qrita.select(x, k=k, p=p, backend="triton")
        us = graph_time(lambda x=x, k=k, p=p: qrita.select(x, k=k, p=p, backend="triton"), iters=20, reps=5)
        r = dict(dist=dist, dtype=str(dt).split(".")[-1], B=B, k=k, p=p, select_us=round(us, 1),
                 bits=digest(sel.threshold, sel.count, sel.num_ties))
        if B == 1024 and k == 50 and dt == torch.float32:
            seeds = torch.arange(B, device="cuda", dtype=torch.int64)

            def draw(x=x, k=k, p=p, seeds=seeds):
                return qrita.sample(x, k=k, p=p, seeds=seeds, backend="triton")

            r["sample_us"] = round(graph_time(draw, 10, 5), 1)
            r["tok"] = digest(draw())
        res.append(r)
        print(tag, r, f"t={time.time() - t0:.0f}", flush=True)
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
