"""Where the split path's finish (finish_split_kernel, one block a row) spends its 21-49 us at B = 1 and 4
(session 44 call 5: Triton's finish and round kernels take 7-13 us for the same rows).  Per-kernel times
(torch.profiler, benchmarks/profile_triton.py) of Numba `select`, fp32, V = 131072, for requests whose finish
does less and less: k100+p0.9 (a top-k search, a mass pass, a top-p search), top-k 50 (rank_select over about
130 candidates), top-k 1, and p = 0 (no candidates, no search: the kernel's fixed cost: launch, combine_parts,
the outputs), each with the automatic split (16 blocks a row) and with 4 (combine_parts over 4 partials), and
top-k 50 / k100+p0.9 with rank_select off (3-pivot rounds).
    PYTHONPATH=. python3 docs/bench/next-session44/probe_finish.py [combine_warps=0|1]   (repository root, GPU)
The argument sets kernels.COMBINE_WARPS before the first launch where the tree has it (2bcb360, session 44's call 7;
main kept the warp-aggregated combine alone after it, without the flag)."""
import sys

sys.path.insert(0, "benchmarks")
import torch  # noqa: E402
from profile_triton import make_logits, profile  # noqa: E402

from qrita.backends.numba import kernels  # noqa: E402

for arg in sys.argv[1:]:
    name, value = arg.split("=")
    if name == "combine_warps" and hasattr(kernels, "COMBINE_WARPS"):
        kernels.COMBINE_WARPS = bool(int(value))
print(f"COMBINE_WARPS = {getattr(kernels, 'COMBINE_WARPS', 'absent')}", flush=True)
CASES = [("k100p0.9", 100, 0.9), ("k50", 50, None), ("k1", 1, None), ("p0", None, 0.0)]
for B in (1, 4):
    x0 = make_logits("hgauss", B, 131072, torch.float32)
    for name, k, p in CASES:
        variants = [{}, {"split": 4}]
        if name in ("k50", "k100p0.9"):
            variants.append({"rank_select": False})
        for opts in variants:
            totals = profile(x0, k, p, opts, "select", reps=10, backend="numba")
            fin = sum(us for kname, (us, _n) in totals.items() if "finish" in kname)
            print(f"== B={B} {name} {opts}: total {sum(us for us, _ in totals.values()):.1f} us, finish {fin:.1f}",
                  flush=True)
