"""One CuPy ``qrita.select`` case, run twice (the second launch is the one to profile).

    ncu --clock-control none -k regex:select_kernel --launch-skip 1 -c 1 python3 ncu19.py DIST B K P

Run from the repository root.
"""

import sys

import torch

sys.path.insert(0, "benchmarks")
from gpu_check import make_logits  # noqa: E402

import qrita  # noqa: E402

dist, B = sys.argv[1], int(sys.argv[2])
k = None if sys.argv[3] == "-" else int(sys.argv[3])
p = None if sys.argv[4] == "-" else float(sys.argv[4])
x = make_logits(dist, B, 131072, torch.float32, seed=3)
for _ in range(2):
    sel = qrita.select(x, k=k, p=p, backend="cupy")
torch.cuda.synchronize()
print("hits", int(sel.hit.sum()), "count[0]", int(sel.count[0]))
