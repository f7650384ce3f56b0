"""Session 18, call B: programmatic dependent launch (option pdl: 1 waits, 2 also lets the next kernel launch
early; the same bits) from B=1 to B=1024.

    python3 opt18b.py OUT.json [budget_s] [--warm I/N]

As ``opt18.py``.  Run from the repository root.
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
PDL = [{}, dict(pdl=1), dict(pdl=2)]
GROUPS = [
    ([("llm", F32, 1, V, 50, None, "select"), ("llm", F32, 1, V, 50, None, "masked"),
      ("gauss", F32, 1, V, 50, None, "select"), ("zipf", F32, 1, V, 50, None, "select"),
      ("llm", F32, 1, V, 100, 0.9, "select"), ("llm", F32, 1, V, None, 0.9, "select"),
      ("llm", F32, 1, V, None, 0.9, "masked"), ("llm", F32, 16, V, 50, None, "select"),
      ("llm", F32, 64, V, 50, None, "select"), ("llm", F32, 64, V, 100, 0.9, "masked"),
      ("llm", F32, 64, 151936, 100, 0.9, "sample"), ("llm", F32, 1024, V, 50, None, "select"),
      ("llm", F32, 1024, V, 50, None, "masked"), ("gauss", F32, 1024, V, None, 0.9, "select")], PDL),
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
