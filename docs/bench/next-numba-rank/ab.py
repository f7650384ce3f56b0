"""next/numba-rank: the search over a small candidate buffer by ranking (option rank_select, the
branch's default) against the 3-pivot rounds (rank_select=False), and the masking's cut index from
the search (next/numba-mask, below it on the branch) timed beside them; CUDA-graph medians,
V = 131072, fp32, the harness's inputs (qrita.bench.inputs.make_logits, seed 0), B = 1, 16, 1024.

Both variants run in one process, alternated case by case; every answer of ``select`` (threshold,
num_ties, count, hit) and every masked output is compared bit for bit.  One JSON line a case:

    python3 ab.py OUT.json                                      (from the repository root, on the GPU)
    NUMBA_ENABLE_CUDASIM=1 python3 ab.py OUT.json --dry         (CPU: tiny rows, bits only)

With ``--wide`` it times the split wide rounds instead (option ``split_wide``, session 27): off, and on
with 2, 3 (the default) and 4 rounds, top-p 0.9 alone at B = 1 and 16 (the split path), the same bits.
"""

import json
import sys

import torch

import qrita
from qrita.bench.inputs import make_logits
from qrita.bench.measure import _graph_median_us as graph_median_us  # the harness's timing

DRY = "--dry" in sys.argv
DEV = "cpu" if DRY else "cuda"
V = 3000 if DRY else 131072
INNER = 10
VARIANTS = {"rounds": {"rank_select": False}, "rank": {}}
# dist, B, k, p
CASES = [(d, B, k, p) for B in (16, 1024, 1) for k, p in ((50, None), (100, 0.9), (None, 0.9))
         for d in ("llm", "gaussian", "zipf")]
if "--wide" in sys.argv:
    VARIANTS = {"finish": {"split_wide": False}, "r2": {"split_wide_rounds": 2}, "r3": {},
                "r4": {"split_wide_rounds": 4}}
    CASES = [(d, B, None, 0.9) for B in (16, 1) for d in ("llm", "gaussian", "zipf")]
if DRY:
    CASES = [(d, 2, k, p) for d, B, k, p in CASES if B == 16][:6]
    if "--wide" in sys.argv:  # the split path, buffers too small for the live keys
        VARIANTS = {name: {**o, "split": 3, "capacity": 9} for name, o in VARIANTS.items()}


def select_bits(x, k, p, options):
    r = qrita.select(x, k, p, backend="numba", options=options)
    return [torch.as_tensor(r.threshold).float().cpu(), torch.as_tensor(r.num_ties).cpu(),
            torch.as_tensor(r.count).cpu(), torch.as_tensor(r.hit).cpu()]


def masked_bits(x, k, p, options):
    return qrita.top_k_top_p(x, k, p, backend="numba", options=options).view(torch.int32).cpu()


def timings(x, k, p, options):
    """CUDA-graph medians (µs a call; the better of two runs): ``select``, and masking in place
    (``y`` restored from ``x`` before every replay, untimed: never timed on masked rows)."""
    y = x.clone()

    def select():
        qrita.select(x, k, p, backend="numba", options=options)

    def masked():
        qrita.top_k_top_p(y, k, p, backend="numba", inplace=True, options=options)

    return dict(select_us=round(min(graph_median_us(select, INNER, 7) for _ in range(2)), 1),
                masked_us=round(min(graph_median_us(masked, 1, 15, restore=lambda: y.copy_(x)) for _ in range(2)), 1))


def main():
    out = open(sys.argv[1], "a")
    for dist, B, k, p in CASES:
        x = make_logits(dist, B, V, device=DEV, seed=0).float()
        want = None
        for name, options in VARIANTS.items():
            bits = select_bits(x, k, p, options) + [masked_bits(x, k, p, options)]
            same = None if want is None else all(torch.equal(a, b) for a, b in zip(want, bits, strict=True))
            want = want or bits
            row = dict(variant=name, dist=dist, B=B, k=k, p=p, same_bits=same, hit_rows=int(bits[3].sum()))
            if not DRY:
                row.update(timings(x, k, p, options))
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
