"""next/numba-wide-miss: the Numba backend's wide miss rounds (option wide_miss) and the split path's
finish at one block an SM (launch bounds (512, 1): 128 registers, no spills) against main's build
(3-pivot rounds, finish at (512, 2): 64 registers, ~700 B of spills), CUDA-graph medians, V = 131072,
fp32 select, the harness's inputs (qrita.bench.inputs.make_logits, seed 0), B = 1, 16 and 1024.

Variants, timed alternately (A B C D A B C D, the smaller of each pair) and compared bit for bit
(threshold, num_ties, count, hit):
  main    wide_miss=False, finish_split_kernel compiled with launch bounds (512, 2)  (main's kernels)
  bounds  wide_miss=False, the branch's finish (512, 1)
  wide    wide_miss=True,  the branch's finish (512, 1)                              (the branch default)
  wide_buf  and wide_buffer=True (wide rounds over the candidate buffer too; off by default)
One JSON line a case is appended to OUT.json as it is measured.

    python3 ab.py OUT.json            (from the repository root, on the GPU)
    NUMBA_ENABLE_CUDASIM=1 python3 ab.py OUT.json --dry     (CPU: tiny rows, bits only, no timing)
"""

import json
import statistics
import sys

import torch
from numba import cuda

import qrita
import qrita.backends.numba.kernels as K
from qrita.bench.inputs import make_logits

DRY = "--dry" in sys.argv
DEV = "cpu" if DRY else "cuda"
V = 3000 if DRY else 131072
INNER = 10
BRANCH_FINISH = K.finish_split_kernel
MAIN_FINISH = BRANCH_FINISH if K.SIMULATED else cuda.jit(launch_bounds=(K.THREADS, 2))(BRANCH_FINISH.py_func)
VARIANTS = {
    "main": ({"wide_miss": False}, MAIN_FINISH),
    "bounds": ({"wide_miss": False}, BRANCH_FINISH),
    "wide": ({"wide_miss": True}, BRANCH_FINISH),
    "wide_buf": ({"wide_miss": True, "wide_buffer": True}, BRANCH_FINISH),
}
# dist, B, k, p, extra options (all variants)
CASES = [(d, B, k, p, {}) for B in (16, 1024) for k, p in ((50, None), (100, 0.9), (None, 0.9))
         for d in ("llm", "gaussian", "zipf")]
CASES += [("llm", 1, 50, None, {}), ("gaussian", 1, None, 0.9, {}), ("llm", 16, 50, None, {"truncation": False}),
          ("llm", 1024, 50, None, {"truncation": False})]
if DRY:
    CASES = [(d, 2, k, p, dict(e, capacity=40)) for d, B, k, p, e in CASES if B == 16][:6]


def call(name, x, k, p, extra):
    options, finish = VARIANTS[name]
    K.finish_split_kernel = finish  # launch.py looks it up on the module at each call
    return qrita.select(x, k, p, backend="numba", options=dict(extra, **options))


def answer(name, x, k, p, extra):
    r = call(name, x, k, p, extra)
    return [torch.as_tensor(r.threshold).float().cpu(), torch.as_tensor(r.num_ties).cpu(),
            torch.as_tensor(r.count).cpu(), torch.as_tensor(r.hit).cpu()]


def timed(name, x, k, p, extra):
    """CUDA-graph median (us a call) of INNER captured calls."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            call(name, x, k, p, extra)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(INNER):
            call(name, x, k, p, extra)
    times = []
    for _ in range(7):
        a, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        e.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(e) * 1e3 / INNER)
    return statistics.median(times)


def main():
    out = open(sys.argv[1], "a")
    for dist, B, k, p, extra in CASES:
        x = make_logits(dist, B, V, device=DEV, seed=0).float()
        ans = {name: answer(name, x, k, p, extra) for name in VARIANTS}
        same = all(torch.equal(a, b) for name in VARIANTS for a, b in zip(ans["main"], ans[name], strict=True))
        row = dict(dist=dist, B=B, k=k, p=p, options=extra, same_bits=same, hit_rows=int(ans["main"][3].sum()))
        if not DRY:
            t = {name: [] for name in VARIANTS}
            for _ in range(2):
                for name in VARIANTS:
                    t[name].append(timed(name, x, k, p, extra))
            row.update({name: round(min(v), 1) for name, v in t.items()}, runs=t)
        print(json.dumps(row), flush=True)
        out.write(json.dumps(row) + "\n")
        out.flush()
    K.finish_split_kernel = BRANCH_FINISH


if __name__ == "__main__":
    main()
