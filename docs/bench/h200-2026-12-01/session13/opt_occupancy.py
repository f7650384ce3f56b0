"""The finish's latency and occupancy options on the sampler (written in session 13 for the next
session's first call; NOT run yet): ``fused_rounds``, ``search_maxnreg`` and ``reg_cap``
(``sweep_triton.py --set occupancy`` has the same sets for ``select``).

    python3 opt_occupancy.py OUT.json [budget_s]

Rows as in ``session11/opt.py`` (CUDA-graph medians; ``same``: the default's tokens).  Run from the
repository root.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "session12"))
import torch  # noqa: E402
from opt12 import run_groups  # noqa: E402

F32 = torch.float32
SETS = [{}, dict(fused_rounds=True), dict(search_maxnreg=128), dict(search_maxnreg=168), dict(reg_cap=2048),
        dict(reg_cap=2048, search_maxnreg=128), dict(reg_cap=2048, fused_rounds=True)]
GROUPS = [([("llm", F32, B, V, k, p, "sample") for B in (1024, 64) for V in (128256, 151936)
            for k, p in ((100, 0.9), (50, None))], SETS)]

if __name__ == "__main__":
    run_groups(GROUPS, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150)
