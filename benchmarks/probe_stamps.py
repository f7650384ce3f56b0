"""Where the Numba split path's time goes inside its kernels: phase times that the kernels themselves record.

A probe build (``kernels.STAMPS``, set here before anything compiles) has thread 0 of each block of
``scan_split_kernel``, ``finish_split_kernel`` and ``mask_kernel`` write ``%globaltimer`` (ns, one clock for the
GPU) and ``%clock64`` (its SM's cycles) at its phases' ends (``kernels.stamp``); ``launch.PROBE_STAMPS`` hands the
arrays over.  One masking in place, captured in a CUDA graph and replayed ``--reps`` times (the logits restored
before each replay, outside the graph); per replay:

- scan: the cut (sample passes, from the block's start to its cut) and the stream (the rest), cycles a block;
- finish: partials combined, candidates loaded, search, tie index, cycles a row; inside the search, finish_row's
  setup, rank_select's packing, ranking and reading of its answer (sub-stamps; a row that takes pivot rounds first
  counts them in the packing);
- mask: the cut settled, the body, cycles a block; its blocks' count;
- spans (globaltimer, first block's start to last block's end) of each kernel, and the gaps between them
  (scan's end to finish's start, finish's end to mask's start: launches, and the count kernel where it runs);
- GHz: a block's cycles over its globaltimer span (how cycles convert to time);

medians over the replays of each block statistic (the median block and the slowest).  Not a timing of the call:
the stamps cost a few global stores a block.

    PYTHONPATH=. python3 benchmarks/probe_stamps.py OUT.json [--B 64] [--dtypes float32,bfloat16] \\
        [--cases k50,k100p0.9,p0.9] [--dist llm] [--options '{}' --options '{"mask_counts": false}']
    NUMBA_ENABLE_CUDASIM=1 python3 benchmarks/probe_stamps.py OUT.json --dry    (CPU: the plumbing only)
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np
import torch

from qrita.backends.numba import kernels, launch

kernels.STAMPS = True  # before any kernel compiles: the stamps code is compiled in
launch.PROBE_STAMPS = {}

import qrita  # noqa: E402
from qrita.bench.inputs import make_logits  # noqa: E402

CASES = {"k50": (50, None), "k100p0.9": (100, 0.9), "p0.9": (None, 0.9)}
SLOTS = {"scan": ("start", "cut", "end"), "finish": ("start", "combined", "loaded", "searched", "end"),
         "mask": ("start", "settled", "end")}
# finish_split_kernel's sub-stamps (kernels.sub_stamp), each counted from the one before (the first from the
# candidates loaded): finish_row's start, rank_select's packing, ranking, and reading of the answer
SUB_POINTS = ("row_setup", "rank_packed", "ranked", "rank_read")


def host(a) -> np.ndarray:
    return np.asarray(a.copy_to_host())


def phases(stamps: dict[str, np.ndarray]) -> dict:
    """One call's statistics from its stamps (every kernel's array: a row a block, (ns, cycles) a slot)."""
    out: dict = {}
    ends = {}
    for name, slots in SLOTS.items():
        if name not in stamps:
            continue
        a = stamps[name]
        ns = a[:, 0:2 * len(slots):2]
        cyc = a[:, 1:2 * len(slots):2]
        live = ns[:, -1] > 0  # blocks that wrote their stamps (every block does)
        ns, cyc = ns[live], cyc[live]
        out[f"{name}_blocks"] = int(live.sum())
        out[f"{name}_span_ns"] = int(ns[:, -1].max() - ns[:, 0].min())
        ends[name] = (int(ns[:, 0].min()), int(ns[:, -1].max()))
        for j in range(1, len(slots)):
            d = cyc[:, j] - cyc[:, j - 1]
            out[f"{name}_{slots[j]}_cyc_med"] = int(np.median(d))
            out[f"{name}_{slots[j]}_cyc_max"] = int(d.max())
        if name == "finish":  # the sub-stamps inside its search: cycles from the previous point
            sub = a[live][:, 2 * kernels.STAMP_SLOTS - kernels.STAMP_SUB:]
            prev = cyc[:, 2]  # candidates loaded
            for j, point in enumerate(SUB_POINTS):
                got = sub[:, j] > 0
                if got.any():
                    d = sub[got, j] - prev[got]
                    out[f"finish_{point}_cyc_med"] = int(np.median(d))
                    out[f"finish_{point}_cyc_max"] = int(d.max())
                    prev = np.where(got, sub[:, j], prev)
        total_ns = ns[:, -1] - ns[:, 0]
        ok = total_ns > 0
        if ok.any():
            out[f"{name}_ghz"] = round(float(np.median((cyc[ok, -1] - cyc[ok, 0]) / total_ns[ok])), 3)
    if "scan" in ends and "finish" in ends:
        out["gap_scan_finish_ns"] = ends["finish"][0] - ends["scan"][1]
    if "finish" in ends and "mask" in ends:
        out["gap_finish_mask_ns"] = ends["mask"][0] - ends["finish"][1]
    if "scan" in ends and "mask" in ends:
        out["scan_start_to_mask_end_ns"] = ends["mask"][1] - ends["scan"][0]
    return out


def probe(x0: torch.Tensor, k, p, options: dict, reps: int, dry: bool) -> dict:
    """Medians over ``reps`` replays (calls under ``dry``) of :func:`phases`."""
    x = x0.clone()

    def call():
        qrita.top_k_top_p(x, k, p, backend="numba", inplace=True, options=options)

    rows = []
    if dry:
        for _ in range(reps):
            x.copy_(x0)
            launch.PROBE_STAMPS.clear()
            call()
            rows.append(phases({n: host(a) for n, a in launch.PROBE_STAMPS.items()}))
    else:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # compile and warm up off the default stream
            for _ in range(2):
                x.copy_(x0)
                call()
        torch.cuda.current_stream().wait_stream(side)
        x.copy_(x0)
        torch.cuda.synchronize()
        launch.PROBE_STAMPS.clear()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            call()
        arrays = dict(launch.PROBE_STAMPS)  # the captured launches' arrays: every replay writes them
        for _ in range(reps):
            x.copy_(x0)
            graph.replay()
            torch.cuda.synchronize()
            rows.append(phases({n: host(a) for n, a in arrays.items()}))
    keys = sorted({key for r in rows for key in r})
    return {key: statistics.median(r[key] for r in rows if key in r) for key in keys}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--B", type=int, default=64)
    ap.add_argument("--V", type=int, default=131072)
    ap.add_argument("--dist", default="llm")
    ap.add_argument("--dtypes", default="float32,bfloat16")
    ap.add_argument("--cases", default="k50")
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--options", action="append", default=None)
    ap.add_argument("--dry", action="store_true", help="under NUMBA_ENABLE_CUDASIM=1: small rows, eager calls")
    args = ap.parse_args()
    if args.dry:
        args.B, args.V, args.reps = 2, 3000, 2
    dev = "cpu" if args.dry else "cuda"
    dtypes = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
    with open(args.out, "a") as out:
        for dtype in args.dtypes.split(","):
            x = make_logits(args.dist, args.B, args.V, device=dev, seed=0).to(dtypes[dtype])
            for case in args.cases.split(","):
                k, p = CASES[case]
                for opt_text in args.options or ["{}"]:
                    options = json.loads(opt_text)
                    if args.dry:
                        options.setdefault("split", 3)  # the simulator's automatic split is 1: take the split path
                    row = dict(dist=args.dist, dtype=dtype, B=args.B, V=args.V, case=case, options=options,
                               **probe(x, k, p, options, args.reps, args.dry))
                    print(json.dumps(row), flush=True)
                    out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
