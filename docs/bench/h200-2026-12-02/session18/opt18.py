"""Session 18, call A: L2 reuse between the passes over a wave (options mask_reverse, tie_reverse,
round_alternate, wave_rows; the same bits).

    python3 opt18.py OUT.json [budget_s] [--warm I/N]

As ``session17/opt17.py``: each group's cases are timed (CUDA-graph medians of 20 chained calls) with the
group's option sets injected into every Triton request; ``same``: the bits of the default (``select``:
threshold, count, ties; ``masked``, out of place: the output row).  Run from the repository root.
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

F32, BF16 = torch.float32, torch.bfloat16
V = 131072
REV = dict(mask_reverse=True)
GROUPS = [
    ([(d, F32, 1024, V, 50, None, "masked") for d in ("gauss", "llm", "zipf")]
     + [("llm", F32, 1024, V, 100, 0.9, "masked"), ("llm", F32, 1024, V, None, 0.9, "masked")],
     [{}, REV, dict(REV, wave_rows=192), dict(REV, wave_rows=96), dict(wave_rows=96)]),
    ([(d, BF16, 1024, V, 50, None, "masked") for d in ("gauss", "llm")],
     [{}, REV, dict(tie_reverse=True), dict(REV, tie_reverse=True), dict(tie_reverse=True, wave_rows=192),
      dict(tie_reverse=True, wave_rows=96)]),
    ([(d, F32, 1024, V, None, 0.9, "select") for d in ("gauss", "zipf")],
     [{}, dict(round_alternate=True), dict(round_alternate=True, wave_rows=128)]),
    ([("gauss", F32, 1024, V, None, 0.9, "masked")], [{}, dict(round_alternate=True, mask_reverse=True)]),
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
