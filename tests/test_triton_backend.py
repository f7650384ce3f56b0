"""Triton-specific tests: geometry paths, bit-identity across them, and (on a GPU) the
hot-path guarantees.  The shared conformance suite covers the semantics.

CPU: ``TRITON_INTERPRET=1`` (the nox ``triton`` session) runs the real kernels on
CPU tensors; small spans drive the split-row, buffer and register paths at
interpreter-sized V.  GPU: ``-m gpu`` on the device machine.
"""

from __future__ import annotations

import os
import types

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("triton")

import triton  # noqa: E402
import triton.language as tl  # noqa: E402

import qrita  # noqa: E402
from qrita.backends.triton import kernels as triton_kernels  # noqa: E402
from qrita.backends.triton import launch as triton_launch  # noqa: E402
from qrita.core import rng as core_rng  # noqa: E402
from qrita.core.keys import bits_of_values, keys_from_bits  # noqa: E402
from qrita.reference import check_mask, check_selection  # noqa: E402

gumbel_f32_of = triton_kernels.gumbel_f32_of  # a module global, so that the test kernel below can call it


@triton.jit
def _noise_kernel(bits_ptr, out_ptr, N: tl.constexpr):
    """The sample pass's float32 noise of N 64-bit patterns (test_float32_pre_race_noise...)."""
    i = tl.arange(0, N)
    bits = tl.load(bits_ptr + i).to(tl.uint64, bitcast=True)
    tl.store(out_ptr + i, gumbel_f32_of(bits))


INTERPRETED = os.environ.get("TRITON_INTERPRET", "") not in ("", "0")
ON_GPU = torch.cuda.is_available() and not INTERPRETED
pytestmark = pytest.mark.skipif(
    not (INTERPRETED or ON_GPU), reason="needs a GPU or TRITON_INTERPRET=1 (nox -s triton)"
)
DEVICE = "cuda" if ON_GPU else "cpu"

# (span, span_cap, reg_cap): one span / many spans, register / buffer search
GEOMETRIES = {
    "one-span-registers": (2048, 1024, 4096),
    "split-row-registers": (256, 128, 4096),
    "split-row-buffer": (256, 128, 64),
}


def _logits(seed: int, B: int, V: int, dtype, ties: bool = False):
    rng = np.random.default_rng(seed)
    x = rng.integers(-3, 3, (B, V)).astype(np.float32) if ties else rng.standard_normal((B, V)).astype(np.float32)
    x[rng.random((B, V)) < 0.03] = -np.inf
    return torch.from_numpy(x).to(dtype=dtype, device=DEVICE)


def _check(x, k, p, ties, sel):
    vals = x.double().cpu().numpy()
    kk = k if k is None or isinstance(k, int) else k.cpu().numpy()
    pp = p if p is None or isinstance(p, float) else p.cpu().numpy()
    check_selection(vals, kk, pp, ties, sel.threshold.double().cpu().numpy(), sel.num_ties.cpu().numpy(),
                    sel.count.cpu().numpy())


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("request_kp", [(20, None), (None, 0.7), (30, 0.8)])
def test_geometries_agree_bit_for_bit(dtype, request_kp):
    """Split rows and buffer/register searches give the oracle's answer; top-k results are identical."""
    k, p = request_kp
    x = _logits(1, 3, 700, dtype, ties=dtype == torch.bfloat16)
    results = {}
    for name, (span, cap, reg) in GEOMETRIES.items():
        sel = qrita.select(x, k, p, backend="triton", options={"span": span, "span_cap": cap, "reg_cap": reg})
        _check(x, k, p, "lowest_index", sel)
        results[name] = (sel.threshold.float().cpu(), sel.num_ties.cpu(), sel.count.cpu())
    if p is None:  # pure counting: every geometry must agree exactly
        first = next(iter(results.values()))
        for other in results.values():
            for a, b in zip(first, other, strict=True):
                assert torch.equal(a, b)


@pytest.mark.parametrize("ties", ["lowest_index", "all"])
def test_forced_miss_matches_hit(ties):
    x = _logits(2, 2, 900, torch.float32, ties=True)
    hit = qrita.select(x, 40, None, backend="triton", ties=ties)
    miss = qrita.select(x, 40, None, backend="triton", ties=ties, options={"truncation": False})
    assert not miss.hit.any()
    _check(x, 40, None, ties, hit)
    _check(x, 40, None, ties, miss)
    assert torch.equal(hit.count.cpu(), miss.count.cpu())
    assert torch.equal(hit.num_ties.cpu(), miss.num_ties.cpu())


def _adversarial_rows(dtype):
    """Rows for the miss path: ties, all-equal, mostly -inf, +inf present, a dominant token."""
    rng = np.random.default_rng(5)
    V = 600
    x = rng.standard_normal((6, V)).astype(np.float32)
    x[1] = np.round(x[1] * 2) / 2  # heavy ties
    x[2] = 0.25  # all equal
    x[3, :] = -np.inf
    x[3, rng.choice(V, 30, replace=False)] = rng.standard_normal(30)  # grammar mask
    x[4, [7, 300]] = np.inf
    x[5, 11] = 80.0  # one dominant token
    return torch.from_numpy(x).to(dtype=dtype, device=DEVICE)


# the parallel miss rounds: gathered keys fit / never fit (tiny slots) / out of rounds (row fallback)
MISS_OPTIONS = {
    "rounds": {"truncation": False, "span": 256, "span_cap": 128},
    "tiny-slots": {"truncation": False, "span": 256, "span_cap": 8, "reg_cap": 16},
    "row-fallback": {"truncation": False, "span": 256, "span_cap": 64, "miss_rounds": 1},
}


@pytest.mark.parametrize(
    ("dtype", "mode", "ties"),
    [
        (torch.float32, "rounds", "lowest_index"),
        (torch.bfloat16, "tiny-slots", "all"),
        (torch.float32, "row-fallback", "lowest_index"),
    ],
)
def test_miss_rounds_are_exact(dtype, mode, ties):
    x = _adversarial_rows(dtype)
    requests = ((25, None), (None, 0.8), (40, 0.6), (3, 0.0))
    if mode == "tiny-slots" and INTERPRETED:  # the rounds mode covers top-k alone and p <= 0
        requests = ((None, 0.8), (40, 0.6))
    if mode == "row-fallback":  # one program scans the row per search round: slow in the interpreter
        requests = ((40, 0.6),) if INTERPRETED else ((25, None), (40, 0.6))
    for k, p in requests:
        sel = qrita.select(x, k, p, backend="triton", ties=ties, options=MISS_OPTIONS[mode])
        assert not sel.hit.any()
        _check(x, k, p, ties, sel)


@pytest.mark.parametrize(
    ("dtype", "mode", "ties", "lanes"),
    [(torch.float32, "rounds", "all", dict(mass_lanes=False)),
     (torch.bfloat16, "tiny-slots", "lowest_index", dict(value_lanes=True)),
     (torch.float32, "tiny-slots", "all", dict(sample_lanes=True))]
    + ([] if INTERPRETED else [(torch.bfloat16, "tiny-slots", "lowest_index", dict(mass_lanes=False)),
                               (torch.float32, "rounds", "all", dict(value_lanes=True, mass_lanes=False)),
                               (torch.bfloat16, "rounds", "lowest_index", dict(sample_lanes=True))]),
)
def test_non_default_miss_lanes_are_exact(dtype, mode, ties, lanes):
    """Miss rounds with lane counts (``mass_lanes=False``; by default top-p rounds accumulate lane
    masses only, which the other miss tests run), with lanes half in value (``value_lanes``), and with
    a top-p row's first lanes from a sample of the row (``sample_lanes``: rows of +inf, NaN, all equal
    or one value take the fallback lanes)."""
    x = _adversarial_rows(dtype)
    x = torch.cat([x, torch.sort(x[:1], dim=1).values])  # clustered: the top keys in one span
    opts = dict(MISS_OPTIONS[mode], **lanes)
    for k, p in () if INTERPRETED else ((None, 0.8), (40, 0.6)):  # the per-row batch below has both
        sel = qrita.select(x, k, p, backend="triton", ties=ties, options=opts)
        _check(x, k, p, ties, sel)
    k = torch.tensor([25, 0, 40, 600, 3, 10, 0], device=DEVICE)
    p = torch.tensor([1.0, 0.8, 0.6, float("nan"), 0.0, 0.95, 0.9], device=DEVICE)
    _check(x, k, p, ties, qrita.select(x, k, p, backend="triton", ties=ties, options=opts))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_sample_lanes_answer_gaussian_top_p_rows_in_two_rounds(monkeypatch, dtype):
    """``sample_lanes``: a top-p row of Gaussian logits that misses the truncation is answered by its
    second miss round (one that narrows the range to a lane around the sample's estimate of the
    boundary, then one that gathers that lane), where the default lanes, 4 bits of key a round,
    leave it open after two.  Round counts are read from the rows' stage after each update."""
    from qrita.bench.inputs import make_logits

    stages = []
    update = triton_kernels.update_kernel
    at = update.arg_names.index("state_i_ptr")

    class Spy:
        def __getitem__(self, grid):
            def launch(*args, **kwargs):
                update[grid](*args, **kwargs)
                stages.append(args[at][:, 0].clone())  # 0: the row is answered
            return launch

    # the spy replaces the name in the launcher's view of the kernels module only: the round kernel calls
    # update_kernel as a device function, and Triton's compiler would find the spy in the module's globals
    view = types.SimpleNamespace(**vars(triton_kernels))
    view.update_kernel = Spy()
    monkeypatch.setattr(triton_launch, "kernels", view)
    x = make_logits("gaussian", 2, 32768, seed=3).to(device=DEVICE, dtype=dtype)
    open_after = {}
    for lanes in (False, True, None):  # None: the default, sample lanes for a top-p alone
        stages.clear()
        opts = {} if lanes is None else dict(sample_lanes=lanes)
        sel = qrita.select(x, None, 0.9, backend="triton", options=opts)
        assert not sel.hit.any()
        _check(x, None, 0.9, "lowest_index", sel)
        open_after[lanes] = [int((s != 0).sum()) for s in stages]
    assert open_after[True][:2] == [2, 0], open_after
    assert open_after[None] == open_after[True], open_after
    assert open_after[False][1] > 0, open_after


