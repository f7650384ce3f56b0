"""The sampler with the fourteenth session's finish defaults (``fused_rounds``; ``search_maxnreg=128`` for
the top-k geometry above 64 rows) against no register cap and against the thirteenth session's
defaults, and the cost of three of the four miss rounds (``miss_rounds=1``: no-ops where every row
hits).

    python3 opt_defaults.py OUT.json [budget_s]

Rows as in ``session11/opt.py`` (CUDA-graph medians; ``same``: the default's tokens).  Run from the
repository root.
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "session12"))
import torch  # noqa: E402
from opt12 import run_groups  # noqa: E402

F32 = torch.float32
OLD = dict(fused_rounds=False, search_maxnreg=255)  # 255: no cap
KP = ((100, 0.9), (50, None))
GROUPS = [([("llm", F32, 1024, V, k, p, "sample") for V in (128256, 151936) for k, p in KP],
           [{}, dict(search_maxnreg=255), OLD, dict(miss_rounds=1)]),
          ([("llm", F32, 64, V, k, p, "sample") for V in (128256, 151936) for k, p in KP + ((None, 0.9),)],
           [{}, OLD, dict(miss_rounds=1)])]

if __name__ == "__main__":
    run_groups(GROUPS, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 120)
