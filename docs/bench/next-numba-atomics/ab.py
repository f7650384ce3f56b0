"""next/numba-atomics: warp-aggregated shared atomics and the chunked bin scan of the wide rounds,
against the per-thread atomics and one thread's scan (main's kernels), CUDA-graph medians, V = 131072,
fp32 select, the harness's inputs (qrita.bench.inputs.make_logits, seed 0), B = 1, 16 and 1024.

Numba reads module globals when it compiles, so each variant runs in its own process, set before the
first launch:
  base    WARP_AGGREGATE = False, WIDE_CHUNKS = 1   (main's reductions: an atomic a thread; one thread scans the bins)
  agg     WARP_AGGREGATE = True,  WIDE_CHUNKS = 1   (an atomic a warp after shuffles)
  branch  the branch's defaults (agg, and the bins scanned in 32 chunks a thread each)
Each case runs with the default options and with wide_buffer=True.  The first process saves every
answer (threshold, num_ties, count, hit) under BITS_DIR; later ones compare theirs bit for bit.
One JSON line a case is appended to OUT.json.

    python3 ab.py OUT.json base|agg|branch           (from the repository root, on the GPU; base first)
    NUMBA_ENABLE_CUDASIM=1 python3 ab.py OUT.json branch --dry    (CPU: tiny rows, bits only)
"""

import json
import os
import sys

import torch

import qrita
import qrita.backends.numba.kernels as K
from qrita.bench.inputs import make_logits
from qrita.bench.measure import _graph_median_us as graph_median_us  # the harness's timing

VARIANT = sys.argv[2]
DRY = "--dry" in sys.argv
if VARIANT in ("base", "agg"):
    K.WIDE_CHUNKS = 1
    K.WIDE_CHUNK = K.WIDE_SLOTS
if VARIANT == "base":
    K.WARP_AGGREGATE = False
DEV = "cpu" if DRY else "cuda"
V = 3000 if DRY else 131072
INNER = 10
BITS_DIR = os.environ.get("BITS_DIR", "/tmp/numba_atomics_bits")
OPTION_SETS = {"default": {}, "wide_buf": {"wide_buffer": True}}
# dist, B, k, p, extra options
CASES = [(d, B, k, p, {}) for B in (16, 1024) for k, p in ((50, None), (100, 0.9), (None, 0.9))
         for d in ("llm", "gaussian", "zipf")]
CASES += [("llm", 1, 50, None, {}), ("gaussian", 1, None, 0.9, {}), ("llm", 16, 50, None, {"truncation": False}),
          ("llm", 1024, 50, None, {"truncation": False})]
if DRY:
    CASES = [(d, 2, k, p, dict(e, capacity=40)) for d, B, k, p, e in CASES if B == 16][:6]


def call(x, k, p, options):
    return qrita.select(x, k, p, backend="numba", options=options)


def answer(x, k, p, options):
    r = call(x, k, p, options)
    return [torch.as_tensor(r.threshold).float().cpu(), torch.as_tensor(r.num_ties).cpu(),
            torch.as_tensor(r.count).cpu(), torch.as_tensor(r.hit).cpu()]


def timed(x, k, p, options):
    """CUDA-graph median (us a call) of INNER captured calls over 7 replays: the harness's own timing."""
    return graph_median_us(lambda: call(x, k, p, options), INNER, 7)


def main():
    os.makedirs(BITS_DIR, exist_ok=True)
    out = open(sys.argv[1], "a")
    for n, (dist, B, k, p, extra) in enumerate(CASES):
        x = make_logits(dist, B, V, device=DEV, seed=0).float()
        for oname, opts in OPTION_SETS.items():
            options = dict(extra, **opts)
            ans = answer(x, k, p, options)
            path = os.path.join(BITS_DIR, f"{n}_{oname}.pt")
            if os.path.exists(path):
                same = all(torch.equal(a, b) for a, b in zip(torch.load(path), ans, strict=True))
            else:
                torch.save(ans, path)
                same = None  # the reference
            row = dict(variant=VARIANT, dist=dist, B=B, k=k, p=p, options=options, same_bits=same,
                       hit_rows=int(ans[3].sum()))
            if not DRY:
                row["us"] = round(min(timed(x, k, p, options) for _ in range(2)), 1)
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