@pytest.mark.parametrize("truncation", [True, False])
def test_schedule_options_give_the_same_bits(truncation):
    """Sweep options change no result: prefetched span loads, other block sizes,
    column-aggregated, deferred and block-scanned slot appends (other atomic slot orders: masses are
    fixed-point), the miss rounds' unroll, the finish and updates folded or not (``fold_*``), the small
    register search's rounds in one reduction (``fused_rounds``, the GPU default; not the interpreter's),
    miss rounds of one program a row (``row_rounds``), and a register cap for the searches
    (``search_maxnreg``; the interpreter ignores it)."""
    x = _adversarial_rows(torch.float32)
    x = torch.cat([x, torch.sort(x[:1], dim=1).values])  # clustered: the top keys fill one span
    base = dict(truncation=truncation, span=256, span_cap=64, span_block=64, round_block=32)
    # two combined variants keep the interpreter time down; each option differs from base in one of them
    # fold_*: the finish and the updates run by a row's last program, or not (the default folds the
    # updates of a top-k alone at small B)
    variants = (dict(span_prefetch=True, round_unroll=8, cut_pass=True, append_defer=True, fold_updates=True,
                     fold_finish=True, fused_rounds=True),
                dict(span_block=32, round_unroll=1, span_layout="strided", append_agg=16, fold_updates=False,
                     search_maxnreg=128, row_rounds=True))
    # top-k alone is the hit path's case, top-p alone the miss rounds'; k+p on a GPU (interpreter time)
    requests = [(25, None) if truncation else (None, 0.8)] + ([] if INTERPRETED else [(40, 0.6)])
    for k, p in requests:
        ref = qrita.select(x, k, p, backend="triton", options=base)
        _check(x, k, p, "lowest_index", ref)
        for extra in variants:
            sel = qrita.select(x, k, p, backend="triton", options=dict(base, **extra))
            for a, b in ((ref.threshold, sel.threshold), (ref.num_ties, sel.num_ties), (ref.count, sel.count)):
                assert torch.equal(a.cpu(), b.cpu()), extra


@pytest.mark.parametrize(("dtype", "k", "p", "ties", "miss"), [
    (torch.float32, 25, None, "lowest_index", False), (torch.float32, None, 0.5, "all", False),
    (torch.float32, 20, 0.6, "lowest_index", True), (torch.bfloat16, 25, None, "all", False),
    (torch.bfloat16, 20, 0.6, "lowest_index", True)])
def test_fused_rounds_give_the_unfused_bits(dtype, k, p, ties, miss):
    """The small register search with every round's lane statistics in one reduction (option
    fused_rounds, the default on a GPU, not in the interpreter) gives the bits of the search with a
    block reduction a statistic:
    adversarial rows (ties, all equal, +inf, a grammar mask) and bf16 duplicates, top-k, top-p and
    both, both tie rules, hits and the gathered slots of misses.  A 128-key small tile (reg_cap):
    the interpreter's reduction of a tuple is slow on 512 keys."""
    x = torch.cat([_adversarial_rows(dtype), _logits(9, 2, 600, dtype, ties=True)])
    base = dict(MISS_OPTIONS["rounds"] if miss else {}, reg_cap=128)
    ref = qrita.select(x, k, p, backend="triton", ties=ties, options=dict(base, fused_rounds=False))
    sel = qrita.select(x, k, p, backend="triton", ties=ties, options=dict(base, fused_rounds=True))
    for a, b in ((ref.threshold, sel.threshold), (ref.num_ties, sel.num_ties), (ref.count, sel.count)):
        assert torch.equal(a.cpu(), b.cpu())
    _check(x, k, p, ties, sel)


@pytest.mark.parametrize(("dtype", "k", "p", "ties", "mode", "V"), [
    (torch.bfloat16, 25, None, "all", None, 600), (torch.float32, 20, 0.6, "lowest_index", "rounds", 600),
    (torch.float32, 700, None, "all", None, 8192)]
    # radix_topk is off by default: under the interpreter (CI) its 16-bit duplicates, a miss's gathered slot and the
    # mid-size tile; on a GPU also these
    + ([] if INTERPRETED else [(torch.float32, 25, None, "lowest_index", None, 600),
                               (torch.bfloat16, 25, None, "all", "tiny-slots", 600),
                               (torch.float16, 1, None, "lowest_index", None, 600)]))
