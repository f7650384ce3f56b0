"""Per-kernel times (torch.profiler, benchmarks/profile_triton.py) of Numba's bf16 masking, LLM-like top-k 50,
at B=64 and 16 with the cut-index segments off / CUT_SPLIT_BLOCKS 4 / 64, and its select at B=64.
    PYTHONPATH=. python3 docs/bench/next-session43/profile_cut.py   (repository root, GPU)"""
import sys

sys.path.insert(0, "benchmarks")
import torch  # noqa: E402
from profile_triton import make_logits, profile  # noqa: E402

from qrita.backends.numba import launch  # noqa: E402

for B in (64, 16):
    x0 = make_logits("llm", B, 131072, torch.bfloat16)
    for blocks in (0, 4, 64):
        launch.CUT_SPLIT_BLOCKS = max(blocks, 1)
        for mode in ("masked", "select") if blocks == 0 else ("masked",):
            totals = profile(x0, 50, None, {"cut_split": blocks > 0}, mode, reps=5, backend="numba")
            print(f"== numba {mode} bf16 llm k50 B={B} blocks={blocks}: total "
                  f"{sum(us for us, _ in totals.values()):.1f} us")
            for name, (us, n) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
                print(f"   {name:40s} {us:8.1f}  ({n})")
