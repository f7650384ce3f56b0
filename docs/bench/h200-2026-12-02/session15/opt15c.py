"""Session 15, call C: the sampler at B=64 with four-warp span programs for a scalar top-k with a top-p (the new
default, ``launch.span_warps_of``) against eight, and options not measured before at B=64: deferred slot stores
(``append_defer``), longer span blocks, fewer slot entries a step of the slot draw (``sample_chunk``); then the
slot draw's step at B=1024 and, for the Zipf k100+p0.9 rows that miss under ``row_rounds``, 16-warp rounds.

    python3 opt15c.py OUT.json [budget_s]

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
B64 = [{}, dict(span_warps=8), dict(append_defer=True), dict(sample_chunk=256), dict(sample_chunk=512),
       dict(span_block=2048)]
GROUPS = [
    ([("llm", F32, 64, V, k, p, "sample") for V in (151936, 128256) for k, p in ((100, 0.9), (50, None))], B64),
    ([("llm", F32, 1024, 151936, 100, 0.9, "sample")], [{}, dict(sample_chunk=512)]),
    ([("zipf", F32, 1024, 131072, 100, 0.9, "select")], [{}, dict(round_warps=16)]),
]

if __name__ == "__main__":
    run_groups(GROUPS, sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150)