def test_radix_topk_gives_the_pivot_search_bits(dtype, k, p, ties, mode, V):
    """The register tiles' top-k by radix select (option radix_topk; off by default) gives the bits of the
    pivot search (the paper's method): adversarial rows (ties, all equal, +inf, a
    grammar mask) and 16-bit duplicates, both tie rules, hits and the gathered slots of misses, a
    top-p after the top-k, and (k=700 of 8192) the mid-size tile."""
    x = torch.cat([_adversarial_rows(dtype).repeat(1, V // 600 + 1)[:, :V], _logits(13, 2, V, dtype, ties=True),
                   _logits(14, 2, V, dtype)])
    base = MISS_OPTIONS[mode] if mode else {}
    ref = qrita.select(x, k, p, backend="triton", ties=ties, options=dict(base, radix_topk=False))
    sel = qrita.select(x, k, p, backend="triton", ties=ties, options=dict(base, radix_topk=True))
    for a, b in ((ref.threshold, sel.threshold), (ref.num_ties, sel.num_ties), (ref.count, sel.count)):
        assert torch.equal(a.cpu(), b.cpu())
    _check(x, k, p, ties, sel)


@pytest.mark.parametrize(("dtype", "k", "p", "ties", "mode", "extra"), [
    (torch.float32, 25, None, "lowest_index", "rounds", {}), (torch.float32, 20, 0.6, "all", "rounds", {}),
    (torch.bfloat16, 25, None, "all", "tiny-slots", {}), (torch.float32, None, 0.5, "lowest_index", "rounds", {}),
    (torch.float32, 25, None, "lowest_index", "row-fallback", {}),
    (torch.float32, 20, 0.6, "lowest_index", "rounds", dict(span_rounds_first=1, round_maxnreg=255)),
    (torch.float32, 20, 0.6, "all", "rounds", dict(row_loop=False)),
    (torch.float32, 25, None, "lowest_index", "row-fallback", dict(row_loop=False)),
    (torch.float32, 20, 0.6, "lowest_index", "rounds", dict(row_programs=2)),
    (torch.bfloat16, 25, None, "lowest_index", "tiny-slots", dict(row_programs=1)),
    (torch.float32, 25, None, "all", "row-fallback", dict(row_programs=3, row_loop=False))])
def test_row_rounds_give_the_span_rounds_bits(dtype, k, p, ties, mode, extra):
    """Miss rounds run one program a row over the row's spans, then its update (option row_rounds,
    the default of a top-k above 16 rows), give the bits of one program a span and a separate
    update: forced misses (evaluating and gathering rounds, slots too small, the row fallback),
    adversarial rows and bf16 duplicates, top-k, k+p and top-p, both tie rules; and with the first
    round over the span grid (span_rounds_first), and each row-mode round in a launch of its own
    (``row_loop=False``; by default one launch runs them all).  A row-mode program takes several rows
    (``row_programs``: one a row by default; here also two, one program for all and three)."""
    x = torch.cat([_adversarial_rows(dtype), _logits(11, 2, 600, dtype, ties=True)])
    base = MISS_OPTIONS[mode]
    ref = qrita.select(x, k, p, backend="triton", ties=ties, options=dict(base, row_rounds=False))
    sel = qrita.select(x, k, p, backend="triton", ties=ties, options=dict(base, row_rounds=True, **extra))
    for a, b in ((ref.threshold, sel.threshold), (ref.num_ties, sel.num_ties), (ref.count, sel.count)):
        assert torch.equal(a.cpu(), b.cpu())
    _check(x, k, p, ties, sel)


@pytest.mark.parametrize(("dtype", "k", "p", "ties", "mode", "rows", "extra"), [
    (torch.float32, 25, None, "lowest_index", "rounds", slice(None), {}),  # every row misses, B=8
    (torch.float32, 25, None, "lowest_index", "hits", slice(None), {}),  # rows that hit (and ones that keep all)
    (torch.float32, 25, None, "lowest_index", "rounds", slice(0, 1), {}),  # B=1, a miss
    (torch.float32, 25, None, "all", "hits", slice(6, 7), {}),  # B=1, a hit over tied values
    (torch.bfloat16, 25, None, "all", "tiny-slots", slice(None), {}),  # gathers that never fit
    (torch.float32, 20, 0.6, "all", "rounds", slice(None), {}),  # k+p
    (torch.float32, None, 0.5, "lowest_index", "rounds", slice(None), {}),  # top-p alone (chain folds it)
    (torch.float32, 25, None, "lowest_index", "row-fallback", slice(None), {}),  # one round, then the row
    (torch.float32, 20, 0.6, "lowest_index", "rounds", slice(0, 3), dict(wave_rows=1))])  # counters reused
def test_chain_rounds_give_the_default_bits(dtype, k, p, ties, mode, rows, extra):
    """The folded miss rounds of a wave in one launch (option ``chain_rounds``: each program takes its
    round and span from a row ticket and waits for the previous round's update) give the bits of one
    launch a round: hits, forced misses (evaluating and gathering rounds, slots too small, the row
    fallback), adversarial rows and integer ties, top-k, k+p and top-p, both tie rules, B=1 and a
    small B, one-row waves; and the masked rows of the default. (One row with truncation takes the
    chain by default: launch.CHAIN_MAX_ROWS.)"""
    x = torch.cat([_adversarial_rows(dtype), _logits(11, 2, 600, dtype, ties=True)])[rows]
    base = dict(span=256, span_cap=128) if mode == "hits" else dict(MISS_OPTIONS[mode])
    ref = qrita.select(x, k, p, backend="triton", ties=ties, options=dict(base, chain_rounds=False))
    sel = qrita.select(x, k, p, backend="triton", ties=ties, options=dict(base, chain_rounds=True, **extra))
    for a, b in ((ref.threshold, sel.threshold), (ref.num_ties, sel.num_ties), (ref.count, sel.count),
                 (ref.hit, sel.hit)):
        assert torch.equal(a.cpu(), b.cpu())
    _check(x, k, p, ties, sel)
    if mode in ("hits", "rounds") and rows == slice(None):
        bits = torch.int32 if dtype == torch.float32 else torch.int16
        want = qrita.top_k_top_p(x, k, p, backend="triton", ties=ties, mask_value=-5.0,
                                  options=dict(base, chain_rounds=False))
        got = qrita.top_k_top_p(x, k, p, backend="triton", ties=ties, mask_value=-5.0,
                                 options=dict(base, chain_rounds=True))
        assert torch.equal(got.cpu().view(bits), want.cpu().view(bits))


def _mass_concentrated(seed: int, B: int, V: int):
    """A N(0, 2^2) floor with 8 strong logits per row at +10..+20: the Gaussian top-p cut lands in
    the floor, where a third of the row lies above it."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((B, V)).astype(np.float32) * 2.0
    for r in range(B):
        x[r, rng.choice(V, 8, replace=False)] = 10.0 + 10.0 * rng.random(8)
    return x


@pytest.mark.parametrize("dtype", [torch.float32] + ([] if INTERPRETED else [torch.bfloat16]))
def test_two_cuts_hit_mass_concentrated_top_p_rows(dtype, monkeypatch):
    # 16 spans of 16 slots: a 256-key slot for a 4096-entry row
    V = 4096
    x = _mass_concentrated(5, 4, V)
    x[2] = np.random.default_rng(6).standard_normal(V)  # Gaussian: the boundary lies far down, a miss both ways
    x[3, 1::2] = -np.inf  # half the row is not keepable (the sample sees it)
    x[3, V - 2] = 18.0
    xt = torch.from_numpy(x).to(dtype=dtype, device=DEVICE)
    base = dict(span=256, span_cap=16)
    requests = [(None, 0.9)] + ([] if INTERPRETED else [(None, 0.5), (None, 0.99), (100, 0.9)])
    for k, p in requests:
        one = qrita.select(xt, k, p, backend="triton", options=dict(base, two_cuts=False))
        opts = dict(base, two_cuts=True)
        two = qrita.select(xt, k, p, backend="triton", options=opts)
        _check(xt, k, p, "lowest_index", two)
        _check(xt, k, p, "all", qrita.select(xt, k, p, backend="triton", ties="all", options=opts))
        # a second cut for a quarter of the slot (option two_cut_share, the default until the eighth session)
        _check(xt, k, p, "lowest_index",
               qrita.select(xt, k, p, backend="triton", options=dict(opts, two_cut_share=4)))
        if p == 0.9 and k is None:
            hit_one, hit_two = one.hit.cpu().numpy(), two.hit.cpu().numpy()
            assert not hit_one[[0, 1, 3]].any(), "the Gaussian cut overflows the slot on these rows"
            assert hit_two[[0, 1, 3]].all(), "the second cut holds the strong logits"
            assert not hit_two[2]
        elif k is not None:  # a top-k cut: unchanged
            assert torch.equal(one.hit, two.hit)
    # masking and sampling read the slot of rows that hit: the same bits and tokens as one cut
    k, p = None, 0.9
    masked = qrita.top_k_top_p(xt, k, p, backend="triton", options=dict(base, two_cuts=False))
    assert torch.equal(qrita.top_k_top_p(xt, k, p, backend="triton", options=dict(base, two_cuts=True)), masked)
    seeds = torch.arange(4, device=DEVICE) * 7 + 1
    monkeypatch.setattr(triton_launch, "SPAN_CAP", 16)
    monkeypatch.setattr(triton_launch, "MAX_SPAN", 256)
    monkeypatch.setattr(triton_launch, "TWO_CUTS", False)
    tokens = qrita.sample(xt, k, p, seeds=seeds, backend="triton")
    monkeypatch.setattr(triton_launch, "TWO_CUTS", True)
    assert torch.equal(qrita.sample(xt, k, p, seeds=seeds, backend="triton"), tokens)


def test_top_p_cut_floor_hits_sharp_rows(monkeypatch):
    """A top-p row whose weights' Gaussian model puts the mass p above the row's largest entries (sharp
    rows: sigma 8; small p on sigma 3) hits with the cut no higher than the top-k cut for
    ``kernels.TOPP_FLOOR_K`` entries (without it no entry was a candidate and every row missed), and
    keeps the oracle's answer; a per-row p and a p below float32's normals too."""
    # the row of sigma 3 keeps 257 entries at p 0.9: a hit needs more than the top-p slot's 256 keys a span
    monkeypatch.setattr(triton_launch, "TOPP_SPAN_CAP", triton_launch.SPAN_CAP)
    V = 4096
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, V)) * np.array([[8.0], [8.0], [3.0], [12.0]])
    xt = torch.from_numpy(x.astype(np.float32)).to(DEVICE)
    for p in (0.9, torch.tensor([0.1, 0.99, 0.05, 1e-40], device=DEVICE)):
        sel = qrita.select(xt, None, p, backend="triton")
        _check(xt, None, p, "lowest_index", sel)
        assert sel.hit.cpu().all(), p


def test_small_batch_top_k_geometry_gives_the_default_bits():
    """A top-k alone over few rows of more than MAX_SPAN entries takes short spans (``launch.span_of``):
    the same bits as the default spans, for hits, a miss (k above the slot: the miss rounds over
    short spans), cut ties, masking and sampling."""
    V = 20000
    assert triton_launch.span_of(V, 2, False, top_k_only=True)[0] < triton_launch.MAX_SPAN
    rng = np.random.default_rng(41)
    x = np.round(rng.standard_normal((3, V)) * 2).astype(np.float32)  # ties at every cut
    x[1] = rng.standard_normal(V)
    xt = torch.from_numpy(x).to(device=DEVICE)
    k = torch.tensor([30, 1500, 7], device=DEVICE)  # 1500: more than the 5 * 256 slot keys
    default = dict(span=triton_launch.MAX_SPAN, span_cap=triton_launch.SPAN_CAP)
    short = qrita.select(xt, k, None, backend="triton")
    _check(xt, k, None, "lowest_index", short)
    assert not bool(short.hit[1])
    ref = qrita.select(xt, k, None, backend="triton", options=default)
    for name in ("threshold", "num_ties", "count"):
        assert torch.equal(getattr(short, name), getattr(ref, name)), name
    masked = qrita.top_k_top_p(xt, k, None, backend="triton", mask_value=-3.0)
    want = qrita.top_k_top_p(xt.cpu(), k.cpu(), None, backend="numpy", mask_value=-3.0)
    assert torch.equal(masked.cpu().view(torch.int32), want.view(torch.int32))
    seeds = torch.tensor([3, 5, 8], device=DEVICE)
    tokens = qrita.sample(xt, k, None, seeds=seeds, backend="triton")
    assert tokens.cpu().tolist() == qrita.sample(xt.cpu(), k.cpu(), None, seeds=seeds.cpu(),
                                                 backend="numpy").tolist()


def test_top_p_geometry_keeps_its_slot_at_every_batch(monkeypatch):
    """The top-p geometry (``launch.span_of``'s ``top_p``) takes TOPP_SPAN_CAP slot keys a span whatever B is, and
    the second cut's default share scales with it (the same target, rowcap // share keys).  With a smaller top-p
    slot patched in, each row's answer alone equals its answer in the batch, and the oracle's."""
    L = triton_launch
    assert {L.span_of(131072, B, False, top_p=True) for B in (1, 16, 64, 256, 1024, 4096)} == {
        (L.MAX_SPAN, L.TOPP_SPAN_CAP)}
    assert L.two_cut_share_of(L.SPAN_CAP) == L.TWO_CUT_SHARE
    assert L.SPAN_CAP // 4 * 8 // L.two_cut_share_of(L.SPAN_CAP // 4) == L.SPAN_CAP * 8 // L.TWO_CUT_SHARE
    monkeypatch.setattr(L, "TOPP_SPAN_CAP", 64)
    rng = np.random.default_rng(41)
    x = rng.standard_normal((4, 3000)).astype(np.float32)
    x[0, :30] += 8.0  # LLM-like: the mass in a few outliers
    x[2] = np.round(x[2] * 2) / 2  # ties
    xt = torch.from_numpy(x).to(device=DEVICE)
    p = torch.tensor([0.9, 0.5, 0.95, 0.99], device=DEVICE)
    whole = qrita.select(xt, None, p, backend="triton")
    _check(xt, None, p, "lowest_index", whole)
    for i in range(4):
        alone = qrita.select(xt[i:i + 1], None, p[i:i + 1], backend="triton")
        for name in ("threshold", "num_ties", "count"):
            assert torch.equal(getattr(alone, name)[0], getattr(whole, name)[i]), (i, name)


def test_wide_geometry_slot_of_a_small_k_gives_the_full_slots_bits(monkeypatch):
    """A small scalar top-k over many rows (``launch.span_of``'s wide geometry) keeps WIDE_SPAN_CAP slot keys a
    span when k <= WIDE_CAP_MAX_K, SPAN_CAP above: the same thresholds, masks and tokens as the full slot, also
    for a row that gathers more than the small slot holds (it misses there, and hits with the full slot), and
    the oracle's answer.  WIDE_SPAN_MIN_ROWS is lowered so that three rows take the wide geometry."""
    L = triton_launch
    assert L.span_of(131072, 1024, True, top_k_only=True, k=50) == (L.WIDE_SPAN, L.WIDE_SPAN_CAP)
    assert L.span_of(131072, 1024, True, top_k_only=True, k=L.WIDE_CAP_MAX_K + 1) == (L.WIDE_SPAN, L.SPAN_CAP)
    assert L.span_of(131072, 64, False, top_k_only=True, k=None) == (L.MAX_SPAN, L.SPAN_CAP)
    assert L.WIDE_SPAN_CAP < L.SPAN_CAP
    V = L.WIDE_SPAN + 7000
    rng = np.random.default_rng(47)
    x = rng.standard_normal((3, V)).astype(np.float32)
    # a row's slot is n_spans (2) times the slot per span: more keys than the small one holds, fewer than the full
    crowd = L.WIDE_SPAN_CAP + L.SPAN_CAP
    x[1, rng.choice(V, crowd, replace=False)] = 6.0  # a tie group under the row's maximum: every key a candidate
    x[1, 5] = 9.0
    x[2, ::3] = np.nan
    x[2, 11] = np.inf
    xt = torch.from_numpy(x).to(device=DEVICE)
    seeds = torch.tensor([3, 5, 8], device=DEVICE)
    monkeypatch.setattr(L, "WIDE_SPAN_MIN_ROWS", 1)

    def run(k):
        return (qrita.select(xt, k, None, backend="triton"),
                qrita.top_k_top_p(xt, k, None, backend="triton", mask_value=-0.0).cpu().view(torch.int32),
                qrita.sample(xt, k, None, seeds=seeds, backend="triton").cpu().tolist())

    for k in (20, L.WIDE_CAP_MAX_K):
        got = run(k)
        with monkeypatch.context() as m:
            m.setattr(L, "WIDE_SPAN_CAP", L.SPAN_CAP)
            ref = run(k)
        _check(xt, k, None, "lowest_index", got[0])
        assert got[0].hit.cpu().tolist() == [True, False, True] and ref[0].hit.cpu().tolist() == [True, True, True]
        for name in ("threshold", "num_ties", "count"):
            assert torch.equal(getattr(got[0], name), getattr(ref[0], name)), name
        want = qrita.top_k_top_p(xt.cpu(), k, None, backend="numpy", mask_value=-0.0).view(torch.int32)
        assert torch.equal(got[1], want) and torch.equal(ref[1], want)
        assert got[2] == ref[2] == qrita.sample(xt.cpu(), k, None, seeds=seeds.cpu(), backend="numpy").tolist()


def test_scalar_top_k_with_top_p_gives_the_softmax_paths_bits(monkeypatch):
    """A scalar top-k (1 <= k < V) with a top-p skips the span pass's softmax partials and takes the
    top-k geometry (short spans at B <= 16): the same thresholds, masks and tokens as the path that
    computes them (option ``kp_softmax``), on ties, +inf, NaN, mostly -inf rows, a miss (k above the
    slot) and p <= 0, and the oracle's answer."""
    V = 20000
    rng = np.random.default_rng(43)
    x = np.round(rng.standard_normal((4, V)) * 2).astype(np.float32)  # ties at every cut
    x[1, ::5] = np.nan
    x[1, 7] = np.inf
    x[1, 9000] = np.inf  # +inf: the top-p weights are the +inf count
    x[2, 100:] = -np.inf
    x[3] = rng.standard_normal(V)
    xt = torch.from_numpy(x).to(device=DEVICE)
    p = torch.tensor([0.9, 0.6, 0.3, 0.0], device=DEVICE)
    seeds = torch.tensor([4, 9, 1, 6], device=DEVICE)
    old = dict(kp_softmax=True)
    for k in ((30, 1500) if not INTERPRETED else (30,)) + (1400,):  # 1400 > the 5 * 256 slot keys: a miss
        for pp in (p, 0.8):
            sel = qrita.select(xt, k, pp, backend="triton")
            _check(xt, k, pp, "lowest_index", sel)
            ref = qrita.select(xt, k, pp, backend="triton", options=old)
            assert torch.equal(sel.threshold.view(torch.int32), ref.threshold.view(torch.int32)), (k, pp)
            for name in ("num_ties", "count"):
                assert torch.equal(getattr(sel, name), getattr(ref, name)), (k, pp, name)
        masked = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=-3.0)
        want = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=-3.0, options=old)
        assert torch.equal(masked.view(torch.int32), want.view(torch.int32)), k
        tokens = qrita.sample(xt, k, p, seeds=seeds, backend="triton")
        with monkeypatch.context() as m:
            m.setattr(triton_launch, "KP_SOFTMAX", True)  # qrita.sample takes no options
            assert torch.equal(tokens, qrita.sample(xt, k, p, seeds=seeds, backend="triton")), k
        assert tokens.cpu().tolist() == qrita.sample(xt.cpu(), k, p.cpu(), seeds=seeds.cpu(),
                                                     backend="numpy").tolist()


def _zipf_rows(seed: int, B: int, V: int):
    """Zipf(1.1) log-probabilities, each row permuted (the harness's Zipf rows): a heavier upper tail than
    the Gaussian model's, whose top-k cut keeps several times k candidates."""
    rng = np.random.default_rng(seed)
    base = (-1.1 * np.log(np.arange(1, V + 1))).astype(np.float32)
    return np.stack([rng.permutation(base) for _ in range(B)])


def _cut_candidates(x, k: int, sample_cut: int, p: float | None = None, rowcap: int = 0, sample_wide: int = 0):
    """Entries of each row of float32 ``x`` above the (gathering) cut that ``cut_kernel`` gives a top-k ``k``
    request, or a top-p ``p`` request with two cuts and a slot of ``rowcap`` keys."""
    B, V = x.shape
    topk_lut, topp_lut = triton_launch._luts(str(x.device))
    cut = torch.zeros((B, 2), dtype=torch.int64, device=x.device)
    modes = (1, 0) if p is None else (0, 1)
    triton_kernels.cut_kernel[(B,)](
        x, x.stride(0), x.stride(1), V, 0, x, k, x, 1.0 if p is None else p, *modes, topk_lut, topp_lut, cut,
        rowcap or V, DTYPE=triton_launch.DTYPE_CODE["float32"], W=32, SAMPLE=triton_launch.SAMPLE_SIZE,
        LUT_STEPS=triton_launch.TOPK_LUT_STEPS_PER_OCTAVE, TOPK_LUT_N=triton_launch.TOPK_DELTA.size,
        TOPP_LUT_N=triton_launch.TOPP_DELTA.size, TWO_CUTS=0 if p is None else triton_launch.TWO_CUT_SHARE,
        SAMPLE_CUT=sample_cut, SAMPLE_WIDE=sample_wide, num_warps=4)
    keys = keys_from_bits(bits_of_values(x.cpu().numpy(), "float32"), "float32").astype(np.int64)
    return (keys > cut[:, :1].cpu().numpy()).sum(axis=1)


def test_sample_cut_bounds_heavy_tailed_rows_candidates():
    """The sample cut (kernels.sample_cut_key) takes a Zipf row's top-k 50 candidates from about 14 k (the
    Gaussian cut) to about 6 k, never below k, and a top-p row's gathering cut (two cuts, a slot of 2048 keys:
    the cut for 64 of them) from about 900 keys to about 380, never below 64: counted on cut_kernel's cut, 8
    rows of 32768."""
    x = torch.from_numpy(_zipf_rows(5, 8, 32768)).to(DEVICE)
    gauss, both = _cut_candidates(x, 50, 0), _cut_candidates(x, 50, 1024)
    assert (both <= gauss).all() and (both >= 50).all(), (gauss, both)
    assert both.mean() < 0.6 * gauss.mean(), (gauss, both)
    # the option sample_wide: these rows do not skip the first sample, so they take 4096 entries' order
    # statistic: about 300 -> 170 candidates (interpreter), never below k
    wide = _cut_candidates(x, 50, 1024, sample_wide=4096)
    assert (wide <= both).all() and (wide >= 50).all() and wide.mean() < 0.7 * both.mean(), (both, wide)
    gauss, both = _cut_candidates(x, 0, 0, p=0.9, rowcap=2048), _cut_candidates(x, 0, 1024, p=0.9, rowcap=2048)
    assert (both <= gauss).all() and (both >= 2048 // triton_launch.TWO_CUT_SHARE).all(), (gauss, both)
    assert both.mean() < 0.6 * gauss.mean(), (gauss, both)
    wide = _cut_candidates(x, 0, 1024, p=0.9, rowcap=2048, sample_wide=4096)
    assert (wide <= both).all() and (wide >= 2048 // triton_launch.TWO_CUT_SHARE).all(), (both, wide)
    # Gaussian rows skip the first sample: the same cut with and without the wide one
    g = torch.from_numpy(np.random.default_rng(6).standard_normal((4, 32768)).astype(np.float32)).to(DEVICE)
    assert (_cut_candidates(g, 50, 1024) == _cut_candidates(g, 50, 1024, sample_wide=4096)).all()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_sample_cut_gives_the_same_bits(dtype):
    """``select`` and masking with the sample cut (cut_kernel, forced by ``cut_pass``) give the bits without
    it, and the oracle's answer, on rows where it raises the cut (Zipf), where the Gaussian cut is higher,
    on ties, an all -inf row, per-row k, and a row built against it: the entries the sample reads
    are the row's largest, so its order statistic lies above the row's k-th value and the row misses."""
    V, S = 4096, 512
    rng = np.random.default_rng(17)
    x = np.concatenate([_zipf_rows(3, 3, V), rng.standard_normal((4, V)).astype(np.float32)])
    x[4] = np.sort(x[4])  # ascending
    x[5] = np.round(x[5] * 2)  # ties
    x[6] = rng.standard_normal(V) - 10.0
    sampled = np.arange(S) // 32 * (V // (S // 32)) + np.arange(S) % 32  # kernels.sample_cut_key's runs
    x[6, sampled] = 100.0 + np.arange(S, dtype=np.float32)  # the sample reads the row's 512 largest
    x = np.concatenate([x, np.full((1, V), -np.inf, np.float32)])
    xt = torch.from_numpy(x).to(device=DEVICE, dtype=dtype)
    k = torch.tensor([50, 20, 5, 50, 50, 30, 50, 50], device=DEVICE)
    got = {}
    # (sample_cut, sample_wide): none, the sample, the sample and a wide one for rows that do not skip it (the
    # wide sample's runs hold the first's, so on row 6 it reads the planted values too, plus others)
    configs = ((0, 0), (S, 0), (S, 4 * S))
    for sample_cut, sample_wide in configs:
        opts = dict(span=1024, span_cap=256, cut_pass=True, sample_cut=sample_cut, sample_wide=sample_wide)
        sel = qrita.select(xt, k, None, backend="triton", options=opts)
        _check(xt, k, None, "lowest_index", sel)
        masked = qrita.top_k_top_p(xt, k, 0.9, backend="triton", options=opts, mask_value=-7.0)
        got[sample_cut, sample_wide] = (sel, masked)
    bits = torch.int16 if dtype == torch.bfloat16 else torch.int32
    for config in configs[1:]:
        for name in ("threshold", "num_ties", "count"):
            assert torch.equal(getattr(got[0, 0][0], name), getattr(got[config][0], name)), (config, name)
        assert torch.equal(got[0, 0][1].view(bits), got[config][1].view(bits)), config
        assert got[config][0].hit[:3].all(), config
    assert got[0, 0][0].hit[6] and not got[S, 0][0].hit[6]  # the adversarial row: a miss, still exact
    # a top-p alone: the sample raises the second (gathering) cut of the Zipf rows; the answer is the oracle's
    # either way (top-p bits may differ inside SPEC's window when a row's path changes)
    p = torch.tensor([0.9, 0.5, 0.99, 0.9, 0.9, 0.8, 0.9, 0.9], device=DEVICE)
    for sample_cut, sample_wide in configs:
        opts = dict(span=1024, span_cap=256, cut_pass=True, sample_cut=sample_cut, sample_wide=sample_wide)
        _check(xt, None, p, "lowest_index", qrita.select(xt, None, p, backend="triton", options=opts))


@pytest.mark.parametrize("two_cuts", [False, True], ids=["one-cut", "two-cuts"])
def test_one_row_waves_give_one_waves_bits(two_cuts, monkeypatch):
    """Rows are processed in waves that reuse the scratch (slot, counters, partials).  With one row
    a wave, every buffer is reused by the next row (or, with the option streams, the row after next):
    select, masking and sampling must give the bits of a single wave, on rows that hit, miss (top-p over a
    Gaussian row), cut ties and keep everything, with the cut in its own launch and in the span programs."""
    rng = np.random.default_rng(31)
    V = 1500
    x = np.round(rng.standard_normal((5, V)) * 3).astype(np.float32)  # ties
    x[1] = rng.standard_normal(V)  # a wide top-p set: a miss
    x[2] = _mass_concentrated(32, 1, V)[0]
    x[4, :] = -np.inf
    xt = torch.from_numpy(x).to(device=DEVICE)
    k = torch.tensor([7, 0, 0, 40, 5], device=DEVICE)
    p = torch.tensor([1.0, 0.9, 0.9, 0.8, 0.5], device=DEVICE)
    seeds = torch.arange(5, device=DEVICE) * 11 + 2
    for cut_pass in (False, True):
        opts = dict(span=256, span_cap=32, cut_pass=cut_pass, two_cuts=two_cuts)
        one_wave = (qrita.select(xt, k, p, backend="triton", options=opts),
                    qrita.top_k_top_p(xt, k, p, backend="triton", options=opts, mask_value=-9.0))
        _check(xt, k, p, "lowest_index", one_wave[0])
        # ... and with the waves alternating over two scratch sets (option streams: on CUDA two streams as well)
        for wave_opts in (opts, dict(opts, streams=2)):
            with monkeypatch.context() as m:
                m.setattr(triton_launch, "SCRATCH_BYTES", 1)  # one row a wave
                waves = (qrita.select(xt, k, p, backend="triton", options=wave_opts),
                         qrita.top_k_top_p(xt, k, p, backend="triton", options=wave_opts, mask_value=-9.0))
            for name in ("threshold", "num_ties", "count", "hit"):
                assert torch.equal(getattr(waves[0], name), getattr(one_wave[0], name)), (wave_opts, name)
            assert torch.equal(waves[1].view(torch.int32), one_wave[1].view(torch.int32)), wave_opts
    monkeypatch.setattr(triton_launch, "SPAN_CAP", 32)
    monkeypatch.setattr(triton_launch, "MAX_SPAN", 256)
    monkeypatch.setattr(triton_launch, "TWO_CUTS", two_cuts)
    tokens = qrita.sample(xt, k, p, seeds=seeds, backend="triton")
    assert tokens.cpu().tolist() == qrita.sample(xt.cpu(), k.cpu(), p.cpu(), seeds=seeds.cpu(),
                                                 backend="numpy").tolist()
    monkeypatch.setattr(triton_launch, "SCRATCH_BYTES", 1)
    monkeypatch.setattr(triton_launch, "SAMPLE_SCRATCH_BYTES", 1)
    assert torch.equal(qrita.sample(xt, k, p, seeds=seeds, backend="triton"), tokens)


@pytest.mark.parametrize(
    ("name", "value"),
    [("span", 300), ("span_cap", 0), ("span_block", 96), ("span_warps", 3), ("num_pivots", 0), ("miss_rounds", -1),
     ("reg_cap", True), ("round_warps", 2.0), ("round_unroll", 3), ("span_layout", "wide"), ("two_cut_share", 3),
     ("append_agg", 96), ("search_maxnreg", 100), ("sample_cut", 300), ("sample_cut", True),
     ("sample_wide", 3000), ("streams", 3), ("mask_block", 512), ("mask_block", 6000),
     ("value_cmp", 3)],
)
def test_bad_options_name_the_option(name, value):
    x = _logits(6, 2, 300, torch.float32)
    before = x.clone()
    with pytest.raises(qrita.QritaValueError, match=name):
        qrita.top_k_top_p(x, 5, None, backend="triton", inplace=True, options={name: value})
    assert torch.equal(x, before)  # nothing written


def test_miss_rounds_per_row_modes():
    """One batch mixing top-k, top-p, both, neither and p <= 0 rows, every row a miss."""
    x = _adversarial_rows(torch.float32)
    k = torch.tensor([25, 0, 40, 600, 3, 10], device=DEVICE)
    p = torch.tensor([1.0, 0.8, 0.6, float("nan"), 0.0, 0.95], device=DEVICE)
    sel = qrita.select(x, k, p, backend="triton", options=MISS_OPTIONS["tiny-slots"])
    _check(x, k, p, "lowest_index", sel)
    out = qrita.top_k_top_p(x, k, p, backend="triton", options=MISS_OPTIONS["tiny-slots"], mask_value=-5.0)
    check_mask(x.double().cpu().numpy(), k.cpu().numpy(), p.cpu().numpy(), "lowest_index",
               (out != -5.0).cpu().numpy())


def test_masked_output_in_and_out_of_place():
    x = _logits(3, 3, 500, torch.float16)
    k = torch.tensor([5, 0, 499], device=DEVICE)
    p = torch.tensor([1.0, 0.6, float("nan")], device=DEVICE)
    before = x.clone()
    out = qrita.top_k_top_p(x, k, p, backend="triton", mask_value=-1000.0)
    assert torch.equal(x.view(torch.int16), before.view(torch.int16))  # input untouched
    kept = out != -1000.0
    check_mask(x.double().cpu().numpy(), k.cpu().numpy(), p.cpu().numpy(), "lowest_index", kept.cpu().numpy())
    assert torch.equal(out[kept].view(torch.int16), x[kept].view(torch.int16))  # exact bits kept
    y = x.clone()
    res = qrita.top_k_top_p(y, k, p, backend="triton", mask_value=-1000.0, inplace=True)
    assert res is y
    assert torch.equal(y.view(torch.int16), out.view(torch.int16))


def _masked_case(x, rng, dtype, k, p, mask_value):
    """Five rows of ``x`` made a masking case: row 3 Gaussian, row 4 with NaN and +inf.  Returns the
    rows on the device in ``dtype``, per-row ``k`` and ``p`` there, the bits' dtype and the numpy
    backend's masked rows."""
    x[3] = rng.standard_normal(x.shape[1])
    x[4, [3, 1000]] = np.nan
    x[4, 17] = np.inf
    xt = torch.from_numpy(x).to(dtype=dtype, device=DEVICE)
    k, p = torch.tensor(k, device=DEVICE), torch.tensor(p, device=DEVICE)
    bits = torch.int32 if dtype == torch.float32 else torch.int16
    return xt, k, p, bits, qrita.top_k_top_p(xt.cpu(), k.cpu(), p.cpu(), backend="numpy", mask_value=mask_value)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_mask_block_gives_the_same_bits(dtype):
    """Option ``mask_block`` (entries per program of the mask pass): the masked bits of every block size
    equal the default's and the numpy backend's; V = 20000 leaves each size a partial last block (and 16384
    one whole block before it)."""
    rng = np.random.default_rng(12)
    x = np.round(rng.standard_normal((5, 20000)) * 4).astype(np.float32) / 4  # ties at the boundary
    xt, k, p, bits, want = _masked_case(x, rng, dtype, [40, 7, 300, 0, 20], [1.0, 0.9, 1.0, 0.95, 1.0], -3.0)
    for block in triton_launch.MASK_BLOCK_CHOICES:
        got = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=-3.0, options={"mask_block": block})
        assert torch.equal(got.cpu().view(bits), want.view(bits)), block
    out = xt.clone()
    qrita.top_k_top_p(out, k, p, backend="triton", mask_value=-3.0, inplace=True, options={"mask_block": 8192})
    assert torch.equal(out.cpu().view(bits), want.view(bits))


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_value_compares_give_the_same_bits(dtype):
    """Option ``value_cmp`` (the mask and the tie counts compare float32 values against scalars made from the
    threshold key) masks the bits that keys do, and the numpy backend's, on rows whose threshold is where a
    value compare could differ from keys: -0.0 and +0.0 tied at the cut, subnormal values, -inf kept as a tie,
    NaN and +inf, a row of -inf, a cut tie group that spans blocks of the mask (1024 entries), in place too."""
    rng = np.random.default_rng(40)
    V = 3000
    x = np.round(rng.standard_normal((8, V)) * 4).astype(np.float32) / 4  # ties at the boundary
    x[0] = np.where(rng.random(V) < 0.5, -0.0, 0.0)  # zeros of both signs: the whole row ties
    x[0, :40] = rng.standard_normal(40)
    tiny = float(np.finfo(np.float32).tiny if dtype == torch.float32 else torch.finfo(dtype).tiny)
    x[1] = rng.integers(-3, 4, V) * tiny / 4  # subnormal values of the dtype, ties among them
    x[2, : V // 2] = -np.inf  # half the row -inf: k keeps some of them as the cut tie group
    x[3] = -np.inf  # empty
    x[4, [3, 1000]] = np.nan
    x[4, [17, 2500]] = np.inf
    x[5] = 1.0  # one tie group across every block
    xt = torch.from_numpy(x).to(dtype=dtype, device=DEVICE)
    k = torch.tensor([60, 500, V // 2 + 30, 10, 900, 2100, 0, 7], device=DEVICE)
    p = torch.tensor([1.0, 1.0, 1.0, 1.0, 0.9, 1.0, 0.8, 0.5], device=DEVICE)
    bits = {torch.float32: torch.int32}.get(dtype, torch.int16)
    for mask_value in (-0.0, float("-inf")):
        want = qrita.top_k_top_p(xt.cpu(), k.cpu(), p.cpu(), backend="numpy", mask_value=mask_value)
        for opts in ({"value_cmp": 2, "mask_block": 1024, "span": 512}, {"value_cmp": 0, "mask_block": 1024},
                     {"value_cmp": 1}):  # spans of 512: the tie counts of several spans a row
            got = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=mask_value, options=opts)
            assert torch.equal(got.cpu().view(bits), want.view(bits)), (mask_value, opts)
        out = xt.clone()
        qrita.top_k_top_p(out, k, p, backend="triton", mask_value=mask_value, inplace=True,
                          options={"value_cmp": 2})
        assert torch.equal(out.cpu().view(bits), want.view(bits)), mask_value


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_masked_entries_take_the_mask_values_bits(dtype):
    """Every masked entry holds the mask value's bits, -0.0 included (its fill was once 0.0 + mask_value,
    which is +0.0), in place and out of place, as the numpy backend writes them."""
    rng = np.random.default_rng(5)
    x = torch.from_numpy(rng.standard_normal((3, 700)).astype(np.float32)).to(dtype=dtype, device=DEVICE)
    bits = torch.int32 if dtype == torch.float32 else torch.int16
    for mask_value in (-0.0, 0.0, float("-inf"), -1e-3):
        want = qrita.top_k_top_p(x.cpu(), 20, 0.9, backend="numpy", mask_value=mask_value)
        got = qrita.top_k_top_p(x, 20, 0.9, backend="triton", mask_value=mask_value)
        assert torch.equal(got.cpu().view(bits), want.view(bits)), mask_value
        out = x.clone()
        qrita.top_k_top_p(out, 20, 0.9, backend="triton", mask_value=mask_value, inplace=True)
        assert torch.equal(out.cpu().view(bits), want.view(bits)), mask_value


@pytest.mark.parametrize("dtype", [torch.bfloat16] if INTERPRETED else [torch.float32, torch.bfloat16])
def test_fill_and_scatter_gives_the_read_paths_bits(dtype, monkeypatch):
    """With the option ``scatter``, rows that hit are filled and their kept candidates written back
    from the slot; with ``slot_ties`` the read path takes their cut tie group's last kept index from the
    slot; the bits equal the read path's (the default) and the numpy backend's, in place and out of
    place.

    Rows: a tie group cut at the boundary (resolved from the slot), one of 300 (more than TIE_TILE:
    resolved from the row), one that keeps +0.0 and -0.0 (read, not scattered), a top-p miss, and
    NaN/+inf entries.  Then the ties found from the row over several spans, the pick folded into the
    count launch (``fold_ties``, the default) or not.  The mask's blocks cut to 512 entries: whole blocks
    (unmasked, vector loads on a GPU) and a row's partial last one."""
    monkeypatch.setattr(triton_launch, "TIE_TILE", 64)  # the 300-tie row takes the row path
    # (a per-row p takes the top-p geometry: the 300 ties at the cut hit with the full slot, not the top-p one's 256)
    monkeypatch.setattr(triton_launch, "TOPP_SPAN_CAP", triton_launch.SPAN_CAP)
    monkeypatch.setattr(triton_launch, "MASK_BLOCK", 512)
    rng = np.random.default_rng(21)
    V = 3000
    x = np.round(rng.standard_normal((5, V)) * 4).astype(np.float32) / 4  # many ties
    x[1, rng.choice(V, 300, replace=False)] = 9.0
    x[2] = -np.abs(x[2]) - 1.0
    x[2, [5, 70, 2999]] = -0.0
    x[2, [6, 71]] = 0.0
    xt, k, p, bits, want = _masked_case(x, rng, dtype, [40, 100, 4, 0, 30], [1.0, 1.0, 1.0, 0.95, 0.9], -7.0)
    read = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=-7.0)
    assert torch.equal(read.cpu().view(bits), want.view(bits))
    scatter = {"scatter": True}
    got = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=-7.0, options=scatter)
    assert torch.equal(got.cpu().view(bits), want.view(bits))
    out = xt.clone()
    res = qrita.top_k_top_p(out, k, p, backend="triton", mask_value=-7.0, inplace=True, options=scatter)
    assert res is out and torch.equal(out.cpu().view(bits), want.view(bits))
    # the read path with the cut tie groups of rows that hit resolved from the slot (option slot_ties), not counted
    # from the row: the same bits, in place and out of place (the 300-tie row still counts from the row)
    got = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=-7.0, options={"slot_ties": True})
    assert torch.equal(got.cpu().view(bits), want.view(bits))
    out = xt.clone()
    qrita.top_k_top_p(out, k, p, backend="triton", mask_value=-7.0, inplace=True, options={"slot_ties": True})
    assert torch.equal(out.cpu().view(bits), want.view(bits))
    # deferred slot stores (option append_defer) keep every key and token index the scatter writes back
    got = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=-7.0, options=dict(scatter, append_defer=True))
    assert torch.equal(got.cpu().view(bits), want.view(bits))
    sel = qrita.select(xt, k, p, backend="triton")
    assert sel.hit.cpu().tolist()[:3] == [True, True, True]  # the scatter path ran (rows 0, 1; row 2 reads)
    # cut ties found from the row over several spans: the pick by the last program of the row's counts
    # (fold_ties, the default) and in a launch of its own
    spans = dict(span=512, span_cap=64)
    folded = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=-7.0, options=spans)
    apart = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=-7.0, options=dict(spans, fold_ties=False))
    assert torch.equal(folded.cpu().view(bits), apart.cpu().view(bits))
    assert torch.equal(folded[:3].cpu().view(bits), want[:3].view(bits))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_pass_order_options_give_the_default_bits(dtype):
    """The L2-reuse orders (``mask_reverse``, ``tie_reverse``: those grids from their end, by default
    the mask of 32-bit rows and the tie counts of 16-bit rows; ``round_alternate``: span-grid miss rounds
    alternately reversed), smaller waves (``wave_rows``) and programmatic dependent launch (``pdl``, on
    an H200 by default; ignored elsewhere) change no bit of the masked rows or the selection: rows with a
    cut tie group over several spans, a top-p row that misses into the rounds, NaN and +inf, in place
    and out of place."""
    rng = np.random.default_rng(5)
    V = 1500
    x = np.round(rng.standard_normal((5, V)) * 4).astype(np.float32) / 4  # many ties
    xt, k, p, bits, want = _masked_case(x, rng, dtype, [40, 100, 7, 0, 30], [1.0, 1.0, 0.7, 0.95, 0.9], -3.0)
    orders = dict(mask_reverse=True, tie_reverse=True, round_alternate=True, wave_rows=2)
    for base in (dict(span=512, span_cap=64), dict(MISS_OPTIONS["rounds"])):  # hits (mostly), then all miss
        ref = qrita.select(xt, k, p, backend="triton", options=base)
        sel = qrita.select(xt, k, p, backend="triton", options=dict(base, **orders))
        for a, b in ((ref.threshold, sel.threshold), (ref.num_ties, sel.num_ties), (ref.count, sel.count)):
            assert torch.equal(a.cpu(), b.cpu()), base
        got = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=-3.0, options=dict(base, **orders))
        assert torch.equal(got.cpu().view(bits), want.view(bits)), base
    out = xt.clone()
    qrita.top_k_top_p(out, k, p, backend="triton", mask_value=-3.0, inplace=True, options=orders)
    assert torch.equal(out.cpu().view(bits), want.view(bits))
    # programmatic dependent launch off, waiting only, waiting and launching the next kernel early
    for pdl in (0, 1, 2):
        got = qrita.top_k_top_p(xt, k, p, backend="triton", mask_value=-3.0, options=dict(pdl=pdl))
        assert torch.equal(got.cpu().view(bits), want.view(bits)), pdl
    # a scalar top-k at small B folds each miss round's update into the round's last program
    miss = dict(MISS_OPTIONS["rounds"], fold_updates=True)
    ref = qrita.select(xt, 25, None, backend="triton", options=miss)
    sel = qrita.select(xt, 25, None, backend="triton", options=dict(miss, round_alternate=True))
    _check(xt, 25, None, "lowest_index", sel)
    for a, b in ((ref.threshold, sel.threshold), (ref.num_ties, sel.num_ties), (ref.count, sel.count)):
        assert torch.equal(a.cpu(), b.cpu())


