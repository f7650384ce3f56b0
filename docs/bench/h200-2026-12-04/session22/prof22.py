"""Session 22: where a small-batch call's time goes, kernel by kernel (CUPTI through
torch.profiler), CuPy beside Triton, on the harness's inputs (qrita.bench.inputs, seed 0),
V = 131072, fp32, select or masked out of place.  Kernel durations are device times (mean of 20 calls, outside graphs);
'graph' is the CUDA-graph median of the whole call (benchmarks/gpu_check.graph_time).

    python3 prof22.py OUT.json        (from the repository root)
"""

import json
import sys
from collections import defaultdict

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, "benchmarks")
from gpu_check import graph_time  # noqa: E402

import qrita  # noqa: E402
from qrita.bench.inputs import make_logits  # noqa: E402

CASES = [  # dist, B, k, p, backend, options, masked (out of place)
    ("gaussian", 16, 50, None, "cupy", {"cluster": False}, False),
    ("gaussian", 16, 50, None, "cupy", {"cluster": False}, True),
    ("gaussian", 16, 50, None, "cupy", {"cluster": True}, True),
    ("gaussian", 16, 50, None, "triton", {}, False),
    ("gaussian", 16, 50, None, "triton", {}, True),
    ("gaussian", 16, 100, 0.9, "cupy", {"cluster": False}, False),
    ("gaussian", 16, 100, 0.9, "triton", {}, False),
    ("llm", 1, 50, None, "cupy", {}, False),
    ("llm", 1, 50, None, "triton", {}, False),
]
res = []
for dist, B, k, p, backend, options, masked in CASES:
    x = make_logits(dist, B, 131072, device="cuda", seed=0)

    def fn():
        if masked:  # noqa: B023
            return qrita.top_k_top_p(x, k, p, backend=backend, options=options)  # noqa: B023
        return qrita.select(x, k, p, backend=backend, options=options)  # noqa: B023

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    n = 20
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
    per = defaultdict(float)
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            per[ev.name[:60]] += ev.time_range.elapsed_us()
    row = dict(
        dist=dist,
        B=B,
        k=k,
        p=p,
        backend=backend,
        options=options,
        masked=masked,
        graph=round(graph_time(fn), 1),
        kernels={kn: round(t / n, 2) for kn, t in per.items()},
    )
    res.append(row)
    print(row, flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
