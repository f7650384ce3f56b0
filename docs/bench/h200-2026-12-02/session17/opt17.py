"""Session 17, call B: the small-batch launch chain (issue 3's B=1 targets) and the finish's warps.

    python3 opt17.py OUT.json [budget_s] [--warm I/N]

Each group's cases are timed (CUDA-graph medians of 20 chained calls, ``gpu_check.graph_time``) with the
group's option sets, injected into every Triton request as ``session11/opt.py`` does; ``same``: the bits of
the default (``select``: threshold, count, ties; masked: the output row; ``sample``: the tokens).
``--warm I/N`` runs part I of N of the (case, option set) pairs once, untimed, to fill Triton's cache
from several processes before one timing process runs.  Run from the repository root.
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "h200-2026-12-01",
                                "session11"))
import opt  # noqa: E402  (installs the option injection; opt.OPTS)
import torch  # noqa: E402
from ab import digest  # noqa: E402
from gpu_check import graph_time, make_logits  # noqa: E402

import qrita  # noqa: E402

F32 = torch.float32
V = 131072
SW = [{}, dict(search_warps=4), dict(search_warps=2), dict(search_warps=1), dict(search_warps=4, reg_cap=2048),
      dict(search_warps=2, reg_cap=1024), dict(search_warps=1, reg_cap=512)]
SMALL = SW + [dict(row_rounds=True), dict(span=2048, span_cap=128), dict(round_warps=4),
              dict(search_warps=2, row_rounds=True)]
MISS = [dict(truncation=False), dict(truncation=False, row_rounds=True), dict(truncation=False, search_warps=2)]
GROUPS = [
    ([("llm", F32, 1, V, 50, None, m) for m in ("select", "masked")]
     + [("zipf", F32, 1, V, 50, None, "select"), ("gauss", F32, 1, V, 50, None, "select"),
        ("llm", F32, 1, V, 100, 0.9, "select"), ("llm", F32, 1, V, 100, 0.9, "masked")], SMALL),
    ([("llm", F32, 1, V, 50, None, "select"), ("llm", F32, 1, V, 100, 0.9, "select")], MISS),
    ([("llm", F32, 1, V, None, 0.9, "select"), ("gauss", F32, 1, V, None, 0.9, "select"),
      ("llm", F32, 16, V, 50, None, "select"), ("llm", F32, 16, V, 100, 0.9, "select"),
      ("llm", F32, 64, V, 50, None, "select"), ("llm", F32, 64, V, 100, 0.9, "select"),
      ("llm", F32, 64, 128256, 50, None, "sample"), ("llm", F32, 64, 151936, 100, 0.9, "sample")], SW),
    ([("llm", F32, 1024, V, 50, None, "select"), ("llm", F32, 1024, V, 100, 0.9, "select"),
      ("gauss", F32, 1024, V, None, 0.9, "select"), ("llm", F32, 1024, 151936, 100, 0.9, "sample")], SW[:3] + SW[4:5]),
]


def call(mode, x, k, p, seeds):
    if mode == "sample":
        return digest(qrita.sample(x, k=k, p=p, seeds=seeds, backend="triton")), \
            lambda: qrita.sample(x, k=k, p=p, seeds=seeds, backend="triton")
    if mode == "masked":
        return digest(qrita.top_k_top_p(x, k, p, backend="triton")), \
            lambda: qrita.top_k_top_p(x, k, p, backend="triton")
    s = qrita.select(x, k, p, backend="triton")
    return digest(s.threshold, s.count, s.num_ties), lambda: qrita.select(x, k, p, backend="triton")


def main() -> None:
    out, budget = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150
    warm = sys.argv[sys.argv.index("--warm") + 1].split("/") if "--warm" in sys.argv else None
    res, t0, n = [], time.time(), -1
    for cases, sets in GROUPS:
        for dist, dt, B, v, k, p, mode in cases:
            x = make_logits(dist, B, v, dt, seed=3)
            seeds = torch.arange(B, device="cuda", dtype=torch.int64)
            ref = None
            for o in sets:
                n += 1
                if warm and n % int(warm[1]) != int(warm[0]):
                    continue
                if time.time() - t0 > budget:
                    break
                opt.OPTS.clear()
                opt.OPTS.update(o)
                try:
                    h, fn = call(mode, x, k, p, seeds)
                    if warm:
                        continue
                    ref = ref or h
                    row = dict(dist=dist, B=B, V=v, k=k, p=p, mode=mode, opts=o, us=round(graph_time(fn), 1),
                               same=h == ref)
                except Exception as exc:  # noqa: BLE001 - a probe: report and go on
                    row = dict(dist=dist, B=B, V=v, k=k, p=p, mode=mode, opts=o,
                               error=f"{type(exc).__name__}: {exc}"[:300])
                res.append(row)
                print(row, f"t={time.time() - t0:.0f}", flush=True)
    opt.OPTS.clear()
    with open(out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