def test_non_contiguous_rows_and_vocab():
    base = _logits(4, 6, 800, torch.float32)
    for view in (base[::2], base[:, ::2], base.t().contiguous().t()):
        sel = qrita.select(view, 7, 0.9, backend="triton")
        _check(view, 7, 0.9, "lowest_index", sel)


# --- GPU only: the hot-path guarantees -----------------------------------------------------------

gpu = pytest.mark.gpu


@gpu
@pytest.mark.skipif(not ON_GPU, reason="needs a CUDA GPU")
@pytest.mark.parametrize("V", [32000, 128256, 151936, 262144])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_real_shapes(V, dtype):
    g = torch.Generator(device="cuda").manual_seed(V)
    x = (torch.randn(64, V, device="cuda", generator=g) * 2).to(dtype)
    x[:, :5] += 10
    for k, p in ((50, None), (None, 0.9), (100, 0.9), (1000, None)):
        sel = qrita.select(x, k, p, backend="triton")
        rows = [0, 31, 63]
        vals = x[rows].double().cpu().numpy()
        check_selection(vals, k, p, "lowest_index", sel.threshold[rows].double().cpu().numpy(),
                        sel.num_ties[rows].cpu().numpy(), sel.count[rows].cpu().numpy())


@gpu
@pytest.mark.skipif(not ON_GPU, reason="needs a CUDA GPU")
def test_no_sync_graph_capture_determinism_and_batch_invariance():
    g = torch.Generator(device="cuda").manual_seed(0)
    x0 = torch.randn(128, 131072, device="cuda", generator=g)
    k = torch.randint(0, 200, (128,), device="cuda", generator=g)
    p = torch.rand(128, device="cuda", generator=g)
    qrita.top_k_top_p(x0.clone(), k, p, backend="triton", inplace=True)  # warm-up (compiles)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:  # the calls only: comparing (torch.equal) is itself a sync
        ref = qrita.top_k_top_p(x0, k, p, backend="triton")
        repeats = [qrita.top_k_top_p(x0, k, p, backend="triton") for _ in range(10)]
    finally:
        torch.cuda.set_sync_debug_mode("default")
    for again in repeats:
        assert torch.equal(again.view(torch.int32), ref.view(torch.int32))
    x = x0.clone()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        qrita.top_k_top_p(x, k, p, backend="triton", inplace=True)
    x.copy_(x0)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(x.view(torch.int32), ref.view(torch.int32))
    alone = qrita.top_k_top_p(x0[37:38], k[37:38], p[37:38], backend="triton")
    assert torch.equal(alone[0].view(torch.int32), ref[37].view(torch.int32))
    inside = qrita.top_k_top_p(x0[30:40], k[30:40], p[30:40], backend="triton")
    assert torch.equal(inside[7].view(torch.int32), ref[37].view(torch.int32))
    # 16 < B <= CUT_PASS_MIN_ROWS: the cut in the span programs and the strided layout
    middle = qrita.top_k_top_p(x0[20:60], k[20:60], p[20:60], backend="triton")
    assert torch.equal(middle[17].view(torch.int32), ref[37].view(torch.int32))
    # a top-k alone: short spans at B <= SMALL_SPAN_MAX_ROWS (launch.span_of), the same bits
    ref_k = qrita.top_k_top_p(x0, k, None, backend="triton")
    for rows in (slice(37, 38), slice(30, 40), slice(20, 60)):
        part = qrita.top_k_top_p(x0[rows], k[rows], None, backend="triton")
        assert torch.equal(part.view(torch.int32), ref_k[rows].view(torch.int32)), rows
    # a scalar top-k with a top-p: the top-k geometry too (short spans at B <= 16, wide ones at B >= 256,
    # no softmax partials), the bits of the path that keeps them (option kp_softmax)
    ref_kp = qrita.top_k_top_p(x0, 50, p, backend="triton")
    softmax = qrita.top_k_top_p(x0, 50, p, backend="triton", options=dict(kp_softmax=True))
    assert torch.equal(softmax.view(torch.int32), ref_kp.view(torch.int32))
    for rows in (slice(37, 38), slice(30, 40), slice(20, 60)):
        part = qrita.top_k_top_p(x0[rows], 50, p[rows], backend="triton")
        assert torch.equal(part.view(torch.int32), ref_kp[rows].view(torch.int32)), rows
    wide = qrita.top_k_top_p(torch.cat([x0, x0]), 50, torch.cat([p, p]), backend="triton")
    assert torch.equal(wide[128:].view(torch.int32), ref_kp.view(torch.int32))


