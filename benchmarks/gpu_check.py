"""GPU smoke check of a qrita backend: exactness at real shapes, then quick graph timings.

Usage (device machine):  PYTHONPATH=. python3 benchmarks/gpu_check.py --backend triton --out $OUT/check.json

This is a developer probe that prints a compact table; the committed numbers
come from ``qrita bench`` (``qrita/bench``).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

import qrita
from qrita.reference import check_mask, check_selection


def make_logits(dist: str, B: int, V: int, dtype, seed: int = 0) -> torch.Tensor:
    g = torch.Generator(device="cuda").manual_seed(seed)
    if dist in ("zipf", "zipf13"):  # exponent 1.1, or 1.3 (lighter tail: ~1300 entries hold 90% of the mass)
        ranks = torch.rand(B, V, device="cuda", generator=g).argsort(dim=1).float() + 1.0
        x = (-1.1 if dist == "zipf" else -1.3) * torch.log(ranks)
    elif dist == "gauss":
        x = torch.randn(B, V, device="cuda", generator=g)
    elif dist == "llm":
        x = torch.randn(B, V, device="cuda", generator=g) * 2.0
        idx = torch.randint(0, V, (B, 20), device="cuda", generator=g)
        x.scatter_(1, idx, 12.0 + 4.0 * torch.rand(B, 20, device="cuda", generator=g))
    elif dist == "sharp":  # Gaussian logits at a low temperature (sigma 6): the top-p mass sits in a few entries
        x = torch.randn(B, V, device="cuda", generator=g) * 6.0
    elif dist == "lowtemp":
        x = torch.randn(B, V, device="cuda", generator=g)
        x[:, 7] = 80.0
    elif dist == "grammar":
        x = torch.randn(B, V, device="cuda", generator=g)
        keep = torch.rand(B, V, device="cuda", generator=g) < 0.01
        x = torch.where(keep, x, torch.full_like(x, float("-inf")))
    elif dist in ("hllm", "hzipf", "hgauss"):  # the harness's own generators (qrita.bench.inputs)
        from qrita.bench.inputs import make_logits as harness_logits

        x = harness_logits({"hllm": "llm", "hzipf": "zipf", "hgauss": "gaussian"}[dist], B, V, device="cuda", seed=seed)
    elif dist == "ties":
        x = torch.randint(-4, 4, (B, V), device="cuda", generator=g).float()
    else:
        raise ValueError(dist)
    return x.to(dtype)


SCENARIOS = {
    "k50": (50, None),
    "k1000": (1000, None),
    "p0.9": (None, 0.9),
    "p0.5": (None, 0.5),
    "k100p0.9": (100, 0.9),
}


def mixed(B: int):
    k = torch.tensor([[50, 0, 100, 0][i % 4] for i in range(B)], device="cuda")
    p = torch.tensor([[1.0, 0.9, 0.8, 1.0][i % 4] for i in range(B)], device="cuda")
    return k, p


def check(backend: str, x: torch.Tensor, k, p, ties: str, rows: int = 6, options=None):
    sel = qrita.select(x, k, p, backend=backend, ties=ties, options=options)
    B = x.shape[0]
    pick = sorted(set([0, B - 1] + list(range(0, B, max(1, B // rows)))))[: rows + 2]
    vals = x[pick].double().cpu().numpy()
    kk = k if k is None or isinstance(k, int) else k[pick].cpu().numpy()
    pp = p if p is None or isinstance(p, float) else p[pick].cpu().numpy()
    check_selection(vals, kk, pp, ties, sel.threshold[pick].double().cpu().numpy(),
                    sel.num_ties[pick].cpu().numpy(), sel.count[pick].cpu().numpy())
    out = qrita.top_k_top_p(x, k, p, backend=backend, ties=ties, options=options)
    o = out[pick].double().cpu().numpy()
    check_mask(vals, kk, pp, ties, o != -np.inf)
    hit = sel.hit.float().mean().item() if sel.hit is not None else float("nan")
    return hit


def failing_rows(x: torch.Tensor, k, p, sel, rows=None) -> tuple[list[int], str]:
    """The rows (all, or those listed) whose answer in ``sel`` is outside SPEC, by batch index, and
    the oracle's message for the first of them: one oracle pass over the rows, then row by row only
    when something fails."""
    r = list(range(x.shape[0])) if rows is None else [int(i) for i in rows]

    def error(idx) -> str:
        try:
            check_selection(x[idx].double().cpu().numpy(), k, p, "lowest_index",
                            sel.threshold[idx].double().cpu().numpy(), sel.num_ties[idx].cpu().numpy(),
                            sel.count[idx].cpu().numpy())
        except AssertionError as exc:
            return str(exc)
        return ""

    if not r or not error(r):
        return [], ""
    errors = {b: error([b]) for b in r}
    bad = [b for b, e in errors.items() if e]
    return bad, errors[bad[0]] if bad else ""


def graph_time(fn, iters: int = 20, reps: int = 5) -> float:
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(iters):
            fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / iters)
    return float(np.median(times))


def copy_bandwidth_tbps() -> float:
    """Device-to-device copy bandwidth (bytes read + written per second), in TB/s."""
    src = torch.empty(1 << 28, dtype=torch.float32, device="cuda").normal_()
    dst = torch.empty_like(src)
    return src.numel() * 8 / (graph_time(lambda: dst.copy_(src), iters=5) * 1e-6) / 1e12


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="triton")
    ap.add_argument("--out", default="check.json")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--budget-s", type=float, default=1e9, help="stop starting new timing cases after this")
    ap.add_argument("--options", type=json.loads, default=None, help="backend options as JSON, for every check")
    args = ap.parse_args()
    opts = args.options or {}
    report = {"backend": args.backend, "options": opts, "gpu": torch.cuda.get_device_name(),
              "torch": torch.__version__, "rows": []}
    t0 = time.time()
    # --- exactness ----------------------------------------------------------------------------
    fails = 0
    n = 0
    shapes = [(4, 32000), (64, 128256), (2, 262144), (1, 151936)] if not args.quick else [(64, 128256), (2, 262144)]
    for (B, V) in shapes:
        for dt in (torch.float32, torch.bfloat16, torch.float16):
            for dist in ("zipf", "gauss", "llm", "lowtemp", "grammar", "ties"):
                for sname, (k, p) in list(SCENARIOS.items()) + [("mixed", mixed(B))]:
                    for ties in ("lowest_index", "all"):
                        if (ties == "all") and dist not in ("ties", "zipf"):
                            continue
                        x = make_logits(dist, B, V, dt, seed=n)
                        n += 1
                        try:
                            hit = check(args.backend, x, k, p, ties, options=opts or None)
                            status = "ok"
                        except Exception as exc:  # noqa: BLE001
                            fails += 1
                            hit, status = float("nan"), f"FAIL {type(exc).__name__}: {str(exc)[:300]}"
                            print(B, V, dt, dist, sname, ties, status, flush=True)
                        report["rows"].append(dict(kind="check", B=B, V=V, dtype=str(dt), dist=dist, scenario=sname,
                                                   ties=ties, status=status, hit=hit))
    # forced misses and the largest shape (B*V > 2**31, bf16)
    for dt in (torch.float32, torch.bfloat16):
        x = make_logits("zipf", 8, 131072, dt, seed=123)
        for k, p in ((50, None), (None, 0.9), (100, 0.9)):
            try:
                check(args.backend, x, k, p, "lowest_index", options={**opts, "truncation": False})
            except Exception as exc:  # noqa: BLE001
                fails += 1
                print("forced miss", dt, k, p, "FAIL", str(exc)[:300], flush=True)
            n += 1
    try:
        big = make_logits("llm", 8200, 262144, torch.bfloat16, seed=5)
        check(args.backend, big, 50, 0.9, "lowest_index", rows=3, options=opts or None)
        del big
    except Exception as exc:  # noqa: BLE001
        fails += 1
        print("B*V>2^31 FAIL", str(exc)[:300], flush=True)
    n += 1
    torch.cuda.empty_cache()
    print(f"exactness: {n - fails}/{n} passed in {time.time() - t0:.0f}s", flush=True)
    report["exact_pass"], report["exact_total"] = n - fails, n

    # --- quick timings --------------------------------------------------------------------------
    bw = copy_bandwidth_tbps()
    report["copy_TBps"] = bw
    print(f"copy bandwidth {bw:.2f} TB/s")
    print(f"{'case':40s} {'qrita sel':>10s} {'qrita mask':>10s} {'x roof':>7s} {'sort':>9s} {'topk':>9s}")
    for dist in ("zipf", "gauss", "llm"):
        for dt in (torch.float32, torch.bfloat16):
            for B in ((1, 64, 1024) if not args.quick else (1, 1024)):
                V = 131072
                for sname, (k, p) in SCENARIOS.items():
                    if sname in ("k1000", "p0.5") and B != 1024:
                        continue
                    if time.time() - t0 > args.budget_s:
                        continue
                    x0 = make_logits(dist, B, V, dt, seed=7)
                    x = x0.clone()
                    try:
                        t_sel = graph_time(lambda: qrita.select(x, k, p, backend=args.backend))
                        t_mask = graph_time(lambda: (x.copy_(x0), qrita.top_k_top_p(x, k, p, backend=args.backend,
                                                                                    inplace=True)))
                        t_copy = graph_time(lambda: x.copy_(x0))
                        t_mask -= t_copy
                    except Exception as exc:  # noqa: BLE001
                        print("timing failed", dist, dt, B, sname, str(exc)[:200])
                        continue

                    def sort_mask():
                        v, i = x0.float().sort(dim=1, descending=True)
                        if k is not None:
                            v[:, k:] = float("-inf")
                        if p is not None:
                            c = v.softmax(dim=1).cumsum(dim=1)
                            v = v.masked_fill((c - v.softmax(dim=1)) > p, float("-inf"))
                        return torch.empty_like(v).scatter_(1, i, v)

                    t_sort = graph_time(sort_mask, iters=3, reps=3) if sname == "k50" else float("nan")
                    t_topk = float("nan")
                    if sname == "k50":
                        t_topk = graph_time(lambda: x0.topk(k, dim=1), iters=5, reps=3)
                    bytes_rw = B * V * x.element_size() * 2
                    roof = bytes_rw / (bw * 1e12) * 1e6
                    name = f"{dist} {str(dt)[6:]} B={B} {sname}"
                    print(f"{name:40s} {t_sel:10.1f} {t_mask:10.1f} {t_mask / roof:7.2f} {t_sort:9.1f} {t_topk:9.1f}",
                          flush=True)
                    report["rows"].append(dict(kind="time", dist=dist, dtype=str(dt), B=B, V=V, scenario=sname,
                                               select_us=t_sel, mask_us=t_mask, roof_us=roof, sort_us=t_sort,
                                               topk_us=t_topk))
                    with open(args.out, "w") as f:
                        json.dump(report, f, indent=1)
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
