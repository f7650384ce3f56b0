"""One-shot GPU smoke test of the cupy backend: ``python -m qrita.backends.cupy._smoke``.

Prints one PASS/FAIL line per case (exact comparison with the sort-based oracle,
``qrita.reference``), then a summary; exits 1 if anything failed.  Meant for a
single call on the device machine, before (or instead of) the full pytest run.
``--quick`` runs a smaller set; ``--bench`` adds timings (cupy, triton, a torch sort baseline).
"""

from __future__ import annotations

import sys
import time
import traceback

import numpy as np


def _cases(quick: bool):
    """(name, B, V, maker, k, p, ties, options)."""
    rng = np.random.default_rng(1234)

    def llm(B, V):
        x = rng.standard_normal((B, V)) * 2.0
        for b in range(B):
            cols = rng.choice(V, size=min(32, V), replace=False)
            x[b, cols] += rng.uniform(8.0, 15.0, size=cols.size)
        return x

    def ints(B, V):
        return rng.integers(-3, 4, size=(B, V)).astype(np.float64)

    def special(B, V):
        x = rng.standard_normal((B, V))
        x[:, rng.choice(V, size=V // 3, replace=False)] = -np.inf
        x[0, [3, 10, 50]] = np.inf
        x[1, :] = -np.inf
        x[2, :] = np.nan
        x[3, 7] = np.inf
        x[4, :] = 1.5
        x[5, ::3] = np.nan
        return x

    def flat(B, V):
        x = np.zeros((B, V))
        x[:, :12] = 10.0
        return x

    cases = [
        ("hand-ties", 1, 5, lambda B, V: np.array([[3.0, 1.0, 2.0, 2.0, 2.0]]), 2, None, "lowest_index", {}),
        ("hand-ties-all", 1, 5, lambda B, V: np.array([[3.0, 1.0, 2.0, 2.0, 2.0]]), 2, None, "all", {}),
        ("llm k50", 8, 32000, llm, 50, None, "lowest_index", {}),
        ("llm p0.9", 8, 32000, llm, None, 0.9, "lowest_index", {}),
        ("llm k50 p0.9", 8, 32000, llm, 50, 0.9, "lowest_index", {}),
        ("llm k1", 4, 32000, llm, 1, None, "lowest_index", {}),
        ("llm p0 (top-1)", 4, 32000, llm, None, 0.0, "all", {}),
        ("ints k10", 6, 4096, ints, 10, None, "lowest_index", {}),
        ("ints k10 all", 6, 4096, ints, 10, None, "all", {}),
        ("ints p0.8", 6, 4096, ints, None, 0.8, "lowest_index", {}),
        ("ints k5 p0.6 all", 6, 4096, ints, 5, 0.6, "all", {}),
        ("special k5", 8, 1000, special, 5, None, "lowest_index", {}),
        ("special p0.5", 8, 1000, special, None, 0.5, "lowest_index", {}),
        ("special k2 p0.6 all", 8, 1000, special, 2, 0.6, "all", {}),
        ("flat k50 (miss)", 4, 512, flat, 50, None, "lowest_index", {}),
        ("flat p0.5 (miss)", 4, 512, flat, None, 0.5, "lowest_index", {}),
        ("llm k50 no-trunc", 4, 32000, llm, 50, None, "lowest_index", {"truncation": False}),
        ("llm p0.9 no-trunc", 4, 32000, llm, None, 0.9, "lowest_index", {"truncation": False}),
        ("llm k4096 p0.99", 4, 32000, llm, 4096, 0.99, "lowest_index", {}),
        ("per-row k/p", 8, 5000, ints, "rows", "rows", "lowest_index", {}),
        ("B=1 split k50", 1, 128256, llm, 50, None, "lowest_index", {}),
        ("B=1 split p0.9", 1, 128256, llm, None, 0.9, "lowest_index", {}),
        ("B=2 split k20 p0.8 all", 2, 151936, llm, 20, 0.8, "all", {}),
    ]
    if not quick:
        cases += [
            ("B=64 V=151936 k50 p0.9", 64, 151936, llm, 50, 0.9, "lowest_index", {}),
            ("B=256 V=32000 p0.95", 256, 32000, llm, None, 0.95, "lowest_index", {}),
            ("B=16 V=262144 k100", 16, 262144, llm, 100, None, "lowest_index", {}),
        ]
    return cases


def _per_row(B, V, rng):
    k = rng.integers(-5, V + 5, B)
    k[:3] = [0, V, 3]
    p = rng.uniform(-0.1, 1.1, B).astype(np.float32)
    p[:3] = [np.nan, 0.5, 1.0]
    return k, p


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    quick = "--quick" in argv
    import cupy
    import torch

    import qrita
    from qrita.reference import check_mask, check_selection

    print(
        f"qrita cupy smoke: torch {torch.__version__}, cupy {cupy.__version__}, device {torch.cuda.get_device_name(0)}"
    )
    print(f"available: {qrita.available_backends()['cupy']!r} (None = available)")
    rng = np.random.default_rng(7)
    results = []
    t_compile = time.perf_counter()
    for dtype in ("float32", "float16", "bfloat16"):
        x = torch.zeros((1, 8), device="cuda", dtype=getattr(torch, dtype))
        qrita.select(x, 1, backend="cupy")
    print(f"compile+load of 3 modules: {time.perf_counter() - t_compile:.1f}s")

    for name, B, V, maker, k, p, ties, options in _cases(quick):
        values = maker(B, V)
        for dtype in ("float32", "float16", "bfloat16"):
            for lib in ("torch", "cupy"):
                if lib == "cupy" and dtype == "bfloat16":
                    continue
                if lib == "cupy" and dtype == "float32" and B * V > 10**6:
                    continue  # keep the run short: cupy inputs are covered by the smaller cases
                label = f"{name:<26} {dtype:<9} {lib:<5}"
                t0 = time.perf_counter()
                try:
                    xt = torch.from_numpy(values).to(getattr(torch, dtype)).cuda()
                    kk, pp = k, p
                    if k == "rows":
                        kr, pr = _per_row(B, V, rng)
                        kk, pp = torch.from_numpy(kr).cuda(), torch.from_numpy(pr).cuda()
                    xin = xt if lib == "torch" else cupy.from_dlpack(xt)
                    if lib == "cupy" and not isinstance(kk, (int, type(None))):
                        kk, pp = cupy.from_dlpack(kk), cupy.from_dlpack(pp)
                    sel = qrita.select(xin, kk, pp, backend="cupy", ties=ties, options=options)
                    host = xt.double().cpu().numpy()
                    kh = kk if kk is None or isinstance(kk, int) else np.asarray(kr)
                    ph = pp if pp is None or isinstance(pp, float) else np.asarray(pr, dtype=np.float64)
                    thr = _np(sel.threshold)
                    nt, cnt = _np(sel.num_ties), _np(sel.count)
                    check_selection(host, kh, ph, ties, thr, nt, cnt)
                    out = qrita.top_k_top_p(xin, kk, pp, backend="cupy", ties=ties, options=options)
                    kept = _np(out) != -np.inf
                    check_mask(host, kh, ph, ties, kept)
                    # the scalar row scans (fast_paths off) must give the default's vectorised bits
                    slow = qrita.top_k_top_p(
                        xin, kk, pp, backend="cupy", ties=ties, options={**options, "fast_paths": False}
                    )
                    assert np.array_equal(_bits(slow), _bits(out)), "fast_paths=False changed the masked logits"
                    # split vs one block per row: bit-identical
                    if V >= 8192:
                        s1 = qrita.select(xin, kk, pp, backend="cupy", ties=ties, options={**options, "split": 1})
                        s8 = qrita.select(xin, kk, pp, backend="cupy", ties=ties, options={**options, "split": 8})
                        for f in ("threshold", "num_ties", "count"):
                            a, b = _np(getattr(s1, f)), _np(getattr(s8, f))
                            assert np.array_equal(a, b, equal_nan=True), f"split 8 != split 1 in {f}"
                    hits = int(_np(sel.hit).sum())
                    results.append((label, "PASS", f"hit {hits}/{B}", time.perf_counter() - t0))
                except Exception as exc:  # report and go on
                    msg = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
                    results.append((label, "FAIL", msg[:300], time.perf_counter() - t0))
                    if "-v" in argv:
                        traceback.print_exc()
                print(
                    " | ".join([results[-1][0], results[-1][1], f"{results[-1][3]:6.2f}s", results[-1][2]]), flush=True
                )
    failed = [r for r in results if r[1] != "PASS"]
    if "--bench" in argv:
        bench(torch, qrita)
    print(f"\n{len(results) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


def _time(fn, torch, iters=20) -> float:
    for _ in range(3):
        fn()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        fn()
    stop.record()
    torch.cuda.synchronize()
    return start.elapsed_time(stop) / iters * 1000.0  # microseconds


def bench(torch, qrita):
    """Microseconds per call of top_k_top_p (select + mask), cupy vs triton vs a torch sort baseline."""
    backends = [b for b in ("cupy", "triton") if qrita.available_backends().get(b) is None]

    def sort_baseline(x, k, p):
        logits = x.float()
        if k is not None:
            kth = torch.topk(logits, k, dim=-1).values[:, -1:]
            logits = logits.masked_fill(logits < kth, float("-inf"))
        if p is not None:
            srt, idx = torch.sort(logits, dim=-1, descending=True)
            cum = srt.softmax(-1).cumsum(-1)
            drop = (cum - srt.softmax(-1)) >= p
            logits = logits.scatter(1, idx, srt.masked_fill(drop, float("-inf")))
        return logits

    print("\nbench (us per top_k_top_p call; CUDA events, 20 iterations)")
    print(f"{'B':>5} {'V':>7} {'dtype':<9} {'k':>5} {'p':>5} " + " ".join(f"{b:>9}" for b in backends) + "  torch-sort")
    g = torch.Generator(device="cuda")
    g.manual_seed(0)
    for B, V in ((1, 128256), (8, 128256), (64, 128256), (256, 128256), (1024, 128256), (16, 262144)):
        for dtype in ("bfloat16", "float32"):
            x = (torch.randn(B, V, device="cuda", generator=g) * 2.0).to(getattr(torch, dtype))
            x[:, :32] += 10.0
            for k, p in ((50, None), (None, 0.9), (50, 0.9)):
                cols = []
                for b in backends:
                    try:
                        cols.append(
                            f"{_time(lambda x=x, k=k, p=p, b=b: qrita.top_k_top_p(x, k, p, backend=b), torch):9.1f}"
                        )
                    except Exception as exc:  # noqa: BLE001 - a backend failing here is reported, not fatal
                        cols.append(f"{'ERR':>9}")
                        print(f"  {b}: {type(exc).__name__}: {str(exc)[:200]}")
                base = _time(lambda x=x, k=k, p=p: sort_baseline(x, k, p), torch, iters=5)
                print(f"{B:>5} {V:>7} {dtype:<9} {str(k):>5} {str(p):>5} " + " ".join(cols) + f"  {base:10.1f}")


def _bits(a):
    if hasattr(a, "detach"):
        import torch

        t = a.detach().contiguous()
        return t.view(torch.int16 if t.element_size() == 2 else torch.int32).cpu().numpy()
    return a.view(f"uint{a.itemsize * 8}").get()


def _np(a):
    if hasattr(a, "detach"):
        t = a.detach().cpu()
        return t.double().numpy() if t.is_floating_point() else t.numpy()
    if hasattr(a, "get"):
        h = a.get()
        return h.astype(np.float64) if h.dtype.kind == "f" else h
    return np.asarray(a)


if __name__ == "__main__":
    sys.exit(main())