@gpu
@pytest.mark.skipif(not ON_GPU, reason="needs a CUDA GPU")
def test_two_streams_give_the_bits_under_capture_without_sync():
    """The option streams=2 (waves alternating over the call's stream and a side stream, each with its own
    scratch): the bits of one stream for select and masking (top-k rows that hit, Zipf rows with more
    candidates, top-p rows that miss), no host sync, a CUDA graph capture that forks into the side stream and
    joins it, and at most 16 MiB of scratch."""
    from backends import cuda_peak_extra_bytes

    g = torch.Generator(device="cuda").manual_seed(5)
    x0 = torch.randn(1024, 131072, device="cuda", generator=g)
    x0[::3] = torch.from_numpy(_zipf_rows(9, 342, 131072)).cuda()
    two = dict(streams=2)
    for k, p in ((50, None), (None, 0.9), (100, 0.9)):
        ref_sel = qrita.select(x0, k, p, backend="triton")
        ref = qrita.top_k_top_p(x0, k, p, backend="triton")
        qrita.top_k_top_p(x0, k, p, backend="triton", options=two)  # warm-up
        torch.cuda.synchronize()
        torch.cuda.set_sync_debug_mode("error")
        try:
            sel = qrita.select(x0, k, p, backend="triton", options=two)
            got = qrita.top_k_top_p(x0, k, p, backend="triton", options=two)
        finally:
            torch.cuda.set_sync_debug_mode("default")
        for name in ("threshold", "num_ties", "count", "hit"):
            assert torch.equal(getattr(sel, name), getattr(ref_sel, name)), (k, p, name)
        assert torch.equal(got.view(torch.int32), ref.view(torch.int32)), (k, p)
        x = x0.clone()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            qrita.top_k_top_p(x, k, p, backend="triton", inplace=True, options=two)
        x.copy_(x0)
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(x.view(torch.int32), ref.view(torch.int32)), (k, p, "graph")
        assert cuda_peak_extra_bytes(lambda x=x, k=k, p=p: qrita.top_k_top_p(
            x, k, p, backend="triton", inplace=True, options=two)) <= 16 << 20


