"""A/B of Numba backend options: variants alternated case by case in one process, every answer of
``select`` (threshold, num_ties, count, hit) and every masked output compared bit for bit against the
first variant's (``hit`` only where the set says it may differ), CUDA-graph medians of ``select`` and of
masking in place; V = 131072, fp32, the harness's inputs (qrita.bench.inputs.make_logits, seed 0).  One
JSON line a case:

    python3 benchmarks/numba_ab.py OUT.json --set NAME                   (repository root, on the GPU)
    NUMBA_ENABLE_CUDASIM=1 python3 benchmarks/numba_ab.py OUT.json --set NAME --dry   (CPU: bits only)

Sets: ``rank`` (``rank_select`` off / on; 27 cases, B = 16, 1024, 1), ``wide`` (``split_wide`` off, then
2, 3, 4 rounds; top-p 0.9 at B = 16 and 1, the split path), ``two_cuts`` (off / on; top-p 0.9 and 0.5 at
B = 1024, 16, 1), ``rank_kp`` (``rank_select`` off, on, on for top-k stages only: which stage of a k+p
row loses with it), ``cut_groups`` (the masking's cut index: every chunk
scanned / a group of chunks counted first; top-k 50, bf16 and fp32, B = 64 and 1024), ``mask_loads``
(``mask_kernel``: each entry loaded, then written / a thread's entries loaded back to back first; the same
cases), ``splits`` (the split path's blocks a row: automatic, 5 at B=64 and 17 at B=16 on an H200,
then 10, 20, 40; top-k 50 and top-p 0.9 at B=64 and 16), ``rank_live``
(``rank_select`` off, then on once at most 512 or 256
keys are live; top-k and k+p at B = 16, two cases at 1024), ``fold`` (``split_wide_fold`` off / on; top-p
0.9 at B = 16 and 1), ``pairs`` (bf16 rows read two entries a 4-byte load, off / on / on but for the
one-block-a-row select kernel: top-k 50 at B = 64
and 1024, top-p 0.9 and k100+p0.9 at B = 64, 1024, 16), ``cut_in_mask`` (the cut index kernel / the mask
blocks settling the cut from their spans' counts; top-k 50, bf16 and fp32, B = 16, 64, 256, 1024),
``split_waves`` (the automatic split's ceiling / floor of 2 * SMs / B blocks a row; top-k 50 at B = 16, 32, 64,
100, top-p 0.9 and k100+p0.9 at B = 16 and 64), ``small_b``
(the automatic split, 16 blocks a row at V = 131072 (``SPLIT_MIN_ENTRIES``), against 32 and 64; B = 1 and 4),
``rank_groups`` (``rank_select`` a thread a key / a group of threads a key / that and ``kp_mass``, the top-p stage
of a k+p row summing its mass in one block sum; top-k 50 and k100+p0.9 at B = 1, 4, 16, 1024, top-p 0.9 at B = 1
and 16), ``kp_rank`` (a k+p row's two searches / one ranking; k100+p0.9 at B = 1, 4, 16, 1024, bf16 at B = 1 and 64,
k50+p0.5 at B = 1, top-k 50 alone at B = 1 as a control), ``scan_prefetch`` (the split scan a tile ahead, off /
on / on with ``tie_index``; top-k 50 at B = 1, 16, 64 in fp32 and bf16, k100+p0.9 at B = 1 and 64, top-p 0.9 at
B = 64), ``wide_buffer`` (a row that hit searches its candidate buffer with 3-pivot rounds / with wide rounds
while more than ``kernels.WIDE_MIN_KEYS`` keys are live; last measured in session 25, before ``rank_select`` and
the chunked bin scan: top-k 50, fp32 and bf16, B = 1, 64, 1024, three distributions; k+p and top-p at B = 64),
``mask_counts`` (under ``cut_in_mask``: ``cut_count_kernel``'s counts / the mask blocks counting their own spans and
taking the earlier spans' published counts, each with ``tie_index`` on (main's default: few rows left to count) and
off (bf16 rows then cut their boundary group often); top-k 50 at B = 16, 64, 128 (fp32) and 256 (bf16, the
one-block-a-row path), LLM-like and Gaussian; top-p 0.9 and k100+p0.9 at B = 64, Zipf top-k 50 at B = 64),
``mask_blocks`` (``mask_kernel`` compiled for 2 / 3 / 4 blocks of 512 threads an SM; top-k 50 masked, fp32 and bf16,
B = 16, 64, 256, 1024, LLM-like; Gaussian at B = 64).
Written as
``docs/bench/next-numba-rank/ab.py`` for session 27, whose calls ran the first two (``--wide`` then;
``docs/bench/h100-2026-12-05/session27/``).
"""

