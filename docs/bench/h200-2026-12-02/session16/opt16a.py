"""Session 16, call A: the sixteenth session's new defaults against their options off, where launches bound the
time (the sampler and ``select`` at B=64), and at B=1024: all row-mode miss rounds in one launch (``row_loop``), the
slot draw in the slot tie kernel (``fuse_draw``), the row tie pick in the tie count launch (``fold_ties``), all
three off (the fifteenth session's launches); and one atomic a thread and block for the slot appends
(``append_agg=256``), never measured at B=64.

    python3 opt16a.py OUT.json [budget_s]

Rows as in ``session11/opt.py`` (CUDA-graph medians; ``same``: the default's tokens or bits).  Run from the
repository root.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "h200-2026-12-01",
                                "session12"))
import torch  # noqa: E402
from opt12 import run_groups  # noqa: E402

F32 = torch.float32
OLD = dict(row_loop=False, fuse_draw=False, fold_ties=False)
B64 = [{}, OLD, dict(row_loop=False), dict(fuse_draw=False), dict(fold_ties=False), dict(append_agg=256)]
GROUPS = [
    ([("llm", F32, 64, V, k, p, "sample") for k, p in ((100, 0.9), (50, None)) for V in (151936, 128256)], B64),
    ([("llm", F32, 64, 131072, 50, None, "select"), ("llm", F32, 1024, 131072, 50, None, "select")],
     [{}, dict(row_loop=False)]),
    ([("llm", F32, 1024, 151936, 100, 0.9, "sample")], [{}, OLD]),
]

if __name__ == "__main__":
    run_groups(GROUPS, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150)