@gpu
@pytest.mark.skipif(not ON_GPU, reason="needs a CUDA GPU")
def test_scratch_memory_is_bounded():
    x = torch.randn(1024, 262144, device="cuda")
    from backends import cuda_peak_extra_bytes

    qrita.select(x, 50, 0.9, backend="triton")  # warm-up (compiles)
    assert cuda_peak_extra_bytes(lambda: qrita.top_k_top_p(x, 50, 0.9, backend="triton", inplace=True)) <= 16 << 20


@pytest.mark.parametrize(("k", "p"), [(5, None), (None, 0.5), (None, None)])
def test_foreign_arrays_keep_absent_k_and_p_absent(k, p):
    """A numpy/cupy caller's absent k or p must reach the kernels as absent (a None
    default once turned an absent p into the logits, read as per-row p)."""
    from qrita.api import make_request
    from qrita.backends.triton import _as_torch, _torch_request

    x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(2, 6)
    req, _ = make_request(x, k, p)
    treq = _torch_request(req)
    assert treq.k == k and treq.p == p
    assert isinstance(_as_torch(req), torch.Tensor)


def test_vocab_beyond_the_fixed_point_range_is_refused():
    """V > 2**23 would overflow the int64 fixed-point mass sums: the backend says so, writes nothing."""
    from qrita.backends.triton import MAX_VOCAB

    x = torch.full((1, MAX_VOCAB + 1), 0.5, device=DEVICE)
    with pytest.raises(qrita.QritaError, match="V <= 8388608"):
        qrita.top_k_top_p(x, 5, None, backend="triton", inplace=True)
    assert bool((x == 0.5).all())


