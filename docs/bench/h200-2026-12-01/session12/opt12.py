"""``session11/opt.py`` with the option sets of session 12, call B (``opt13.py``: call C).

    python3 opt12.py OUT.json [budget_s]

Each group of cases is timed with its own option sets (``append_scan`` for top-k, lane options
for top-p, the cut pass and span warps for the sampler at B=64); rows as in ``session11/opt.py``
(CUDA-graph medians, ``same``: the default's bits).  Run from the repository root.  ``append_scan``
was removed after this call (a7fc6b0); the other options remain.  (On the device the groups ran
from a copy of ``session11/opt.py`` with a per-case list of option sets, in this order.)
"""

import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "session11"))
import opt  # noqa: E402  (session11/opt.py: it adds the options to every Triton request)
import torch  # noqa: E402

F32 = torch.float32
SCAN_SETS = [{}, dict(append_scan=64), dict(append_scan=256), dict(append_scan=1024)]
P_SETS = [{}, dict(append_scan=64), dict(value_lanes=True), dict(miss_pivots=31), dict(miss_pivots=7)]
S_SETS = [{}, dict(cut_pass=True), dict(span_warps=4), dict(cut_pass=True, span_warps=4)]
GROUPS = [
    ([("zipf", F32, 1024, 131072, 50, None, "select")], SCAN_SETS),
    ([("llm", F32, 64, 128256, 50, None, "sample"), ("llm", F32, 64, 151936, 100, 0.9, "sample")], S_SETS),
    ([("zipf", F32, 1024, 131072, None, 0.9, "select"), ("gauss", F32, 1024, 131072, None, 0.9, "select")], P_SETS),
    ([("zipf", F32, 1024, 131072, 100, 0.9, "select")], SCAN_SETS),
    ([("llm", F32, 1024, 131072, None, 0.9, "select")], P_SETS),
    ([("gauss", F32, 1024, 131072, 50, None, "select"), ("llm", F32, 1024, 128256, 50, None, "sample"),
      ("llm", F32, 1024, 131072, 50, None, "select"), ("zipf", torch.bfloat16, 1024, 131072, 50, None, "select")],
     SCAN_SETS),
]


def run_groups(groups, out: str, budget: float) -> None:
    """``opt.main`` once a group (its cases with its option sets), the rows merged into ``out``."""
    rows, t0 = [], time.time()
    for cases, sets in groups:
        left = budget - (time.time() - t0)
        if left <= 0:
            break
        opt.CASES, opt.SETS = cases, sets
        sys.argv = [sys.argv[0], out, str(left)]
        opt.main()
        with open(out) as f:
            rows += json.load(f)
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    run_groups(GROUPS, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150)
