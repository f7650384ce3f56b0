"""Per-kernel times (torch.profiler, benchmarks/profile_triton.py) of Numba's and Triton's `select` at B=1 and 4,
V=131072, fp32: top-k 50, k100+p0.9 and top-p 0.9 on Gaussian and LLM-like rows.  Why: session 44's call 3 had
Numba's k100+p0.9 at B=1 2.3-2.7x Triton's (Gaussian 61.6 against 20.4 us `select`), top-k 50 1.6-2.0x.
    PYTHONPATH=. python3 docs/bench/next-session44/profile_small_b.py   (repository root, GPU)"""
import sys

sys.path.insert(0, "benchmarks")
import torch  # noqa: E402
from profile_triton import SCENARIOS, make_logits, profile  # noqa: E402

for B in (1, 4):
    for dist in ("hgauss", "hllm"):  # the harness's Gaussian and LLM-like rows
        x0 = make_logits(dist, B, 131072, torch.float32)
        for case in ("k50", "k100p0.9", "p0.9"):
            k, p = SCENARIOS[case]
            for backend in ("numba", "triton"):
                totals = profile(x0, k, p, {}, "select", reps=5, backend=backend)
                print(f"== {backend} select fp32 {dist} {case} B={B}: total "
                      f"{sum(us for us, _ in totals.values()):.1f} us", flush=True)
                for name, (us, n) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
                    print(f"   {name:40s} {us:8.1f}  ({n})")
