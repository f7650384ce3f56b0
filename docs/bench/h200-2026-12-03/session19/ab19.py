"""CuPy backend A/B (session 19): CUDA-graph medians and result digests of ``qrita.select``.

    python3 ab19.py OUT.json LABEL [budget_s]

Run from the repository root.  LABEL "old" runs only the default option set (the tree on
PYTHONPATH may predate the newer options); any other label also runs the option sets below and
Triton beside it.  Digests (threshold bits, num_ties, count) of every set are written, so that
two runs (old and new kernels) can be compared bit for bit.
"""

import hashlib
import json
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from gpu_check import graph_time, make_logits  # noqa: E402

import qrita  # noqa: E402

F32, BF16 = torch.float32, torch.bfloat16
V = 131072
# (dist, dtype, B, k, p)
CASES = [
    ("hgauss", F32, 1024, None, 0.9),
    ("hllm", F32, 1024, None, 0.9),
    ("hzipf", F32, 1024, None, 0.9),
    ("hgauss", F32, 16, None, 0.9),
    ("hllm", F32, 16, None, 0.9),
    ("hzipf", F32, 16, None, 0.9),
    ("hllm", F32, 1024, 50, None),
    ("hgauss", F32, 1024, 100, 0.9),
    ("hllm", F32, 1024, 100, 0.9),
    ("hzipf", F32, 1024, 100, 0.9),
    ("hllm", BF16, 1024, None, 0.9),
    ("hllm", F32, 1, None, 0.9),
    ("hgauss", F32, 1024, None, 0.5),
    ("ties", F32, 64, None, 0.9),
    ("hllm", F32, 16, 50, None),
]
SETS = [{}, {"bin_copies": 1}]


def digest(sel) -> str:
    h = hashlib.sha256()
    for t in (sel.threshold, sel.num_ties, sel.count):
        h.update(t.contiguous().view(torch.uint8).cpu().numpy().tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    out, label = sys.argv[1], sys.argv[2]
    budget = float(sys.argv[3]) if len(sys.argv) > 3 else 200
    sets = [{}] if label == "old" else SETS
    res = []
    t0 = time.time()
    for dist, dt, B, k, p in CASES:
        x = make_logits(dist, B, V, dt, seed=3)
        for backend, o in [("cupy", s) for s in sets] + ([] if label == "old" else [("triton", {})]):
            if time.time() - t0 > budget:
                break

            def fn(x=x, k=k, p=p, backend=backend, o=o):
                return qrita.select(x, k=k, p=p, backend=backend, options=o or None)

            sel = fn()
            torch.cuda.synchronize()
            one = graph_time(fn, iters=2, reps=3)
            iters = max(2, min(50, int(20000 / max(one, 1.0))))
            us = graph_time(fn, iters=iters, reps=5)
            row = dict(
                dist=dist,
                dtype=str(dt),
                B=B,
                V=V,
                k=k,
                p=p,
                backend=backend,
                options=o,
                us=round(us, 2),
                digest=digest(sel),
                hits=int(sel.hit.sum()) if sel.hit is not None else None,
            )
            res.append(row)
            print(json.dumps(row), flush=True)
    json.dump(res, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
