"""Session 20, call B: CuPy A/B of the top-k regather (option second_cut), of the search's
run-summed bin atomics (against one atomic a key, session 19's hist_pass) and of 512-thread
masking blocks, on the harness's inputs (qrita.bench.inputs, seed 0).

    python3 ab20.py OUT.json        (from the repository root)

CUDA-graph medians of qrita.select / qrita.top_k_top_p(backend="cupy"); each variant's answer
compared bit for bit with the default's (select: threshold, num_ties, count; masked: the output).
"""

import json
import sys

import torch

sys.path.insert(0, "benchmarks")
from gpu_check import graph_time  # noqa: E402

import qrita  # noqa: E402
from qrita.backends.cupy import _module as M  # noqa: E402
from qrita.bench.inputs import make_logits  # noqa: E402

FINAL = dict(M.THREADS)
TEXT = M.kernel_text()
_start = TEXT.index("// A round's first pass")
_end = TEXT.index("\n}\n", TEXT.index("void hist_pass(", _start)) + 3
KEY_ATOMICS = TEXT[:_start] + """template <class Tr, bool MASS, class Src>
__device__ __forceinline__ void hist_pass(const Src& src, u64 lo, u64 hi, int P, const Weights<Tr>& wt) {
    for_each(src, [&](u32 key) {
        if ((u64)key <= lo) return;
        const int b = bucket_of(key, lo, hi, P, qrita_sm.tau);
        atomicAdd(&qrita_sm.bin_cnt[b], 1u);
        if (MASS) bin_mass_add(&qrita_sm.bin_mlo[b], &qrita_sm.bin_mhi[b], wt.q(key));
    });
}
""" + TEXT[_end:]


def use(text):
    M.kernel_text = lambda: text
    M.source.cache_clear()



def run(x, k, p, masked, options):
    if masked:
        return lambda: qrita.top_k_top_p(x, k, p, backend="cupy", options=options)
    return lambda: qrita.select(x, k, p, backend="cupy", options=options)


def bits(out, masked):
    if masked:
        return [out.view(torch.int16 if out.element_size() == 2 else torch.int32).clone()]
    return [t.clone() for t in (out.threshold, out.num_ties, out.count)]


CASES = [  # dist, B, k, p, dtype, masked
    ("llm", 1024, 100, 0.9, torch.float32, False), ("llm", 1024, 100, 0.9, torch.bfloat16, False),
    ("zipf", 1024, 100, 0.9, torch.float32, False), ("llm", 1024, 100, 0.9, torch.float32, True),
    ("gaussian", 1024, 100, 0.9, torch.float32, False), ("llm", 1024, 50, None, torch.float32, False),
    ("gaussian", 16, 100, 0.9, torch.float32, False), ("llm", 16, 100, 0.9, torch.float32, True),
    ("llm", 16, 50, None, torch.float32, True), ("llm", 1024, 50, None, torch.float32, True),
    ("gaussian", 1024, None, 0.9, torch.float32, False), ("gaussian", 16, None, 0.9, torch.float32, False),
    ("zipf", 16, None, 0.9, torch.float32, False), ("zipf", 1024, None, 0.9, torch.float32, False),
]
VARIANTS = [("default", {}, FINAL, TEXT), ("no second cuts", {"second_cut": False}, FINAL, TEXT),
            ("key atomics", {}, FINAL, KEY_ATOMICS), ("mask 512", {}, {**FINAL, "mask": 512}, TEXT)]
res = []
for dist, B, k, p, dt, masked in CASES:
    x = make_logits(dist, B, 131072, device="cuda", seed=0).to(dt)
    row = dict(dist=dist, B=B, k=k, p=p, dtype=str(dt).split(".")[1], masked=masked)
    ref = None
    for name, opts, threads, text in VARIANTS:
        if name == "mask 512" and not masked:
            continue
        M.THREADS = threads
        use(text)
        fn = run(x, k, p, masked, opts)
        got = bits(fn(), masked)
        ref = got if ref is None else ref
        row[name] = round(graph_time(fn, iters=10, reps=5), 1)
        row[name + " same"] = all(torch.equal(a, b) for a, b in zip(got, ref, strict=True))
    M.THREADS = FINAL
    use(TEXT)
    sel = qrita.select(x, k, p, backend="cupy")
    row["hits"] = int(sel.hit.sum())
    off = qrita.select(x, k, p, backend="cupy", options={"second_cut": False})
    row["hits without second cuts"] = int(off.hit.sum())
    res.append(row)
    print(json.dumps(row), flush=True)
json.dump(res, open(sys.argv[1], "w"), indent=1)
