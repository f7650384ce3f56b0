"""Is the harness's slow CuPy k100+p0.9 (LLM-like, B=1024) the tail of a few rows that miss?

    python3 tail19.py OUT.json

The harness's own input (qrita.bench.inputs, seed 0); CUDA-graph medians of qrita.select with
the rows as they are, and with every missed row replaced by a row that hits; in both block
geometries (the final 256 threads for the streaming kernels, and 512 for all).  Run from the
repository root.
"""

import json
import sys

import torch

sys.path.insert(0, "benchmarks")
from gpu_check import graph_time  # noqa: E402

import qrita  # noqa: E402
from qrita.backends.cupy import _module as M  # noqa: E402
from qrita.bench.inputs import make_logits  # noqa: E402

FINAL = dict(M.THREADS)
res = []
for dist, k, p in (("llm", 100, 0.9), ("zipf", 100, 0.9), ("llm", 50, None)):
    x = make_logits(dist, 1024, 131072, device="cuda", seed=0)
    sel = qrita.select(x, k, p, backend="cupy")
    miss = torch.nonzero(sel.hit == 0).flatten().tolist()
    y = x.clone()
    if miss:
        good = next(i for i in range(1024) if i not in miss)
        y[miss] = x[good]
    for geo in ("final", "512"):
        M.THREADS = FINAL if geo == "final" else {f: 512 for f in FINAL}
        for name, t in (("as is", x), ("misses replaced", y)):
            us = graph_time(lambda t=t, k=k, p=p: qrita.select(t, k, p, backend="cupy"), iters=20, reps=5)
            row = dict(dist=dist, k=k, p=p, geometry=geo, input=name, misses=miss[:20], n_miss=len(miss),
                       us=round(us, 1))
            res.append(row)
            print(json.dumps(row), flush=True)
    M.THREADS = FINAL
    one = x[miss[:1]] if miss else x[:1]
    us1 = graph_time(lambda one=one, k=k, p=p: qrita.select(one, k, p, backend="cupy"), iters=20, reps=5)
    res.append(dict(dist=dist, k=k, p=p, geometry="final", input="the first missed row alone (B=1)", us=round(us1, 1)))
    print(json.dumps(res[-1]), flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