# the interpreter runs bf16 only (CI time; it is the dtype that needs the upcast before arithmetic)
@pytest.mark.parametrize("dtype", [torch.bfloat16] if INTERPRETED else [torch.float32, torch.float16, torch.bfloat16])
@pytest.mark.parametrize("small_slots", [False, True], ids=["default", "small_slots"])
def test_sample_draws_the_array_paths_tokens(dtype, small_slots, monkeypatch):
    """The Triton draw gives the generic path's tokens: ties at the boundary, +inf (which takes
    all of the mass), NaN, rows of -inf, per-row k/p, a row that keeps everything, and a 1-D row.

    Rows that hit are drawn from their candidate slot, the others from the row itself;
    ``small_slots`` (short spans, 64-key slots) splits rows over spans and sends the
    wider kept sets through slot overflows, miss rounds and the row draw, and draws and ties over
    several slot steps (``SLOT_CHUNK``; ``SAMPLE_SLOT_CHUNK``, the default of the option ``sample_chunk``).
    The slot draw runs in a launch of its own (the default) and in the slot tie kernel (``fuse_draw``); the
    token of a row drawn from the row is picked by its last part program (``fold_pick``, the default) and
    by a launch of its own."""
    if small_slots:
        monkeypatch.setattr(triton_launch, "MAX_SPAN", 512)
        monkeypatch.setattr(triton_launch, "SPAN_CAP", 64)
        monkeypatch.setattr(triton_launch, "SLOT_CHUNK", 32)
        monkeypatch.setattr(triton_launch, "SAMPLE_SLOT_CHUNK", 16)
    rng = np.random.default_rng(11)
    # on a GPU, small slots at V=151936 make 297 spans a row and a 32768-key register tile: still running
    # after minutes (H200, session 15 call C): 20000 entries make 40 spans
    V = 2500 if INTERPRETED else (20000 if small_slots else 151936)
    x = np.round(rng.standard_normal((7, V)) * 3).astype(np.float32)  # many ties
    x[1, [7, 900, V - 1]] = np.inf
    x[2, :] = -np.inf
    x[3, rng.integers(0, V, 40)] = np.nan
    x[6] = rng.standard_normal(V)  # a wide top-p set: the truncation misses
    xt = torch.from_numpy(x).to(dtype=dtype, device=DEVICE)
    k = torch.tensor([5, 3, 10, 0, V, 50, 0], device=DEVICE)
    p = torch.tensor([1.0, 0.9, 0.5, 0.7, 1.0, 0.3, 0.95], device=DEVICE)
    seeds = torch.arange(7, device=DEVICE) * 1000 + 3
    for ties in ("lowest_index", "all"):
        want = qrita.sample(xt.cpu(), k.cpu(), p.cpu(), seeds=seeds.cpu(), backend="numpy", ties=ties)
        got = qrita.sample(xt, k, p, seeds=seeds, backend="triton", ties=ties)
        assert got.dtype == torch.int64 and got.device == xt.device
        assert got.cpu().tolist() == want.tolist()
        # the slot draw in the slot tie kernel (the option fuse_draw), the pick of a row drawn from the row in a
        # launch of its own (fold_pick off)
        for name, value in (("FUSE_DRAW", True), ("FOLD_PICK", False)):
            with monkeypatch.context() as m:
                m.setattr(triton_launch, name, value)
                other = qrita.sample(xt, k, p, seeds=seeds, backend="triton", ties=ties)
            assert other.cpu().tolist() == want.tolist(), name
    assert got[2].item() == -1 and got[1].item() in (7, 900, V - 1)
    one = qrita.sample(xt[0], 20, 0.8, seeds=5, backend="triton")
    assert one.shape == () and one.item() == qrita.sample(xt[0].cpu(), 20, 0.8, seeds=5, backend="numpy").item()


