"""Prepared in session 21 for the next device session: the CuPy cluster combine's cluster size.
One block a row ("cluster": False) against clusters of 2, 4 and 8 blocks (_module.CLUSTER, the
size the sm_90 module is built with), on the harness's inputs (qrita.bench.inputs, seed 0),
V = 131072: rows that hit pay the cluster launch, rows that miss gain from the split search.

    python3 ab21e.py OUT.json        (from the repository root)

CUDA-graph medians of qrita.select / qrita.top_k_top_p(backend="cupy") (masked: out of place, so
that every call sees the same input), each answer compared bit for bit with one block a row's.
"""

import json
import sys

import torch

sys.path.insert(0, "benchmarks")
from gpu_check import graph_time  # noqa: E402

import qrita  # noqa: E402
from qrita.backends.cupy import _module as M  # noqa: E402
from qrita.bench.inputs import make_logits  # noqa: E402


def call(x, k, p, masked, options):
    if masked:
        return qrita.top_k_top_p(x, k, p, backend="cupy", options=options)
    return qrita.select(x, k, p, backend="cupy", options=options)


def bits(out, masked):
    if masked:
        return [out.view(torch.int16 if out.element_size() == 2 else torch.int32).clone()]
    return [out.threshold.clone(), out.num_ties.clone(), out.count.clone()]


CASES = [  # dist, B, k, p, masked
    ("gaussian", 16, None, 0.9, False), ("zipf", 16, None, 0.9, False), ("llm", 16, None, 0.9, False),
    ("gaussian", 16, 50, None, False), ("llm", 16, 50, None, False), ("gaussian", 16, 100, 0.9, False),
    ("llm", 16, 100, 0.9, False), ("gaussian", 16, 50, None, True), ("llm", 16, 100, 0.9, True),
    ("gaussian", 16, None, 0.9, True), ("gaussian", 1, None, 0.9, False), ("llm", 1, 50, None, False),
]
res = []
for dist, B, k, p, masked in CASES:
    x = make_logits(dist, B, 131072, device="cuda", seed=0)
    row = dict(dist=dist, B=B, k=k, p=p, masked=masked)
    ref = bits(call(x, k, p, masked, {"cluster": False}), masked)
    row["one block"] = round(graph_time(lambda: call(x, k, p, masked, {"cluster": False})), 1)  # noqa: B023
    for size in (2, 4, 8):
        M.CLUSTER = size
        got = bits(call(x, k, p, masked, {"cluster": True}), masked)
        row[f"same bits {size}"] = all(torch.equal(a, b) for a, b in zip(ref, got, strict=True))
        row[f"cluster {size}"] = round(graph_time(lambda: call(x, k, p, masked, {"cluster": True})), 1)  # noqa: B023
    M.CLUSTER = 8
    res.append(row)
    print(row, flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
