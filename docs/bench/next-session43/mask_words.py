"""mask_kernel's paired path (16-bit rows read as 32-bit words): MASK_WORDS words a thread, set before the
kernels compile (one process a value); CUDA-graph medians of masking in place (numba_ab's timing) and a hash
of every masked output, so that the processes' bits can be compared.
    python3 docs/bench/next-session43/mask_words.py OUT.json WORDS   (repository root, GPU)"""
import hashlib
import json
import sys

sys.path.insert(0, "benchmarks")
from qrita.backends.numba import kernels  # noqa: E402

WORDS = int(sys.argv[2])
kernels.MASK_WORDS = WORDS  # read when the kernels compile (at their first launch)
kernels.MASK_PAIRED_ITEMS = 2 * WORDS

import torch  # noqa: E402
from numba_ab import masked_bits, timings  # noqa: E402

from qrita.bench.inputs import make_logits  # noqa: E402

out = open(sys.argv[1], "a")
for dtype, dist, B, k, p in [("bf16", "llm", 64, 50, None), ("bf16", "gaussian", 64, 50, None),
                             ("bf16", "llm", 16, 50, None), ("bf16", "llm", 256, 50, None),
                             ("bf16", "llm", 1024, 50, None), ("bf16", "gaussian", 1024, 50, None),
                             ("bf16", "llm", 64, 100, 0.9), ("fp32", "llm", 64, 50, None)]:
    x = make_logits(dist, B, 131072, device="cuda", seed=0).to(torch.bfloat16 if dtype == "bf16" else torch.float32)
    bits = masked_bits(x, k, p, {})
    row = dict(words=WORDS, dtype=dtype, dist=dist, B=B, k=k, p=p,
               sha=hashlib.sha256(bits.numpy().tobytes()).hexdigest()[:16])
    row.update(timings(x, k, p, {}))
    print(json.dumps(row), flush=True)
    out.write(json.dumps(row) + "\n")
