"""Session 15, call B: option A/B of the sampler and ``select`` where the search rounds or the span pass bound
the time: wider pivots in the one-program searches (``num_pivots`` 7 / 15: 3 / 4 bits of key a round instead of
2), four-warp span programs, longer span blocks, the cut's own launch.

    python3 opt15.py OUT.json [budget_s]

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
B64 = [{}, dict(num_pivots=7), dict(num_pivots=15), dict(span_warps=4), dict(span_block=2048),
       dict(cut_pass=True), dict(span_warps=4, num_pivots=15)]
GROUPS = [
    ([("llm", F32, 64, V, k, p, "sample") for V in (151936, 128256) for k, p in ((100, 0.9), (50, None))], B64),
    ([(d, F32, 1, 131072, k, p, "select") for d in ("llm", "gauss", "zipf") for k, p in ((50, None), (100, 0.9))],
     [{}, dict(num_pivots=7), dict(num_pivots=15)]),
    ([("llm", F32, 1024, 151936, 100, 0.9, "sample"), ("llm", F32, 1024, 131072, 50, None, "select"),
      ("zipf", F32, 1024, 131072, 50, None, "select")], [{}, dict(num_pivots=7), dict(num_pivots=15)]),
]

if __name__ == "__main__":
    run_groups(GROUPS, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150)
