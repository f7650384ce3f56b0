"""Miss rounds a top-p row needs under each lane placement, counted on the real Triton kernels.

    TRITON_INTERPRET=1 PYTHONPATH=. python3 benchmarks/miss_rounds.py [--V 131072] [--out rounds.json]

Runs ``qrita.select`` on rows of the harness's distributions (``qrita.bench.inputs``) with the key
lanes (``sample_lanes=False``), ``value_lanes`` and ``sample_lanes`` (the default for a top-p alone since
session 31; 16 and 8 lanes a round), and records after each update launch how many rows are still open
(``update_kernel``'s ``state_i[:, 0]``, 0 once a row is answered).
A row answered by round r cost r passes over the row (an evaluating round reads it, the gathering round
reads it again).  Every row is answered after the last round: one still open before it is finished by
its gather or, when it evaluates lanes, by one program over the row.  Every answer is checked against
the float64 oracle (``qrita.reference.check_selection``).  Counts, not times: it runs in the interpreter
on a CPU (about 10 s a call at V=131072).  On a GPU it failed in session 31 (its spy then replaced the
kernel in the kernels module, whose globals Triton's compiler deep-copies); fixed, not yet rerun there.
"""

from __future__ import annotations

import argparse
import json
import types

import torch

import qrita
from qrita.backends.triton import kernels, launch
from qrita.bench.inputs import make_logits
from qrita.reference import check_selection

LANES = {"key": {"sample_lanes": False}, "value": {"value_lanes": True, "sample_lanes": False},
         "sample": {"sample_lanes": True}, "sample8": {"sample_lanes": True, "miss_pivots": 7}}  # 8 lanes a round


class CountOpen:
    """Stands in for ``kernels.update_kernel``: launches it, then records the rows still open."""

    def __init__(self, update):
        self.update = update
        self.at = update.arg_names.index("state_i_ptr")
        self.open: list[int] = []

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self.update[grid](*args, **kwargs)
            self.open.append(int((args[self.at][:, 0] != 0).sum()))
        return launch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--V", type=int, default=131072)
    ap.add_argument("--rows", type=int, default=2)
    ap.add_argument("--dists", default="gaussian,zipf")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    ap.add_argument("--ps", default="0.9,0.99")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    spy = CountOpen(kernels.update_kernel)
    # the launcher's view of the kernels module gets the spy, the module keeps its kernel: the round kernel calls
    # update_kernel as a device function, and Triton's compiler deep-copies the globals it finds (a spy fails there)
    launch.kernels = types.SimpleNamespace(**vars(kernels))
    launch.kernels.update_kernel = spy
    results = []
    for dist in args.dists.split(","):
        for dtype in args.dtypes.split(","):
            x = make_logits(dist, args.rows, args.V, seed=3).to(device=device, dtype=getattr(torch, dtype))
            vals = x.double().cpu().numpy()
            for p in (float(v) for v in args.ps.split(",")):
                row = {"dist": dist, "dtype": dtype, "V": args.V, "rows": args.rows, "p": p}
                for name, opts in LANES.items():
                    spy.open.clear()
                    sel = qrita.select(x, None, p, backend="triton", options=opts)
                    check_selection(vals, None, p, "lowest_index", sel.threshold.double().cpu().numpy(),
                                    sel.num_ties.cpu().numpy(), sel.count.cpu().numpy())
                    row[name] = {"open_after_round": list(spy.open), "hit": int(sel.hit.sum()),
                                 "count": sel.count.cpu().tolist()}
                results.append(row)
                print(f"{dist:9s} {dtype:9s} p={p:<5} open after each round: "
                      + "  ".join(f"{n} {row[n]['open_after_round']}" for n in LANES), flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
