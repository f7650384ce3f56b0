"""The masking's cut-index segments: CUT_SPLIT_BLOCKS (blocks an SM over the rows) 4 / 8 / 16 / 32, and
cut_split off; every masked output compared bit for bit with cut_split off's; CUDA-graph medians (numba_ab's
timing).  python3 docs/bench/next-session43/cut_blocks.py OUT.json   (repository root, GPU)"""
import json
import sys

sys.path.insert(0, "benchmarks")
import torch  # noqa: E402
from numba_ab import masked_bits, timings  # noqa: E402

from qrita.backends.numba import launch  # noqa: E402
from qrita.bench.inputs import make_logits  # noqa: E402

out = open(sys.argv[1], "a")
for dtype, dist, B in [("bf16", "llm", 64), ("bf16", "gaussian", 64), ("bf16", "llm", 16), ("bf16", "llm", 256),
                       ("fp32", "gaussian", 64), ("bf16", "llm", 128)]:
    x = make_logits(dist, B, 131072, device="cuda", seed=0).to(torch.bfloat16 if dtype == "bf16" else torch.float32)
    want = None
    for blocks in (0, 4, 8, 16, 32, 64):
        options = {"cut_split": blocks > 0}
        launch.CUT_SPLIT_BLOCKS = max(blocks, 1)
        bits = masked_bits(x, 50, None, options)
        same = None if want is None else torch.equal(want, bits)
        want = bits if want is None else want
        row = dict(blocks=blocks, dtype=dtype, dist=dist, B=B, same_bits=same)
        row.update(timings(x, 50, None, options))
        print(json.dumps(row), flush=True)
        out.write(json.dumps(row) + "\n")