import json
import sys

import torch

import qrita
from qrita.bench.inputs import make_logits
from qrita.bench.measure import _graph_median_us as graph_median_us  # the harness's timing

DRY = "--dry" in sys.argv
SET = sys.argv[sys.argv.index("--set") + 1] if "--set" in sys.argv else "rank"
DEV = "cpu" if DRY else "cuda"
V = 3000 if DRY else 131072
INNER = 10
DISTS = ("llm", "gaussian", "zipf")
# name: (variants, cases (dist, B, k, p), options added under --dry, whether ``hit`` may differ)
SETS = {
    "rank": ({"rounds": {"rank_select": False}, "rank": {"rank_select": True}},
             [(d, B, k, p) for B in (16, 1024, 1) for k, p in ((50, None), (100, 0.9), (None, 0.9)) for d in DISTS],
             {}, False),
    "wide": ({"finish": {"split_wide": False}, "r2": {"split_wide_rounds": 2}, "r3": {"split_wide_rounds": 3},
              "r4": {"split_wide_rounds": 4}},
             [(d, B, None, 0.9) for B in (16, 1) for d in DISTS],
             {"split": 3, "capacity": 9}, False),  # the split path, buffers too small for the live keys
    "rank_kp": ({"rounds": {"rank_select": False}, "rank": {"rank_select": True},
                 "rank_topk": {"rank_select": True, "rank_weighted": False}},
                [(d, B, k, p) for B in (16, 1024, 1) for k, p in ((100, 0.9), (50, 0.9), (100, None))
                 for d in ("llm", "gaussian")],
                {}, False),
    "rank_live": ({"rounds": {"rank_select": False}, "live512": {"rank_live": 512}, "live256": {"rank_live": 256}},
                  [(d, 16, k, p) for k, p in ((100, 0.9), (50, 0.9), (100, None), (50, None))
                   for d in ("llm", "gaussian")] + [("llm", 1024, 100, 0.9), ("llm", 1024, 50, None)],
                  {}, False),
    "cut_groups": ({"sequential": {"cut_groups": False}, "groups": {"cut_groups": True}},
                   [(d, B, 50, None, dt) for dt in ("bf16", "fp32") for B in (64, 1024) for d in DISTS],
                   {}, False),
    "mask_loads": ({"one": {"mask_loads": False}, "first": {"mask_loads": True}},
                   [(d, B, 50, None, dt) for dt in ("bf16", "fp32") for B in (64, 1024) for d in DISTS],
                   {}, False),
    "splits": ({"auto": {}, "s10": {"split": 10}, "s20": {"split": 20}, "s40": {"split": 40}},
               [("llm", 64, k, p, dt) for dt in ("fp32", "bf16") for k, p in ((50, None), (None, 0.9))]
               + [("llm", 16, 50, None), ("llm", 16, None, 0.9)],
               {}, False),
    "pairs": ({"one": {"pairs": False}, "pairs": {"pairs": True},
               "split_only": {"pairs": True, "pairs_select": False}},
              [(d, B, 50, None, "bf16") for B in (64, 1024) for d in DISTS]
              + [("llm", B, k, p, "bf16") for B in (64, 1024, 16) for k, p in ((None, 0.9), (100, 0.9))],
              {}, False),
    "cut_in_mask": ({"index": {"cut_in_mask": False}, "in_mask": {"cut_in_mask": True}},
                    [(d, B, 50, None, dt) for dt in ("bf16", "fp32") for B in (16, 64, 256, 1024)
                     for d in ("llm", "gaussian")]
                    + [("llm", 64, 100, 0.9, "bf16"), ("zipf", 64, 50, None, "bf16"), ("llm", 128, 50, None, "bf16")],
                    {}, False),
    "split_waves": ({"ceil": {"split_waves": False}, "waves": {"split_waves": True}},
                    [(d, B, 50, None, dt) for dt in ("bf16", "fp32") for B in (16, 32, 64, 100)
                     for d in ("llm", "gaussian")]
                    + [("llm", B, k, p, "bf16") for B in (16, 64) for k, p in ((None, 0.9), (100, 0.9))],
                    {}, False),
    "small_b": ({"auto": {}, "s32": {"split": 32}, "s64": {"split": 64}},
                [(d, B, k, p) for B in (1, 4) for k, p in ((50, None), (None, 0.9), (100, 0.9)) for d in DISTS],
                {}, False),
    "rank_groups": ({"single": {"rank_groups": False, "kp_mass": False},
                     "groups": {"rank_groups": True, "kp_mass": False},
                     "kp_mass": {"rank_groups": True, "kp_mass": True}},
                    [(d, B, k, p) for B in (1, 4, 16, 1024) for k, p in ((50, None), (100, 0.9)) for d in DISTS]
                    + [(d, B, None, 0.9) for B in (1, 16) for d in ("llm", "gaussian")],
                    {}, False),
    "kp_rank": ({"two": {"kp_rank": False}, "one": {"kp_rank": True}},
                [(d, B, 100, 0.9) for B in (1, 4, 16, 1024) for d in DISTS]
                + [("llm", B, 100, 0.9, "bf16") for B in (1, 64)] + [("llm", 1, 50, 0.5), ("gaussian", 1, 50, None)],
                {}, False),
    "scan_prefetch": ({"plain": {"scan_prefetch": False}, "prefetch": {"scan_prefetch": True},
                       "tie_index": {"scan_prefetch": True, "tie_index": True}},
                      [(d, B, 50, None, dt) for B in (1, 16, 64) for dt in ("fp32", "bf16") for d in ("llm", "zipf")]
                      + [("llm", B, 100, 0.9, "fp32") for B in (1, 64)]
                      + [(d, 64, None, 0.9, "fp32") for d in ("llm", "gaussian")],
                      {"split": 3}, False),
    "wide_buffer": ({"pivots": {"wide_buffer": False}, "wide": {"wide_buffer": True}},
                    [(d, B, 50, None, dt) for B in (64, 1024, 1) for dt in ("bf16", "fp32")
                     for d in ("zipf", "llm", "gaussian")]
                    + [(d, B, 100, 0.9, "fp32") for B in (64, 1024) for d in ("llm", "zipf")]
                    + [("llm", 64, None, 0.9, "fp32"), ("llm", 64, 100, 0.9, "bf16")],
                    {}, False),
    "mask_counts": ({"count": {"mask_counts": False}, "in_mask": {"mask_counts": True},
                     "count_no_index": {"mask_counts": False, "tie_index": False},
                     "in_mask_no_index": {"mask_counts": True, "tie_index": False}},
                    [(d, B, 50, None, dt) for dt in ("fp32", "bf16") for B in (16, 64) for d in ("llm", "gaussian")]
                    + [("llm", 128, 50, None, "fp32"), ("llm", 256, 50, None, "bf16"), ("zipf", 64, 50, None, "bf16")]
                    + [(d, 64, k, p, dt) for k, p in ((None, 0.9), (100, 0.9)) for dt in ("fp32", "bf16")
                       for d in ("llm", "gaussian")],
                    {}, False),
    "mask_blocks": ({"b2": {}, "b3": {"mask_blocks": 3}, "b4": {"mask_blocks": 4}},
                    [("llm", B, 50, None, dt) for dt in ("fp32", "bf16") for B in (16, 64, 256, 1024)]
                    + [("gaussian", 64, 50, None, dt) for dt in ("fp32", "bf16")],
                    {}, False),
    "fold": ({"picks": {"split_wide_fold": False}, "folded": {"split_wide_fold": True}},
             [(d, B, None, 0.9) for B in (16, 1) for d in DISTS],
             {"split": 3, "capacity": 9}, False),
    "two_cuts": ({"one": {"two_cuts": False}, "two": {"two_cuts": True}},
                 [(d, B, None, p) for B in (1024, 16, 1) for p in (0.9, 0.5) for d in DISTS],
                 {"capacity": 64}, True),
}
VARIANTS, CASES, DRY_OPTIONS, HIT_MAY_DIFFER = SETS[SET]
if DRY:
    CASES = [(d, 2, k, p, *dt) for d, B, k, p, *dt in CASES if B in (16, 64)][:6]
    VARIANTS = {name: {**o, **DRY_OPTIONS} for name, o in VARIANTS.items()}


