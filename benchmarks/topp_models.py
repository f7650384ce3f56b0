"""NumPy models behind docs/triton.md's notes on top-p rows that miss (no GPU, no Triton).

    PYTHONPATH=. python3 benchmarks/topp_models.py

1. Gathering cuts: for rows of the harness's distributions (``qrita.bench.inputs``, V=131072), the keys above
   the two-cut gathering cut (the Gaussian model's top-k cut for ``rowcap // 32`` keys, ``rowcap`` = 8192) and
   above the sample's own order statistic for ``rowcap // 4`` keys, and above the top-p 0.9 cut.
2. The boundary from a sample: the rank, among a strided sample of 1024 entries, of the first sample whose
   running weight ``exp(x - max)`` (from the largest) reaches ``p`` of the sample's total, against the rank of
   the true top-p boundary among the sample; the error in sample ranks (about V / 1024 entries each).
"""

from __future__ import annotations

import math

import numpy as np

from qrita.bench.inputs import make_logits
from qrita.core.lut import TOPK_DELTA, TOPP_DELTA
from qrita.core.spec import TOPK_LUT_STEPS_PER_OCTAVE

SAMPLE = 1024
ROWCAP = 8192


def topk_delta(n: float, k: float) -> float:
    i = int(math.floor(math.log2(np.float32(n) / np.float32(k)) * TOPK_LUT_STEPS_PER_OCTAVE))
    return float(TOPK_DELTA[min(max(i, 0), TOPK_DELTA.size - 1)])


def gathering_cuts(V: int = 131072) -> None:
    print(f"1. keys above the cuts, V={V} (first {SAMPLE} entries model the row)")
    for dist in ("zipf", "gaussian", "llm"):
        for x in make_logits(dist, 2, V, seed=5).numpy():
            s = x[:SAMPLE]
            mu, sg = float(s.mean()), float(s.std())
            t = mu + (float(TOPP_DELTA[math.ceil(0.9 * (TOPP_DELTA.size - 1))]) + sg) * sg
            t2 = mu + topk_delta(V, ROWCAP / 32) * sg
            emp = np.sort(s)[::-1][ROWCAP // 4 // (V // SAMPLE)]
            print(f"   {dist:9s} above the model's gathering cut {int((x > t2).sum()):6d}, above the sample's "
                  f"order statistic {int((x > emp).sum()):6d}, above the top-p 0.9 cut {int((x > t).sum()):6d}")


def boundary_from_sample(rows: int = 32) -> None:
    print(f"2. the sample's top-p boundary, error in sample ranks over {rows} rows")
    for V in (32000, 131072):
        for dist in ("gaussian", "zipf"):
            X = make_logits(dist, rows, V, seed=2).numpy().astype(np.float64)
            for p in (0.5, 0.9, 0.99):
                errs = []
                for x in X:
                    w = np.exp(x - x.max())
                    order = np.argsort(-x, kind="stable")
                    boundary = x[order][np.searchsorted(np.cumsum(w[order]), p * w.sum())]
                    s = np.sort(x[np.arange(SAMPLE) * (V // SAMPLE)])[::-1]
                    sw = np.exp(s - s[0])
                    est = int(np.searchsorted(np.cumsum(sw) / sw.sum(), p))
                    errs.append(int((s > boundary).sum()) - est)
                e = np.array(errs)
                print(f"   V={V:6d} {dist:9s} p={p:<4}  mean {e.mean():7.1f}  sd {e.std():6.1f}  "
                      f"max |err| {abs(e).max()}")


if __name__ == "__main__":
    gathering_cuts()
    boundary_from_sample()
