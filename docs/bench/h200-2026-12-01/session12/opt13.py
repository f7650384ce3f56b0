"""Miss-round schedule options (session 12, call C): loads in flight, block size, warps, value lanes.

    python3 opt13.py OUT.json [budget_s]

Run from the repository root.  (On the device these cases ran from a copy of ``session11/opt.py``
with these option sets.)
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
from opt12 import F32, run_groups  # noqa: E402

R_SETS = [{}, dict(round_unroll=8), dict(round_unroll=16), dict(round_block=512), dict(round_block=128, round_unroll=8),
          dict(round_warps=4), dict(round_warps=4, round_unroll=8), dict(value_lanes=True, round_unroll=8)]
GROUPS = [
    ([("gauss", F32, 1024, 131072, None, 0.9, "select"), ("zipf", F32, 1024, 131072, None, 0.9, "select"),
      ("llm", F32, 1024, 131072, None, 0.9, "select")], R_SETS),
    ([("gauss", torch.bfloat16, 1024, 131072, None, 0.9, "select"), ("llm", F32, 1, 131072, None, 0.9, "select"),
      ("zipf", F32, 1, 131072, None, 0.9, "select")], R_SETS[:3]),
]

if __name__ == "__main__":
    run_groups(GROUPS, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150)
