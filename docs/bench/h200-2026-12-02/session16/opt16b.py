"""Session 16, call B: the sampler at B=64 and 1024 with the pick of a row drawn from the row in the launch of its
parts (``fold_pick``, the new default) against a launch of its own, and the slot draw in the slot tie kernel
(``fuse_draw``) once more.

    python3 opt16b.py OUT.json [budget_s]

Rows as in ``session11/opt.py`` (CUDA-graph medians; ``same``: the default's tokens).  Run from the repository root.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "h200-2026-12-01",
                                "session12"))
import torch  # noqa: E402
from opt12 import run_groups  # noqa: E402

F32 = torch.float32
SETS = [{}, dict(fold_pick=False), dict(fuse_draw=True)]
GROUPS = [
    ([("llm", F32, 64, V, k, p, "sample") for k, p in ((100, 0.9), (50, None)) for V in (151936, 128256)], SETS),
    ([("llm", F32, 1024, 151936, 100, 0.9, "sample")], SETS[:2]),
]

if __name__ == "__main__":
    run_groups(GROUPS, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150)
