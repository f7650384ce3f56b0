"""next/triton-b1: the option chain_rounds (the folded miss rounds of a wave in one launch) against the
default (one launch a round), CUDA-graph medians, V = 131072, B = 1 and 16, fp32 and bf16, select and
masked in place, the harness's inputs (qrita.bench.inputs.make_logits, seed 0), top-k 50 (and k100+p0.9
at B=1, and forced misses: truncation off).  The two variants are timed alternately (A B A B) and every
answer is compared bit for bit (select: threshold, num_ties, count, hit; masked: the output's bits).
One JSON line a case is appended to OUT.json as it is measured.

    python3 ab.py OUT.json            (from the repository root, on the GPU)
    python3 ab.py OUT.json --dry      (CPU under TRITON_INTERPRET=1: small V, bits only, no timing)
"""

import json
import statistics
import sys

import torch

import qrita
from qrita.bench.inputs import make_logits

DRY = "--dry" in sys.argv
DEV = "cpu" if DRY else "cuda"
V = 2048 if DRY else 131072
INNER = 10
VARIANTS = {"default": {}, "chain": {"chain_rounds": True}}
# dist, B, dtype, k, p, masked, extra options (both variants)
CASES = [
    (d, B, dt, 50, None, m, {})
    for B in (1, 16)
    for dt in ("float32", "bfloat16")
    for m in (False, True)
    for d in ("llm", "gaussian", "zipf")
]
CASES += [
    ("llm", 1, "float32", 100, 0.9, False, {}),
    ("llm", 1, "float32", 100, 0.9, True, {}),
    ("llm", 1, "float32", 50, None, False, {"truncation": False}),
    ("llm", 16, "float32", 50, None, False, {"truncation": False}),
    ("zipf", 1, "bfloat16", 50, None, True, {"truncation": False}),
]
if DRY:
    CASES = [c for c in CASES if c[0] == "llm"][:4] + CASES[-3:]


def op(k, p, masked, options):
    if masked:
        return lambda t: qrita.top_k_top_p(t, k, p, backend="triton", options=options, inplace=True)
    return lambda t: qrita.select(t, k, p, backend="triton", options=options)


def answer(fn, masked, x):
    t = x.clone()
    r = fn(t)
    if masked:
        return [t.view(torch.int32 if t.dtype == torch.float32 else torch.int16).cpu()]
    return [r.threshold.float().cpu(), r.num_ties.cpu(), r.count.cpu(), r.hit.cpu()]


def timed(fn, masked, x):
    """CUDA-graph median (us a call) of fn(buffer); masked: each captured call on its own copy, restored
    before each replay (untimed)."""
    bufs = [x.clone() for _ in range(INNER)] if masked else [x] * INNER
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for b in bufs[:2]:
            fn(b)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for b in bufs:
            fn(b)
    times = []
    for _ in range(7):
        if masked:
            for b in bufs:
                b.copy_(x)
        a, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        e.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(e) * 1e3 / INNER)
    return statistics.median(times)


def main():
    out = open(sys.argv[1], "a")
    for dist, B, dtype, k, p, masked, extra in CASES:
        x = make_logits(dist, B, V, device=DEV, seed=0).to(getattr(torch, dtype))
        fns = {name: op(k, p, masked, dict(extra, **o)) for name, o in VARIANTS.items()}
        ans = {name: answer(fn, masked, x) for name, fn in fns.items()}
        same = all(torch.equal(a, b) for a, b in zip(ans["default"], ans["chain"], strict=True))
        row = dict(dist=dist, B=B, dtype=dtype, k=k, p=p, masked=masked, options=extra, same_bits=same)
        if not masked:
            row["hit_rows"] = int(ans["default"][3].sum())
        if not DRY:
            t = {name: [] for name in fns}
            for _ in range(2):  # A B A B
                for name, fn in fns.items():
                    t[name].append(timed(fn, masked, x))
            row.update({name: round(min(v), 2) for name, v in t.items()}, runs=t)
            row["chain_minus_default"] = round(row["chain"] - row["default"], 2)
        print(json.dumps(row), flush=True)
        out.write(json.dumps(row) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