def test_float32_pre_race_noise_is_within_its_tolerance():
    """The sample pass trusts its float32 noise to within FILTER_TOL / 2 of the exact float64 noise
    (on a GPU, with its approximate logs): checked here over random bits and the extremes of u."""
    gen = np.random.default_rng(5)
    n = 4096
    raw = gen.integers(0, 2**64, n, dtype=np.uint64)
    top = np.uint64(2**64 - 1)
    extremes = [0, 1 << 11, top, top - np.uint64(1 << 11), top - np.uint64(1 << 30), top - np.uint64(1 << 50),
                np.uint64(1) << np.uint64(63), np.uint64(3) << np.uint64(62), top - (np.uint64(1) << np.uint64(57))]
    raw[: len(extremes)] = extremes
    # below 2**-7 from 1 (the series) and just above it (the log)
    raw[100:1100] = top - gen.integers(0, 2**58, 1000, dtype=np.uint64)
    raw[1100:2100] = top - (np.uint64(1) << np.uint64(57)) - gen.integers(0, 2**56, 1000, dtype=np.uint64)
    bits = torch.from_numpy(raw.view(np.int64)).to(DEVICE)
    out = torch.empty(n, dtype=torch.float32, device=DEVICE)
    _noise_kernel[(1,)](bits, out, N=n)
    want = np.array([core_rng.gumbel_from_bits(int(b)) for b in raw])
    got = out.cpu().numpy().astype(np.float64)
    finite = np.isfinite(want)
    assert np.array_equal(np.isfinite(got), finite)
    assert np.max(np.abs(got[finite] - want[finite])) < float(triton_kernels.FILTER_TOL.value) / 8


def test_stream_states_in_one_launch_are_the_generic_mix():
    """``qrita.sample`` mixes the raw seeds with the backend's one-launch ``mix64``: the bits of the
    generic torch path and of ``qrita.core.rng`` (the extremes, zero and -1 included)."""
    from qrita import sampling
    from qrita.core import rng

    g = torch.Generator().manual_seed(3)
    raw = torch.randint(-(2**63), 2**63 - 1, (3000,), dtype=torch.int64, generator=g)
    raw[:4] = torch.tensor([0, -1, 2**63 - 1, -(2**63)])
    raw = raw.to(DEVICE)
    got = triton_launch.mix_states(raw.clone())
    assert torch.equal(got, sampling._mix64(raw.clone(), "torch"))
    for z, want in zip(raw[:8].cpu().tolist(), got[:8].cpu().tolist(), strict=True):
        assert want & rng.MASK64 == rng.mix64(z & rng.MASK64)
    assert triton_launch.mix_states(raw[:0].clone()).numel() == 0


@pytest.mark.parametrize("pattern", [0xFF, 0x5A], ids=["ones", "0x5a"])
def test_poisoned_scratch_changes_no_answer(pattern, monkeypatch):
    """Every buffer the launch allocates (scratch and outputs) starts as garbage: integers filled
    with ``pattern`` bytes, floats with NaN. No kernel may read an entry that no kernel wrote, so
    select, masking and sampling give the bits of a normal call, on rows that hit, miss, take two
    cuts, cut ties and keep nothing, with a top-k, a top-p and both."""
    rng = np.random.default_rng(47)
    V = 1500
    x = np.round(rng.standard_normal((6, V)) * 3).astype(np.float32)  # ties
    x[1] = rng.standard_normal(V)  # a wide top-p set: a miss
    x[2:4] = _mass_concentrated(48, 2, V)  # two cuts hit
    x[4, :] = -np.inf
    x[5, ::3] = np.nan
    xt = torch.from_numpy(x).to(device=DEVICE)
    seeds = torch.arange(6, device=DEVICE) * 7 + 1
    opts = dict(span=256, span_cap=32)
    requests = [(7, None), (None, torch.tensor([0.9, 0.9, 0.95, 0.6, 0.5, 0.7], device=DEVICE)), (40, 0.8)]

    def answers(opts=opts, requests=requests):
        out = []
        for k, p in requests:
            sel = qrita.select(xt, k, p, backend="triton", options=opts)
            out += [sel.threshold.view(torch.int32), sel.num_ties, sel.count, sel.hit]
            out.append(qrita.top_k_top_p(xt, k, p, backend="triton", options=opts, mask_value=-5.0).view(torch.int32))
        return out

    ref = answers()
    for k, p in requests:
        _check(xt, k, p, "lowest_index", qrita.select(xt, k, p, backend="triton", options=opts))
    real_empty = torch.empty

    def poisoned(*args, **kwargs):
        t = real_empty(*args, **kwargs)
        if t.dtype.is_floating_point:
            t.fill_(float("nan"))
        elif t.numel():
            t.view(torch.uint8).fill_(pattern)
        return t

    monkeypatch.setattr(triton_launch, "SPAN_CAP", 32)
    monkeypatch.setattr(triton_launch, "MAX_SPAN", 256)
    tokens = qrita.sample(xt, 40, 0.8, seeds=seeds, backend="triton")
    with monkeypatch.context() as m:
        m.setattr(torch, "empty", poisoned)
        got = answers()
        got_tokens = qrita.sample(xt, 40, 0.8, seeds=seeds, backend="triton")
        # one row a wave, the waves alternating over two scratch sets (option streams): the second set's
        # buffers are garbage too until its first wave writes them
        m.setattr(triton_launch, "SCRATCH_BYTES", 1)
        got_streams = answers(dict(opts, streams=2), requests[:2])
    for i, (a, b) in enumerate(zip(got, ref, strict=True)):
        assert torch.equal(a, b), i
    assert torch.equal(got_tokens, tokens)
    for i, (a, b) in enumerate(zip(got_streams, ref[:10], strict=True)):
        assert torch.equal(a, b), ("streams", i)


@gpu
@pytest.mark.skipif(not ON_GPU, reason="needs a CUDA GPU")
@pytest.mark.parametrize("share", [None, 4], ids=["default", "share4"])
def test_top_p_hits_over_large_slots_match_the_oracle(share):
    """Top-p rows that hit with thousands of candidates (the finish's 4096- and 8192-key register
    tiles): every row against the oracle.  LLM-like logits (a N(0, 2^2) floor and 20 strong
    logits), top-p 0.99 puts the boundary near the floor's 1000th key.  With two_cut_share=4 the
    eighth session found rows 289 and 658 of this batch outside SPEC (a NaN threshold, a short
    count): the finish's top-p target differed in its last bit between threads (a contracted
    tree reduction, ``kernels.span_masses``), which the interpreter cannot show."""
    g = torch.Generator(device="cuda").manual_seed(0)
    B, V = 1024, 131072
    x = torch.randn(B, V, device="cuda", generator=g) * 2.0
    idx = torch.randint(0, V, (B, 20), device="cuda", generator=g)
    x.scatter_(1, idx, 12.0 + 4.0 * torch.rand(B, 20, device="cuda", generator=g))
    opts = {} if share is None else dict(two_cut_share=share)
    for p in (0.99, 0.95) if share is None else (0.99,):  # the oracle takes ~30 s a pass over the batch
        _check(x, None, p, "lowest_index", qrita.select(x, None, p, backend="triton", options=opts))
