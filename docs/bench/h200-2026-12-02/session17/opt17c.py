"""Session 17, call C: the register tiles' top-k by radix select (option radix_topk, on in this tree) against
the pivot search (radix_topk=False, the tree before) and radix select with four-warp finishes; and at B=1 two
options of the launch chain.

    python3 opt17c.py OUT.json [budget_s] [--warm I/N]

Rows and arguments as in ``opt17.py`` (whose loop this runs).  Run from the repository root.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import opt17  # noqa: E402
import torch  # noqa: E402

F32, V = torch.float32, 131072
SETS = [{}, dict(radix_topk=False), dict(search_warps=4)]
opt17.GROUPS = [
    ([("llm", F32, 1, V, 50, None, "select"), ("zipf", F32, 1, V, 50, None, "select"),
      ("gauss", F32, 1, V, 50, None, "select"), ("llm", F32, 1, V, 100, 0.9, "select"),
      ("llm", F32, 1, V, 50, None, "masked"), ("llm", F32, 16, V, 50, None, "select"),
      ("llm", F32, 64, V, 50, None, "select"), ("llm", F32, 64, V, 100, 0.9, "select"),
      ("llm", F32, 64, 128256, 50, None, "sample"), ("llm", F32, 64, 151936, 100, 0.9, "sample"),
      ("llm", F32, 64, 128256, 100, 0.9, "sample"), ("llm", F32, 64, 151936, 50, None, "sample"),
      ("llm", F32, 1024, V, 50, None, "select"), ("gauss", F32, 1024, V, 50, None, "select"),
      ("zipf", F32, 1024, V, 50, None, "select"), ("llm", F32, 1024, V, 100, 0.9, "select"),
      ("zipf", F32, 1024, V, 100, 0.9, "select"), ("llm", torch.bfloat16, 1024, V, 50, None, "select"),
      ("llm", F32, 1024, 151936, 100, 0.9, "sample"), ("llm", F32, 1024, 128256, 50, None, "sample"),
      ("llm", F32, 1024, V, 50, None, "masked")], SETS),
    # B=1: the span pass's first block loaded before its cut (span_prefetch), the finish in the span pass's last
    # program (fold_finish)
    ([("llm", F32, 1, V, 50, None, "select"), ("llm", F32, 1, V, 100, 0.9, "select"),
      ("llm", F32, 1, V, 50, None, "masked")],
     [{}, dict(span_prefetch=True), dict(fold_finish=True), dict(span_prefetch=True, fold_finish=True)]),
]

if __name__ == "__main__":
    opt17.main()
