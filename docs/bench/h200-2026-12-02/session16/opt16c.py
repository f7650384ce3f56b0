"""Session 16, call C: the sampler's k100+p0.9 above 64 rows with span-grid miss rounds (the new default,
``launch.ROW_ROUNDS_KP_MAX_ROWS``) against ``row_rounds`` on (the default of calls A and B).

    python3 opt16c.py OUT.json [budget_s]

Rows as in ``session11/opt.py`` (CUDA-graph medians; ``same``: the default's tokens).  Run from the repository root.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "h200-2026-12-01",
                                "session12"))
import torch  # noqa: E402
from opt12 import run_groups  # noqa: E402

F32 = torch.float32
GROUPS = [
    ([("llm", F32, B, V, 100, 0.9, "sample") for B, V in ((1024, 151936), (1024, 128256), (256, 151936))],
     [{}, dict(row_rounds=True)]),
]

if __name__ == "__main__":
    run_groups(GROUPS, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150)
