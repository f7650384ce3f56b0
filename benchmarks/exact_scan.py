"""Every row of chosen cases checked against the oracle (float64 on the CPU), on the GPU.

The sweeps check only the rows whose answer differs between option sets; this checks them all, and
saves up to ``--save`` failing rows (with their request and answers) to an ``.npz`` for a CPU
reproduction.  Run from the repository root: ``python3 benchmarks/exact_scan.py --out scan.json``.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from gpu_check import failing_rows, make_logits  # same folder: run as a script

import qrita

# (dist, dtype, B, k, p, options)
CASES = [("llm", torch.float32, 1024, None, p, {}) for p in (0.99, 0.995, 0.999, 0.95)] + [
    ("llm", torch.float32, 1024, None, 0.99, dict(two_cut_share=4))] + [
    (d, torch.float32, 1024, None, 0.99, {}) for d in ("zipf13", "zipf", "gauss")] + [
    ("llm", torch.bfloat16, 1024, None, 0.99, {}), ("llm", torch.float32, 1024, 100, 0.99, {})] + [
    ("llm", torch.float32, 1024, None, p, opts) for p in (0.99, 0.995, 0.999)
    for opts in (dict(two_cut_share=128), dict(two_cuts=False))]

# --set fold: the finish and the updates run by a row's last program (launch.FOLD_MAX_ROWS: the default at
# B <= 16; forced at B=1024, where every row of Zipf top-p 0.99 takes the miss rounds)
FOLD = dict(fold_finish=True, fold_updates=True)
FOLD_CASES = [("gauss", torch.float32, 16, None, 0.9, {}), ("zipf", torch.float32, 16, None, 0.99, {}),
              ("llm", torch.float32, 16, None, 0.99, {}), ("llm", torch.bfloat16, 16, 50, None, {}),
              ("ties", torch.float32, 16, None, 0.9, {}), ("ties", torch.float32, 16, 50, None, {}),
              ("zipf", torch.float32, 1024, None, 0.99, FOLD), ("llm", torch.float32, 1024, 100, 0.9, FOLD),
              ("gauss", torch.bfloat16, 1024, None, 0.9, FOLD)]
SETS = {"default": CASES, "fold": FOLD_CASES}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="scan.json")
    ap.add_argument("--npz", default="scan_rows.npz")
    ap.add_argument("--save", type=int, default=4, help="failing rows to save")
    ap.add_argument("--budget-s", type=float, default=200)
    ap.add_argument("--set", default="default", choices=sorted(SETS), help="which list of cases")
    args = ap.parse_args()
    t0 = time.time()
    rows, saved = [], {}
    for dist, dtype, B, k, p, opts in SETS[args.set]:
        if time.time() - t0 > args.budget_s:
            break
        x = make_logits(dist, B, 131072, dtype)
        sel = qrita.select(x, k, p, backend="triton", options=opts)
        bad, first = failing_rows(x, k, p, sel)
        row = dict(dist=dist, dtype=str(dtype)[6:], B=B, k=k, p=p, options=opts, n_bad=len(bad), bad=bad[:16],
                   hit=float(sel.hit.float().mean()))
        if bad:
            row["first"] = first[:400]
            for r in bad[: max(0, args.save - len(saved) // 2)]:  # two entries a row: values, answer
                name = f"{dist}_{row['dtype']}_p{p}_{'_'.join(f'{a}{b}' for a, b in opts.items())}_r{r}"
                saved[name] = x[r].float().cpu().numpy()
                saved[name + "_answer"] = np.array([sel.threshold[r].item(), sel.num_ties[r].item(),
                                                    sel.count[r].item(), sel.hit[r].item()], dtype=np.float64)
        print(row, flush=True)
        rows.append(row)
    with open(args.out, "w") as f:
        json.dump(rows, f, indent=1)
    if saved:
        np.savez_compressed(args.npz, **saved)


if __name__ == "__main__":
    main()
