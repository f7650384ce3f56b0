"""CuPy kernel-source variants, timed side by side (session 19, call B).

    python3 var19.py OUT.json

Each variant is a text edit of ``kernels.cu`` (or the kernels of another commit, from a file),
loaded by swapping the module's kernel text; digests as in ab19.py.  Run from the repository root.
It ran at b3878b3, 567e42d and d7cb310; since 48ed103 the host passes the geometry (THREADS is a
dict, get_kernel replaced get_kernels), so it does not run on later trees.
"""

import json
import subprocess
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
sys.path.insert(0, "docs/bench/h200-2026-12-03/session19")
from ab19 import digest  # noqa: E402
from gpu_check import graph_time, make_logits  # noqa: E402

import qrita  # noqa: E402
from qrita.backends.cupy import _module as M  # noqa: E402

HEAD = M.KERNEL_FILE.read_text()
OLD = subprocess.run(["cat", ".scratch/old/qrita/backends/cupy/kernels.cu"], capture_output=True, text=True).stdout


def edit(text, *pairs):
    for a, b in pairs:
        assert a in text, a
        text = text.replace(a, b)
    return text


PREFETCH = """    typename Tr::bits_t next[QRITA_ITEMS];
    if (c0 < c1) load_items<Tr>(xrow, stride_v, V, vec, c0 * QRITA_CHUNK + threadIdx.x * QRITA_ITEMS, next);
    for (int c = c0; c < c1; ++c) {
        typename Tr::bits_t b[QRITA_ITEMS];
#pragma unroll
        for (int i = 0; i < QRITA_ITEMS; ++i) b[i] = next[i];
        if (c + 1 < c1) load_items<Tr>(xrow, stride_v, V, vec, (c + 1) * QRITA_CHUNK + threadIdx.x * QRITA_ITEMS, next);
"""
NO_PREFETCH = """    for (int c = c0; c < c1; ++c) {
        typename Tr::bits_t b[QRITA_ITEMS];
        load_items<Tr>(xrow, stride_v, V, vec, c * QRITA_CHUNK + threadIdx.x * QRITA_ITEMS, b);
"""
# session 19 call B: head (four copies of the bins: 115 registers), old (1b623ad), copies1 (one
# copy: 64 registers), pad, tp4 (two-phase row histogram), candcopy1; call C: the tree without
# the copies, with the pass's next-chunk loads in flight (head), without them (noprefetch), and
# without the two-blocks-per-SM launch bound (bounds1); call D: 256-thread blocks, four per SM,
# with chunks of 2048 (t256i8) or 4096 entries (t256i16)
T256 = ("#define QRITA_THREADS 512", "#define QRITA_THREADS 256")
VARIANTS = {
    "head": (HEAD, {}),
    "t256i8": (edit(HEAD, T256), dict(THREADS=256, ITEMS=8, CHUNK=2048)),
    "t256i16": (edit(HEAD, T256, ("#define QRITA_ITEMS 8 ", "#define QRITA_ITEMS 16 ")),
                dict(THREADS=256, ITEMS=16, CHUNK=4096)),
}
DEFAULT_ATTRS = {name: getattr(M, name) for name in ("THREADS", "ITEMS", "CHUNK")}
F32 = torch.float32
V = 131072
# (dist, dtype, B, k, p, options)
CASES = [("hllm", F32, 1024, 50, None, {}), ("hllm", F32, 264, 50, None, {}), ("hllm", F32, 16, 50, None, {}),
         ("hllm", F32, 1024, 100, 0.9, {}), ("hgauss", F32, 1024, None, 0.9, {}), ("hllm", F32, 1024, None, 0.9, {}),
         ("hllm", F32, 1024, 50, None, {"truncation": False}), ("hzipf", F32, 1024, 50, None, {}),
         ("hllm", torch.bfloat16, 1024, 50, None, {}), ("hllm", torch.bfloat16, 1024, 100, 0.9, {}),
         ("hllm", F32, 16, None, 0.9, {}), ("hgauss", F32, 16, None, 0.9, {})]


def use(text, attrs):
    for name, value in {**DEFAULT_ATTRS, **attrs}.items():
        setattr(M, name, value)
    M.kernel_text = lambda: text
    M.source.cache_clear()
    M._modules.clear()


def main():
    out = sys.argv[1]
    res = []
    import cupy

    for name, (text, attrs) in VARIANTS.items():
        use(text, attrs)
        k = M.get_kernels(0, "float32")["select"]
        kattrs = dict(regs=k.num_regs, smem=k.shared_size_bytes, local=k.local_size_bytes)
        try:
            from cupy.cuda import driver

            kattrs["blocks_per_sm"] = driver.occupancyMaxActiveBlocksPerMultiprocessor(k.kernel.ptr, M.THREADS, 0)
        except Exception as e:  # noqa: BLE001
            kattrs["blocks_per_sm"] = repr(e)[:80]
        print(name, kattrs, flush=True)
        res.append(dict(variant=name, **kattrs))
        for dist, dt, B, kk, p, o in CASES:
            x = make_logits(dist, B, V, dt, seed=3)

            def fn(x=x, kk=kk, p=p, o=o):
                return qrita.select(x, k=kk, p=p, backend="cupy", options=o or None)

            sel = fn()
            cupy.cuda.Device().synchronize()
            t0 = time.time()
            us = graph_time(fn, iters=20, reps=5)
            row = dict(variant=name, dist=dist, dtype=str(dt)[6:], B=B, k=kk, p=p, options=o, us=round(us, 2),
                       digest=digest(sel), hits=int(sel.hit.sum()),
                       wall=round(time.time() - t0, 1))
            res.append(row)
            print(json.dumps(row), flush=True)
    json.dump(res, open(out, "w"), indent=1)


if __name__ == "__main__":
    main()
