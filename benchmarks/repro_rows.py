"""Run saved rows (an ``.npz`` from ``exact_scan.py``) under several option sets and print each answer.

For a row that failed on the GPU and passes in the interpreter: is the failure in the row itself
(it fails at B=2 too) or in its batch, does it depend on the search tile (``reg_cap``) or the warps,
and is it the same from one call to the next?  Run from the repository root:
``python3 benchmarks/repro_rows.py docs/bench/h200-2026-12-01/session8/callD-b2f605b/scan_rows.npz --p 0.99``.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch
from gpu_check import failing_rows  # same folder: run as a script

import qrita

BASE = dict(two_cut_share=4, cut_pass=True, span_layout="strided")  # the B=1024 geometry of the failing run
OPTIONS = [BASE, dict(BASE, reg_cap=2048), dict(BASE, search_warps=4), dict(BASE, search_warps=16),
           dict(BASE, num_pivots=1), dict(BASE, reg_cap=16384)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("npz")
    ap.add_argument("--p", type=float, default=0.99)
    ap.add_argument("--options", action="append", default=None, help="a JSON dict (default: OPTIONS)")
    ap.add_argument("--repeats", type=int, default=2)
    args = ap.parse_args()
    saved = np.load(args.npz)
    names = [k for k in saved if not k.endswith("_answer")]
    x = torch.from_numpy(np.stack([saved[k] for k in names])).to("cuda" if torch.cuda.is_available() else "cpu")
    for name in names:
        print(name, "saved answer (threshold, num_ties, count, hit):", saved[name + "_answer"].tolist())
    for opts in [json.loads(o) for o in args.options] if args.options else OPTIONS:
        for rep in range(args.repeats):
            sel = qrita.select(x, None, args.p, backend="triton", options=opts)
            answers = list(zip(sel.threshold.tolist(), sel.num_ties.tolist(), sel.count.tolist(),
                               sel.hit.tolist(), strict=True))
            bad, _ = failing_rows(x, None, args.p, sel)
            verdict = ["FAIL" if r in bad else "ok" for r in range(len(names))]
            print(f"{opts} rep {rep}: {answers} {verdict}", flush=True)


if __name__ == "__main__":
    main()
