"""Ranked compact slots (option ``rank_tile``, session 13): ``session11/opt.py``'s timing and bit
checks over the finish's tiers, for the sampler and ``select``.  The option exists only with
``callB-rank_tile.diff`` applied to 2798b13 (it was measured and not landed).

    python3 opt_rank.py OUT.json [budget_s]

Rows as in ``session11/opt.py`` (CUDA-graph medians; ``same``: the first set's bits or tokens,
here the default, ``rank_tile`` 256).  Run from the repository root.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "session12"))
import torch  # noqa: E402
from opt12 import run_groups  # noqa: E402

F32 = torch.float32
SETS = [{}, dict(rank_tile=0), dict(rank_tile=512), dict(rank_tile=128)]
GROUPS = [
    ([("llm", F32, 64, V, k, p, "sample") for V in (128256, 151936) for k, p in ((50, None), (100, 0.9))], SETS),
    ([("llm", F32, 1024, V, k, p, "sample") for V in (128256, 151936) for k, p in ((50, None), (100, 0.9))],
     SETS[:3]),
    ([(d, F32, 1024, 131072, k, p, "select") for d in ("llm", "gauss", "zipf")
      for k, p in ((50, None), (100, 0.9), (None, 0.9))], SETS[:3]),
    ([("llm", F32, 1, 131072, k, p, "select") for k, p in ((50, None), (100, 0.9), (None, 0.9))], SETS[:2]),
]

if __name__ == "__main__":
    run_groups(GROUPS, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150)
