"""Session 20: the CuPy search's bin atomics, one a key (session 19) against warp-aggregated
(this session), and the rows that miss the truncation.

    python3 tail20.py OUT.json        (from the repository root)

The harness's inputs (qrita.bench.inputs, seed 0).  For each case: CUDA-graph median of
qrita.select(backend="cupy") with the kernels as committed ("warp bins") and with
QRITA_WARP_BINS forced to 0 ("key atomics"), the answers of the two compared bit for bit, the
rows that missed, and the time with every missed row replaced by a row that hits.
"""

import json
import sys

import torch

sys.path.insert(0, "benchmarks")
from gpu_check import graph_time  # noqa: E402

import qrita  # noqa: E402
from qrita.backends.cupy import _module as M  # noqa: E402
from qrita.bench.inputs import make_logits  # noqa: E402

TEXT = M.kernel_text()
OFF = TEXT.replace("#define QRITA_WARP_BINS 1", "#define QRITA_WARP_BINS 0")
assert OFF != TEXT


def use(text):
    M.kernel_text = lambda: text
    M.source.cache_clear()


def answer(sel):
    return [t.clone() for t in (sel.threshold, sel.num_ties, sel.count)]


CASES = [("llm", 1024, 100, 0.9, torch.float32), ("llm", 1024, 100, 0.9, torch.bfloat16),
         ("zipf", 1024, 100, 0.9, torch.float32), ("llm", 1024, 50, None, torch.float32),
         ("llm", 1024, 50, None, torch.bfloat16), ("gaussian", 1024, None, 0.9, torch.float32),
         ("gaussian", 16, None, 0.9, torch.float32), ("zipf", 16, None, 0.9, torch.float32),
         ("gaussian", 16, 100, 0.9, torch.float32), ("llm", 1024, None, 0.9, torch.float32)]
res = []
for dist, B, k, p, dt in CASES:
    x = make_logits(dist, B, 131072, device="cuda", seed=0).to(dt)
    row = dict(dist=dist, B=B, k=k, p=p, dtype=str(dt).split(".")[1])
    outs = {}
    for name, text in (("warp bins", TEXT), ("key atomics", OFF)):
        use(text)
        sel = qrita.select(x, k, p, backend="cupy")
        outs[name] = answer(sel)
        row[name] = round(graph_time(lambda x=x, k=k, p=p: qrita.select(x, k, p, backend="cupy"), iters=10, reps=5), 1)
    row["same bits"] = all(torch.equal(a, b) for a, b in zip(outs["warp bins"], outs["key atomics"], strict=True))
    use(TEXT)
    sel = qrita.select(x, k, p, backend="cupy")
    miss = torch.nonzero(sel.hit == 0).flatten().tolist()
    row["n_miss"], row["misses"] = len(miss), miss[:12]
    if miss and len(miss) < B:
        good = next(i for i in range(B) if i not in miss)
        y = x.clone()
        y[miss] = x[good]
        fn = lambda y=y, k=k, p=p: qrita.select(y, k, p, backend="cupy")  # noqa: E731
        row["misses replaced"] = round(graph_time(fn, iters=10, reps=5), 1)
    res.append(row)
    print(json.dumps(row), flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