def select_bits(x, k, p, options):
    r = qrita.select(x, k, p, backend="numba", options=options)
    return [torch.as_tensor(r.threshold).float().cpu(), torch.as_tensor(r.num_ties).cpu(),
            torch.as_tensor(r.count).cpu(), torch.as_tensor(r.hit).cpu()]


def masked_bits(x, k, p, options):
    out = qrita.top_k_top_p(x, k, p, backend="numba", options=options)
    return out.view(torch.int16 if out.element_size() == 2 else torch.int32).cpu()


def timings(x, k, p, options):
    """CUDA-graph medians (µs a call; the better of two runs): ``select``, and masking in place
    (``y`` restored from ``x`` before every replay, untimed: never timed on masked rows)."""
    y = x.clone()

    def select():
        qrita.select(x, k, p, backend="numba", options=options)

    def masked():
        qrita.top_k_top_p(y, k, p, backend="numba", inplace=True, options=options)

    return dict(select_us=round(min(graph_median_us(select, INNER, 7) for _ in range(2)), 1),
                masked_us=round(min(graph_median_us(masked, 1, 15, restore=lambda: y.copy_(x)) for _ in range(2)), 1))


def main():
    out = open(sys.argv[1], "a")
    for dist, B, k, p, *named in CASES:  # a case may name its dtype (fp32 by default) and its V
        dtype = named[0] if named else "fp32"
        v = named[1] if len(named) > 1 and not DRY else V
        x = make_logits(dist, B, v, device=DEV, seed=0).to(torch.bfloat16 if dtype == "bf16" else torch.float32)
        want = None
        for name, options in VARIANTS.items():
            bits = select_bits(x, k, p, options) + [masked_bits(x, k, p, options)]
            compared = [b for i, b in enumerate(bits) if not (HIT_MAY_DIFFER and i == 3)]
            first = None if want is None else [b for i, b in enumerate(want) if not (HIT_MAY_DIFFER and i == 3)]
            same = None if want is None else all(torch.equal(a, b) for a, b in zip(first, compared, strict=True))
            want = want or bits
            row = dict(variant=name, dist=dist, dtype=dtype, B=B, V=v, k=k, p=p, same_bits=same,
                       hit_rows=int(bits[3].sum()))
            if not DRY:
                row.update(timings(x, k, p, options))
            print(json.dumps(row), flush=True)
            out.write(json.dumps(row) + "\n")
            out.flush()


if __name__ == "__main__":
    main()
