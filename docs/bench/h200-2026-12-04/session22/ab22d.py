"""Session 22, call D (ab22.py of call C, variants changed): the combine's partials and candidate
copy a slice a thread (no loop over the slices in turn).  Variants: one block a row (the plain
combine, then mask_kernel) with the default split, with 8 slices a row, and with mask_kernel on
4096 columns a block (_launch._MASK_COLS_MIN, 8192 by default); the cluster combine with clusters
of 8 (the default where a row may be top-p only) and of 4 (_module.CLUSTER patched: a second
module); Triton beside them.  Inputs:
the harness's (qrita.bench.inputs, seed 0), V = 131072, fp32.  select, and masked in place as
the harness times it (one input copy per captured call, restored before each replay, untimed).
Every variant's answer is compared bit for bit with the plain combine's.

    python3 ab22d.py OUT.json        (from the repository root)
"""

import json
import statistics
import sys

import torch

import qrita
from qrita.backends.cupy import _launch as L
from qrita.backends.cupy import _module as M
from qrita.bench.inputs import make_logits

INNER = 10


def timed(fn, masked, x):
    """CUDA-graph median (us a call) of fn(buffer); masked: each captured call on its own copy."""
    bufs = [x.clone() for _ in range(INNER)] if masked else [x] * INNER
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for b in bufs[:2]:
            fn(b)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for b in bufs:
            fn(b)
    times = []
    for _ in range(7):
        if masked:
            for b in bufs:
                b.copy_(x)
        a, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        e.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(e) * 1e3 / INNER)
    return round(statistics.median(times), 1)


def op(k, p, masked, backend, options):
    if masked:
        return lambda t: qrita.top_k_top_p(t, k, p, backend=backend, options=options, inplace=True)
    return lambda t: qrita.select(t, k, p, backend=backend, options=options)


def bits(fn, masked, x):
    t = x.clone()
    r = fn(t)
    if masked:
        return [t.view(torch.int32).clone()]
    return [r.threshold.clone(), r.num_ties.clone(), r.count.clone()]


VARIANTS = {  # name: (options, cluster size or None, mask_kernel columns a block)
    "plain": ({"cluster": False}, None, 8192),
    "plain S8": ({"cluster": False, "split": 8}, None, 8192),
    "plain m4096": ({"cluster": False}, None, 4096),
    "c8": ({"cluster": True}, 8, 8192),
    "c4": ({"cluster": True}, 4, 8192),
}
CASES = [  # dist, B, k, p
    ("gaussian", 16, 50, None),
    ("llm", 16, 50, None),
    ("gaussian", 16, 100, 0.9),
    ("llm", 16, 100, 0.9),
    ("llm", 16, None, 0.9),
    ("zipf", 16, None, 0.9),
    ("llm", 1, 50, None),
    ("llm", 1, 100, 0.9),
    ("gaussian", 1, None, 0.9),
    ("llm", 4, 50, None),
]
res = []
for dist, B, k, p in CASES:
    x = make_logits(dist, B, 131072, device="cuda", seed=0)
    for masked in (False, True):
        row = dict(dist=dist, B=B, k=k, p=p, masked=masked)
        row["triton"] = timed(op(k, p, masked, "triton", {}), masked, x)
        ref = None
        for name, (options, size, cols) in VARIANTS.items():
            M.CLUSTER = size or 8
            L._MASK_COLS_MIN = cols
            fn = op(k, p, masked, "cupy", options)
            got = bits(fn, masked, x)
            if ref is None:
                ref = got
            same = all(torch.equal(a, b) for a, b in zip(ref, got, strict=True))
            row[name] = timed(fn, masked, x) if same else f"DIFFERENT BITS {timed(fn, masked, x)}"
        M.CLUSTER = 8
        L._MASK_COLS_MIN = 8192
        res.append(row)
        print(row, flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
