"""Session 21, call B: the CuPy split path's cluster combine (options={"cluster": True}, the new
default on sm_90+) against one block a row ("cluster": False), on the harness's inputs
(qrita.bench.inputs.make_logits, seed 0), V = 131072, B <= 16.

    python3 ab21.py OUT.json        (from the repository root)

CUDA-graph medians of qrita.select(backend="cupy"), and each answer compared bit for bit with the
one-block answer (select: threshold, num_ties, count; masked, in place: the output).  Call B
also timed masked calls in place here, on their own output (mostly -inf after the first call:
not representative), and Triton; the harness times those.
"""

import json
import sys

import torch

sys.path.insert(0, "benchmarks")
from gpu_check import graph_time  # noqa: E402

import qrita  # noqa: E402
from qrita.bench.inputs import make_logits  # noqa: E402


def run(x, k, p, masked, backend, options):
    if masked:
        return lambda: qrita.top_k_top_p(x, k, p, backend=backend, options=options, inplace=True)
    return lambda: qrita.select(x, k, p, backend=backend, options=options)


def answer(x, k, p, masked, options):
    if masked:
        y = x.clone()
        qrita.top_k_top_p(y, k, p, backend="cupy", options=options, inplace=True)
        return [y.view(torch.int16 if y.element_size() == 2 else torch.int32)]
    s = qrita.select(x, k, p, backend="cupy", options=options)
    return [s.threshold.clone(), s.num_ties, s.count]


CASES = []  # dist, B, k, p, dtype, masked
for masked in (False, True):
    for dist in ("gaussian", "zipf", "llm"):
        for k, p in ((None, 0.9), (50, None), (100, 0.9)):
            CASES.append((dist, 16, k, p, torch.float32, masked))
CASES += [("gaussian", 1, None, 0.9, torch.float32, False), ("llm", 1, 50, None, torch.float32, False),
          ("llm", 1, 50, None, torch.float32, True), ("gaussian", 4, None, 0.9, torch.bfloat16, False),
          ("zipf", 16, None, 0.9, torch.bfloat16, True), ("llm", 16, 50, None, torch.bfloat16, True)]
res = []
for dist, B, k, p, dt, masked in CASES:
    x = make_logits(dist, B, 131072, device="cuda", seed=0).to(dt)
    row = dict(dist=dist, B=B, k=k, p=p, dtype=str(dt).split(".")[1], masked=masked)
    ref = answer(x, k, p, masked, {"cluster": False})
    got = answer(x, k, p, masked, {"cluster": True})
    row["same_bits"] = all(torch.equal(a, b) for a, b in zip(ref, got, strict=True))
    variants = (("one block", "cupy", {"cluster": False}), ("cluster", "cupy", {"cluster": True}))
    for name, backend, opts in variants if not masked else ():  # masked: the harness times it
        y = x.clone()
        row[name] = round(graph_time(run(y, k, p, masked, backend, opts)), 1)
    res.append(row)
    print(row, flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
