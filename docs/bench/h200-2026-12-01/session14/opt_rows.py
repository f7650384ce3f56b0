"""The sampler with miss rounds of one program a row (``row_rounds``, the default of the top-k geometry
above 16 rows) against one program a span and an update launch.

    python3 opt_rows.py OUT.json [budget_s]

Rows as in ``session11/opt.py`` (CUDA-graph medians; ``same``: the default's tokens).  Run from the
repository root.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "session12"))
import torch  # noqa: E402
from opt12 import run_groups  # noqa: E402

F32 = torch.float32
GROUPS = [([("llm", F32, B, V, k, p, "sample") for B in (64, 1024) for V in (128256, 151936)
            for k, p in ((100, 0.9), (50, None))], [{}, dict(row_rounds=False)])]

if __name__ == "__main__":
    run_groups(GROUPS, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 60)
