"""``backend="numba"``: the Numba-CUDA kernels, judged by the oracle.

Two ways to run it:

* CPU, in Numba's CUDA simulator (small shapes; what CI runs)::

      NUMBA_ENABLE_CUDASIM=1 PYTHONPATH=. python -m pytest tests/test_numba_backend.py

* GPU, real shapes (``@pytest.mark.gpu``)::

      PYTHONPATH=. python3 -m pytest tests/test_numba_backend.py -m gpu

Every comparison is exact: ``(threshold, num_ties, count)`` through
``qrita.reference.check_selection``, and raw output bits where two runs must
agree (split vs unsplit, repeated calls, batch invariance).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest

import qrita
from qrita.backends import _load
from qrita.reference import check_selection

torch = pytest.importorskip("torch")
numba_cuda = pytest.importorskip("numba.cuda")

BACKEND = _load("numba")
if isinstance(BACKEND, str):  # pragma: no cover - the module itself failed to import
    pytest.skip(BACKEND, allow_module_level=True)
SIMULATED = BACKEND.simulated
INF, NAN = math.inf, math.nan
TIES = ("lowest_index", "all")

sim = pytest.mark.skipif(
    not SIMULATED, reason="runs the kernels in Numba's CUDA simulator: set NUMBA_ENABLE_CUDASIM=1 for this process"
)
gpu = pytest.mark.gpu


# ---- helpers ----------------------------------------------------------------------------------


def as_logits(values, dtype: str, device: str = "cpu"):
    """float64 values rounded to ``dtype``: numpy for float32/float16 on the CPU, torch otherwise."""
    v = np.asarray(values, dtype=np.float64)
    if device == "cpu" and dtype != "bfloat16":
        with np.errstate(over="ignore"):  # 3e38 -> inf in float16 is intended
            return v.astype(dtype)
    return torch.from_numpy(v.copy()).to(getattr(torch, dtype)).to(device)


def host(a):
    """numpy copy of an array (floats as float64); scalars and None pass through."""
    if a is None or isinstance(a, (int, float)):
        return a
    if isinstance(a, torch.Tensor):
        t = a.detach().cpu()
        return (t.double() if t.is_floating_point() else t).numpy()
    return np.asarray(a, dtype=np.float64 if np.asarray(a).dtype.kind == "f" else None)


def raw(a) -> np.ndarray:
    """Raw bits of an output array (compares -0.0 and NaN payloads too)."""
    if isinstance(a, torch.Tensor):
        t = a.detach().cpu().contiguous()
        if t.is_floating_point():
            t = t.view({2: torch.int16, 4: torch.int32}[t.element_size()])
        return t.numpy().copy()
    a = np.ascontiguousarray(a)
    return a.view(f"uint{a.dtype.itemsize * 8}").copy() if a.dtype.kind == "f" else a.copy()


def run(x, k=None, p=None, ties="lowest_index", **options):
    return qrita.select(x, k=k, p=p, backend="numba", ties=ties, options=options or None)


def check(x, k, p, ties, sel):
    """The selection equals the oracle's (top-p within SPEC's ambiguity window)."""
    check_selection(host(x), host(k), host(p), ties, host(sel.threshold), host(sel.num_ties), host(sel.count))


def same_bits(a, b):
    for field in ("threshold", "num_ties", "count", "hit"):
        np.testing.assert_array_equal(raw(getattr(a, field)), raw(getattr(b, field)), err_msg=field)


def adversarial_rows(rng, V: int) -> np.ndarray:
    """``[12, V]`` float64 rows that break naive selection: ties, constant rows, +-inf, NaN, zeros."""
    rows = [
        rng.standard_normal(V),  # Gaussian
        rng.integers(-3, 4, V).astype(float),  # heavy ties everywhere
        np.full(V, 0.25),  # all equal
        np.full(V, -INF),  # nothing keepable (a grammar mask)
        np.full(V, NAN),  # nothing keepable
        np.where(rng.random(V) < 0.9, -INF, rng.standard_normal(V)),  # mostly masked
        np.where(rng.random(V) < 0.05, INF, rng.standard_normal(V)),  # a few +inf
        np.where(rng.random(V) < 0.05, NAN, rng.standard_normal(V) * 30),  # NaN inside
        rng.choice([-0.0, 0.0, 1.0, -1.0], V),  # signed zeros tie
        rng.standard_normal(V) * 2 + np.where(rng.random(V) < 0.03, 12.0, 0.0),  # LLM-like outliers
        rng.choice([-3e38, 3e38, -1e-40, 1e-40, 0.0], V),  # extremes and subnormals
        np.round(rng.standard_normal(V) * 4) / 4,  # few distinct values
    ]
    return np.array(rows)


def per_row_k(V: int, B: int) -> np.ndarray:
    return np.array([1, 3, V // 2, V - 1, V, V + 7, 0, -2, 5, 1, 2, 9][:B] + [4] * max(0, B - 12), dtype=np.int64)


def per_row_p(B: int) -> np.ndarray:
    return np.array([0.5, NAN, 0.9, -0.5, 0.0, 1.0, 0.99, 1e-9, 2.0, 0.3, 0.999, 0.7][:B] + [0.8] * max(0, B - 12))


# ---- simulator: exactness on adversarial rows --------------------------------------------------


@sim
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_adversarial_rows_per_row_k_and_p(dtype, ties, rng):
    V = 211
    x = as_logits(adversarial_rows(rng, V), dtype)
    B = x.shape[0]
    k = torch.from_numpy(per_row_k(V, B)) if isinstance(x, torch.Tensor) else per_row_k(V, B)
    p = per_row_p(B).astype(np.float32)
    p = torch.from_numpy(p) if isinstance(x, torch.Tensor) else p
    for kk, pp in ((k, None), (None, p), (k, p)):
        check(x, kk, pp, ties, run(x, kk, pp, ties))


@sim
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(
    "k, p",
    [
        (1, None),
        (7, None),
        (199, None),
        (200, None),
        (10**6, None),
        (0, None),
        (None, 0.0),
        (None, -1.0),
        (None, 0.6),
        (None, 0.999),
        (None, 1.0),
        (5, 0.4),
        (50, 0.95),
        (200, 0.5),
    ],
)
def test_scalar_k_and_p(k, p, ties, rng):
    x = as_logits(adversarial_rows(rng, 200)[[0, 1, 6, 9]], "float32")
    check(x, k, p, ties, run(x, k, p, ties))


@sim
def test_all_equal_rows_keep_arange_k():
    x = np.full((2, 64), 0.75, dtype=np.float32)
    sel = run(x, k=17)
    np.testing.assert_array_equal(sel.count, [17, 17])
    np.testing.assert_array_equal(sel.num_ties, [17, 17])
    np.testing.assert_array_equal(np.flatnonzero(sel.mask()[0]), np.arange(17))
    sel = run(x, k=17, ties="all")
    np.testing.assert_array_equal(sel.count, [64, 64])


@sim
def test_infinities_nan_and_empty_rows():
    x = np.array(
        [
            [-INF] * 6,
            [NAN] * 6,
            [NAN, -INF, 1.0, NAN, -INF, NAN],
            [INF, 0.0, INF, 5.0, -INF, NAN],
            [1.0, INF, 2.0, 3.0, INF, INF],
        ],
        dtype=np.float32,
    )
    for k, p in ((2, None), (None, 0.5), (3, 0.4), (None, 0.0), (None, None)):
        for ties in TIES:
            sel = run(x, k, p, ties)
            check(x, k, p, ties, sel)
            assert list(sel.count[:2]) == [0, 0] and np.all(np.isneginf(sel.threshold[:2]))
    sel = run(x, p=0.5)  # +inf entries share all of the mass: 2 of 3 reach 0.5 on the last row
    assert sel.count[4] == 2 and sel.threshold[4] == INF


@sim
def test_empty_batch_and_one_dimensional_input(rng):
    sel = run(np.zeros((0, 10), np.float32), k=3, p=0.5)
    assert sel.count.shape == (0,) and sel.threshold.dtype == np.float32
    row = rng.standard_normal(50).astype(np.float16)
    sel = run(row, k=4)
    assert sel.count.shape == () and int(sel.count) == 4 and sel.threshold.dtype == np.float16


@sim
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_non_contiguous_rows(dtype, rng):
    base = adversarial_rows(rng, 300)
    x = as_logits(base, dtype)
    views = [x[:, ::2], x[::3], x.T.T[:, 1:]]
    t = as_logits(base.T.copy(), dtype)  # a [V, B] buffer: the vocab axis has stride B
    views.append(t.T if isinstance(t, np.ndarray) else t.t())
    k, p = 6, 0.8
    for v in views:
        check(v, k, p, "lowest_index", run(v, k, p))


@sim
@pytest.mark.parametrize("ties", TIES)
def test_forced_truncation_misses_and_small_buffers(ties, rng):
    x = as_logits(adversarial_rows(rng, 257), "float32")
    k, p = per_row_k(257, 12), per_row_p(12)
    default = run(x, k, p, ties)
    check(x, k, p, ties, default)
    assert default.hit.any()
    for options in ({"truncation": False}, {"capacity": 5}, {"capacity": 1}, {"truncation": False, "capacity": 3}):
        sel = run(x, k, p, ties, **options)
        check(x, k, p, ties, sel)
        for field in ("threshold", "num_ties", "count"):  # exact either way: same bits
            np.testing.assert_array_equal(raw(getattr(sel, field)), raw(getattr(default, field)))
    assert not run(x, k, p, ties, truncation=False).hit.any()


WIDE_DTYPES = ("float32", "float16", "bfloat16")


RANK_DTYPES = ("float32", "bfloat16")


@sim
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("dtype", RANK_DTYPES)
def test_rank_select_gives_the_pivot_rounds_bits(dtype, ties, rng):
    """A search over a candidate buffer with few live keys ranks them in one pass (``rank_select``,
    on by default; ``rank_live``: 3-pivot rounds until at most that many keys are live; ``rank_groups``: a group of
    threads a key, here where at most 2 keys are live, as with ``rank_live`` 1; ``kp_mass``: the top-p stage of a k+p
    row sums the survivors' mass in one block sum; ``kp_rank``: both stages of a k+p row from one ranking) instead of
    taking 3-pivot rounds to the end: the same answer, bit for bit,
    and the oracle's, on adversarial rows (ties, +-inf, NaN, few distinct values) with per-row and
    scalar k and p (top-k, top-p over the whole row, top-p over the top-k survivors), buffers that
    hold the keys and ones that do not, and the split path.  Each case takes every option set with one request, rotated
    over the cases (a simulated call costs about half a second)."""
    x = as_logits(adversarial_rows(rng, 301), dtype)
    k, p = per_row_k(301, 12), per_row_p(12)
    requests = ((k, None), (None, p), (k, p), (40, 0.8), (3, None), (None, 0.3))
    case = RANK_DTYPES.index(dtype) * len(TIES) + TIES.index(ties)
    for o, options in enumerate(({}, {"capacity": 30}, {"split": 3}, {"capacity": 12, "split": 2})):
        kk, pp = requests[(case + o) % len(requests)]
        rounds = run(x, kk, pp, ties, rank_select=False, **options)
        same_bits(run(x, kk, pp, ties, **options), rounds)  # the default: on, rank_live = RANK_MAX here
        same_bits(run(x, kk, pp, ties, rank_select=True, rank_weighted=False, **options), rounds)
        same_bits(run(x, kk, pp, ties, rank_groups=False, kp_mass=False, **options), rounds)  # a thread a key
        same_bits(run(x, kk, pp, ties, kp_rank=False, **options), rounds)  # a k+p row's two searches
        live = (1, 5, 17)[(case + o) % 3]  # rounds until at most this many keys are live (rotated over the cases)
        same_bits(run(x, kk, pp, ties, rank_live=live, **options), rounds)
        check(x, kk, pp, ties, rounds)


@sim
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("dtype", WIDE_DTYPES)
def test_wide_miss_rounds_give_the_three_pivot_bits(dtype, ties, rng):
    """A search over a row that missed takes wide rounds (256 bins a pass, ``wide_miss``) or the
    paper's 3 pivots a round, and a search over the candidate buffer may take wide rounds too
    (``wide_buffer``): the same answer, bit for bit, on adversarial rows with per-row k and p
    (top-k, top-p, k+p, ties, +-inf, NaN, few distinct values), buffers too small for the live
    keys (so the rounds run over the row), rows that hit, no truncation, and the split path.

    Each of the six (dtype, ties) cases takes every option set with one request, rotated so that
    the six together take every (options, request) pair (a simulated call costs about half a
    second: the whole grid in every case took 55 s a case)."""
    x = as_logits(adversarial_rows(rng, 301), dtype)
    k, p = per_row_k(301, 12), per_row_p(12)
    requests = ((k, None), (None, p), (k, p), (40, 0.8))
    case = WIDE_DTYPES.index(dtype) * len(TIES) + TIES.index(ties)
    for o, options in enumerate(({"capacity": 5}, {"capacity": 30}, {"truncation": False, "capacity": 2},
                                 {"capacity": 7, "split": 3}, {}, {"truncation": False})):
        kk, pp = requests[(case + o) % len(requests)]
        three = run(x, kk, pp, ties, wide_miss=False, rank_select=False, **options)
        for wide in ({"wide_miss": True}, {"wide_buffer": True, "wide_miss": False},
                     {"wide_buffer": True, "wide_miss": True}):
            same_bits(run(x, kk, pp, ties, **wide, **options), three)
        check(x, kk, pp, ties, three)


@sim
@pytest.mark.parametrize(("dtype", "ties"), [("float32", "lowest_index"), ("bfloat16", "all")])
def test_split_wide_rounds_give_the_finish_bits(dtype, ties, rng):
    """On the split path a top-p-only row that misses takes its first wide rounds, and the gather of
    its live keys, with all of its blocks (``split_wide``, on by default): the same bits as the
    finish's own rounds and the oracle's answer, with the rounds' hand-over to the finish in every
    state (a range still open, live keys that fit but are not gathered, gathered, answered) through
    the round count and buffers too small for the live keys; and the same state after the rounds
    whether the pass's last block of a row or a launch of its own picks a round's bin."""
    from qrita.backends.numba import kernels, launch

    x = as_logits(adversarial_rows(rng, 203)[[0, 1, 5, 6, 9, 11]], dtype)
    p = per_row_p(6)
    requests = (p, 0.9, 0.3)
    case = 0 if dtype == "float32" else 1
    for o, options in enumerate(({"split": 3, "capacity": 5}, {"split": 2, "capacity": 12, "split_wide_rounds": 1},
                                 {"split": 4, "truncation": False, "capacity": 3, "split_wide_rounds": 2})):
        pp = requests[(case + o) % len(requests)]
        finish = run(x, None, pp, ties, split_wide=False, **options)
        states = []
        for fold in (True, False):  # the rounds' state, not only the answer (the finish would mend a lost pick)
            launch.SIMULATED_WIDE_STATE.clear()
            same_bits(run(x, None, pp, ties, split_wide_fold=fold, **options), finish)
            states.append(np.concatenate(launch.SIMULATED_WIDE_STATE))
        np.testing.assert_array_equal(states[0][:, :kernels.SW_TICKET], states[1][:, :kernels.SW_TICKET])
        assert (states[0][:, kernels.SW_MODE] != kernels.SW_NONE).any()
        check(x, None, pp, ties, finish)


def same_answer(a, b):
    """The same selection (threshold, num_ties, count), bit for bit; ``hit`` may differ."""
    for field in ("threshold", "num_ties", "count"):
        np.testing.assert_array_equal(raw(getattr(a, field)), raw(getattr(b, field)), err_msg=field)


@sim
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_two_cuts_turn_mass_concentrated_misses_into_hits(dtype, rng):
    """A top-p-only row whose model predicts more candidates than the buffer holds gathers above a
    higher cut (``two_cuts``, on by default): rows whose mass sits in a few strong logits over a
    Gaussian floor then hit where one cut overflowed, and every row's answer is the one cut's, bit
    for bit, and the oracle's (one-block and split path, scalar and per-row p, adversarial rows)."""
    V = 1500
    floor = rng.standard_normal((4, V)) * 2.0
    for r in range(4):
        floor[r, rng.choice(V, 12, replace=False)] += rng.random(12) * 7 + 8
    x = as_logits(np.concatenate([floor, adversarial_rows(rng, V)[[0, 6, 9]]]), dtype)
    p = np.array([0.9, 0.95, 0.5, 0.99, 0.3, 0.9, 0.8])
    for pp, options in ((0.9, {"capacity": 120}), (p, {"capacity": 120, "split": 3})):
        one = run(x, None, pp, two_cuts=False, **options)
        two = run(x, None, pp, **options)
        same_answer(two, one)
        check(x, None, pp, "lowest_index", two)
        hits_one, hits_two = raw(one.hit), raw(two.hit)
        assert hits_two[:4].all() and not hits_one[:2].any(), (hits_one, hits_two)  # rows 0-1: p >= 0.9
        assert (hits_two >= hits_one).all()
    # batch invariance, hits included: the split path and one block a row alike (session 28 had two cuts
    # off by default on the split path for speed; the hits then depended on B)
    same_bits(run(x, None, p, capacity=120, split=3), run(x, None, p, capacity=120))


@sim
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("splits", [2, 3, 5])
def test_split_rows_are_bit_identical(dtype, splits, rng):
    x = as_logits(adversarial_rows(rng, 157)[[0, 1, 2, 5, 6, 9]], dtype)
    B = x.shape[0]
    k = torch.tensor([3, 0, 70, 2, 9, 1])
    p = torch.tensor([0.9, 0.5, 1.0, 0.0, 0.3, 0.99])
    if not isinstance(x, torch.Tensor):
        k, p = k.numpy(), p.numpy()
    for kk, pp in ((k, None), (None, p), (k, p)):
        one = run(x, kk, pp, split=1)
        check(x, kk, pp, "lowest_index", one)
        same_bits(run(x, kk, pp, split=splits), one)
    assert B == 6


@sim
@pytest.mark.parametrize(("dtype", "V"), [("float32", 158), ("bfloat16", 158), ("bfloat16", 157), ("float32", 40)])
def test_scan_prefetch_gives_the_split_scan_bits(dtype, V, rng):
    """``scan_prefetch`` (the split scan's loads a tile ahead, the first before the cut): the bits of the plain
    split scan and the oracle's, with an odd and an even number of whole tiles a split, a partial tile, splits
    without a whole tile (V=40), paired 16-bit words (V even) and unpaired ones (V odd), truncation on and off."""
    x = as_logits(adversarial_rows(rng, V)[[0, 1, 2, 5, 6, 9]], dtype)
    k = torch.tensor([3, 0, 70, 2, 9, 1])
    p = torch.tensor([0.9, 0.5, 1.0, 0.0, 0.3, 0.99])
    if not isinstance(x, torch.Tensor):
        k, p = k.numpy(), p.numpy()
    for kk, pp in ((k, None), (None, p), (k, p)):
        for options in ({"split": 3}, {"split": 2, "truncation": False}):
            pre = run(x, kk, pp, scan_prefetch=True, **options)
            check(x, kk, pp, "lowest_index", pre)
            same_bits(pre, run(x, kk, pp, scan_prefetch=False, **options))
            same_bits(pre, run(x, kk, pp, tie_index=True, **options))


@sim
@pytest.mark.parametrize(("dtype", "V", "tie_max"), [("bfloat16", 158, 512), ("float32", 157, 512),
                                                    ("bfloat16", 157, 512), ("float32", 158, 3)])
def test_tie_index_settles_the_masking_cut(dtype, V, tie_max, rng, monkeypatch):
    """``tie_index``: the finish settles a cut boundary group's masking index from the candidates' entry indices:
    the masked bits are ``Selection.apply``'s, both tie rules, top-k, k+p and top-p, groups of 2-9 equal values cut at
    every place, a group below the truncation cut (left to the masking), and groups larger than ``TIE_MAX`` (3
    here: left to the masking too)."""
    from qrita.backends.numba import kernels

    monkeypatch.setattr(kernels, "TIE_MAX", tie_max)  # the simulator reads the module's globals as it runs
    x = np.round(rng.standard_normal((6, V)) * 4.0) / 4.0  # many small groups
    for r in range(6):
        idx = rng.choice(V, size=2 + r + (r > 3) * 3, replace=False)
        x[r, idx] = 9.0  # a group at the top
    x[5] = np.round(rng.standard_normal(V))  # a few values: the groups below any cut
    xs = as_logits(x, dtype)
    n_top = [2 + r + (r > 3) * 3 for r in range(6)]
    k = np.array([1, 2, n_top[2] - 1, n_top[3] + 1, n_top[4] - 2, 40])
    p = np.array([0.9, 0.99, 0.5, 0.999, 0.95, 0.7])
    for ties in TIES:
        for kk, pp in ((k, None), (k, p), (2, None), (None, p)):  # top-p alone: the split wide rounds run too
            want = raw(run(xs, kk, pp, ties).apply(mask_value=-7.0))
            for tie_index in (True, False):
                got = qrita.top_k_top_p(xs, kk, pp, backend="numba", ties=ties, mask_value=-7.0,
                                        options={"split": 3, "tie_index": tie_index})
                np.testing.assert_array_equal(raw(got), want)


@sim
@pytest.mark.parametrize(("name", "value"), [("split", -1), ("split", 2.5), ("capacity", 0), ("capacity", True),
                                             ("split_wide_rounds", 0), ("split_wide_rounds", "3"),
                                             ("rank_live", 0), ("rank_live", 1.5), ("mask_blocks", 1),
                                             ("mask_blocks", 5)])
def test_integer_options_are_checked_before_any_write(name, value):
    """A bad integer option is a QritaValueError naming it and what it takes, even where the path that would
    read it is not taken (B=0), and the logits of an in-place masking are untouched."""
    x = np.linspace(-1.0, 1.0, 40, dtype=np.float32).reshape(2, 20)
    before = x.copy()
    for logits in (x, x[:0]):
        with pytest.raises(qrita.QritaValueError, match=rf"options\['{name}'\] must be"):
            qrita.select(logits, k=3, p=0.9, backend="numba", options={name: value})
    with pytest.raises(qrita.QritaValueError, match=rf"options\['{name}'\] must be"):
        qrita.top_k_top_p(x, 3, 0.9, backend="numba", inplace=True, options={name: value})
    np.testing.assert_array_equal(x, before)


@sim
def test_split_rows_with_misses_and_overflow(rng):
    x = as_logits(adversarial_rows(rng, 130), "float16")
    k, p = per_row_k(130, 12), per_row_p(12).astype(np.float32)
    one = run(x, k, p, capacity=4)
    check(x, k, p, "all", run(x, k, p, "all", capacity=4, split=4))
    same_bits(run(x, k, p, capacity=4, split=4), one)
    same_bits(run(x, k, p, truncation=False, split=3), run(x, k, p, truncation=False))


@sim
def test_torch_in_torch_out_and_deterministic(rng):
    x = as_logits(adversarial_rows(rng, 96), "bfloat16")
    k = torch.from_numpy(per_row_k(96, 12))
    p = torch.from_numpy(per_row_p(12)).float()
    a = run(x, k, p)
    assert isinstance(a.threshold, torch.Tensor) and a.threshold.dtype == torch.bfloat16
    assert a.num_ties.dtype == torch.int32 and a.count.dtype == torch.int32
    check(x, k, p, "lowest_index", a)
    same_bits(run(x, k, p), a)


@sim
def test_batch_invariant(rng):
    x = as_logits(adversarial_rows(rng, 120), "float32")
    k, p = per_row_k(120, 12), per_row_p(12)
    whole = run(x, k, p)
    for b in (0, 5, 9, 11):
        alone = run(x[b : b + 1], k[b : b + 1], p[b : b + 1])
        np.testing.assert_array_equal(raw(alone.threshold), raw(whole.threshold)[b : b + 1])
        np.testing.assert_array_equal(alone.count, whole.count[b : b + 1])
        np.testing.assert_array_equal(alone.num_ties, whole.num_ties[b : b + 1])


@sim
def test_masking_entry_points(rng):
    x = as_logits(adversarial_rows(rng, 80), "float16")
    k, p = per_row_k(80, 12), per_row_p(12)
    sel = run(x, k, p)
    out = qrita.top_k_top_p(x, k, p, backend="numba")
    keep = sel.mask()
    np.testing.assert_array_equal(raw(out)[keep], raw(x)[keep])
    assert np.all(np.isneginf(out[~keep]))


@sim
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("loads_first", [True, False])
def test_fused_mask_matches_selection_apply(rng, dtype, ties, loads_first):
    """The fused mask kernels (cut index + mask, no [B, V] scratch) give Selection.apply's bits, out of
    place and in place, with ``mask_kernel``'s loads back to back (option ``mask_loads``, the default) or
    each entry loaded, then written (off); 60 columns: whole and partial blocks of the mask either way."""
    x = as_logits(adversarial_rows(rng, 60), dtype)
    k, p = per_row_k(60, 12), per_row_p(12)
    opts = {"mask_loads": loads_first}
    want = run(x, k, p, ties).apply(mask_value=-7.0)
    out = qrita.top_k_top_p(x, k, p, backend="numba", ties=ties, mask_value=-7.0, options=opts)
    np.testing.assert_array_equal(raw(out), raw(want))
    y = x.clone() if hasattr(x, "clone") else x.copy()
    res = qrita.top_k_top_p(y, k, p, backend="numba", ties=ties, mask_value=-7.0, inplace=True, options=opts)
    assert res is y
    np.testing.assert_array_equal(raw(y), raw(want))


@sim
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_mask_blocks_give_the_same_bits(rng, dtype, monkeypatch):
    """Option ``mask_blocks`` (3, 4: ``mask_kernel`` compiled for more blocks an SM; the simulator ignores launch
    bounds, so this checks the launcher's choice of kernel and that each gives the default's bits): k+p masking,
    out of place and in place; the cut settled in the mask blocks (``cut_in_mask``) and by the cut index."""
    from qrita.backends.numba import kernels, launch

    x = as_logits(adversarial_rows(rng, 60), dtype)
    k, p = per_row_k(60, 12), per_row_p(12)
    want = raw(run(x, k, p, "lowest_index").apply(mask_value=-7.0))
    launched = []
    for name in ("mask_kernel_b3", "mask_kernel_b4"):
        real = getattr(kernels, name)

        class Counted:
            def __getitem__(self, config, real=real, name=name):
                launched.append(name)
                return real[config]

        monkeypatch.setattr(kernels, name, Counted())
    for spans in (10**6, 0):  # every B in the mask blocks; none
        monkeypatch.setattr(launch, "CUT_IN_MASK_SPANS_PER_SM", spans)
        for blocks in (3, 4):
            opts = {"mask_blocks": blocks}
            out = qrita.top_k_top_p(x, k, p, backend="numba", mask_value=-7.0, options=opts)
            np.testing.assert_array_equal(raw(out), want)
            y = x.clone() if hasattr(x, "clone") else x.copy()
            qrita.top_k_top_p(y, k, p, backend="numba", mask_value=-7.0, inplace=True, options=opts)
            np.testing.assert_array_equal(raw(y), want)
    assert launched == ["mask_kernel_b3"] * 2 + ["mask_kernel_b4"] * 2 + ["mask_kernel_b3"] * 2 + ["mask_kernel_b4"] * 2


PAIR_CASES = [("bfloat16", layout, ties) for layout, ties in (
    ("contiguous", "lowest_index"), ("odd_length", "all"), ("column_slice", "all"), ("odd_row_stride", "lowest_index"),
    ("split", "lowest_index"), ("one_row", "all"), ("no_select", "all"),
    ("select_pairs", "lowest_index"))] + [("float16", "contiguous", "all")]


@sim
@pytest.mark.parametrize(("dtype", "layout", "ties"), PAIR_CASES)
def test_pairs_give_the_unpaired_bits(rng, dtype, layout, ties):
    """16-bit rows read as 32-bit words (option ``pairs``, kernels.PAIRED) give the bits of one load an entry:
    ``select`` and masking, out of place and in place, k+p and top-p alone, on layouts that pair (even rows at
    even offsets: contiguous, a column slice of a wider array, the split path, one row) and that do not (odd
    row length, odd row stride), where the launcher falls back to 2-byte loads, with ``pairs_select`` off (the
    default: the one-block-a-row select kernel reads 2-byte entries, the mask words) and on; a tie rule a case."""
    width = {"odd_length": 61, "odd_row_stride": 61}.get(layout, 64)
    wide = adversarial_rows(rng, width + 2)
    if layout == "one_row":
        wide = wide[9:10]
    x = as_logits(wide, dtype)
    x = x[:, 2:] if layout in ("column_slice", "odd_row_stride") else x[:, :width]
    B = x.shape[0]
    k, p = per_row_k(width, B), per_row_p(B)
    split = {"split": 3} if layout == "split" else {"pairs_select": False} if layout == "no_select" else \
        {"pairs_select": True} if layout == "select_pairs" else {}
    for kk, pp in ((k, p), (None, p)):
        same_bits(run(x, kk, pp, ties, pairs=False, **split), run(x, kk, pp, ties, pairs=True, **split))
        masked = [qrita.top_k_top_p(x, kk, pp, backend="numba", ties=ties, mask_value=-0.0,
                                    options={"pairs": on, **split}) for on in (False, True)]
        np.testing.assert_array_equal(raw(masked[0]), raw(masked[1]))
        y = x.clone() if hasattr(x, "clone") else x.copy()
        qrita.top_k_top_p(y, kk, pp, backend="numba", ties=ties, mask_value=-0.0, inplace=True,
                          options={"pairs": True, **split})
        np.testing.assert_array_equal(raw(y), raw(masked[0]))


@sim
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_fused_mask_cut_settled_by_the_search_or_found_in_the_row(rng, dtype):
    """The masking's cut index of the threshold's tie group: the search settles it where the
    group is kept whole or not at all, and ``cut_index_kernel`` reads the row for it where the
    group is cut, also many chunks into the row (a group of 550 cut at its 510th entry, a row
    of one group cut anywhere): Selection.apply's bits, both tie rules, top-k, k+p and top-p."""
    V = 600
    x = np.round(rng.standard_normal((6, V)) * 3)  # about 20 values: large tie groups everywhere
    x[0] = rng.permutation(V)  # no ties: every boundary group is one entry, kept whole
    x[1] = 0.0
    x[1, :50] = 1.0  # 50 ones, then 550 zeros: k=560 keeps the ones and the first 510 zeros
    x[2] = 2.5  # one group: k cuts it at its k-th entry
    x[3, 7] = 40.0  # one large logit: top-p keeps it alone
    k = np.array([37, 560, 333, 5, 1, 100])
    for ties in TIES:
        for kk, pp in ((k, None), (k, 0.8), (None, 0.7)):
            xs = as_logits(x, dtype)
            want = raw(run(xs, kk, pp, ties).apply(mask_value=-7.0))
            np.testing.assert_array_equal(raw(qrita.top_k_top_p(xs, kk, pp, backend="numba", ties=ties,
                                                                mask_value=-7.0)), want)
            if pp is None:  # in place too (the same kernels, another target)
                res = qrita.top_k_top_p(xs, kk, pp, backend="numba", ties=ties, mask_value=-7.0, inplace=True)
                np.testing.assert_array_equal(raw(res), want)


@sim
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("mode", ["row", "row_words", "in_mask", "in_mask_words"])
def test_fused_mask_cut_found_groups_into_the_row(rng, dtype, mode, monkeypatch):
    """``cut_index_kernel`` counts the entries equal to the threshold a group of chunks at a time (in
    the simulator a chunk is 32 entries, a group 2048) and scans one chunk in index order: the cut of
    the boundary group found in the second and third groups, just past a group's edge, in the row's
    tail (V not a multiple of a chunk), in a row of one value and in rows of a few; or, with option
    ``cut_groups`` off, every chunk scanned: Selection.apply's bits, both tie rules; ``row_words``: V even, so
    that 16-bit rows are read as words (option ``pairs``) by the cut index and the mask.  ``in_mask`` (option
    ``cut_in_mask``): no cut index kernel; the mask blocks settle the cut from ``cut_count_kernel``'s counts of
    their spans (32 entries in the simulator, 64 for words: ``in_mask_words``, V even), the block that holds the
    cut scanning its span."""
    from qrita.backends.numba import launch

    in_mask = mode.startswith("in_mask")
    monkeypatch.setattr(launch, "CUT_IN_MASK", in_mask)
    monkeypatch.setattr(launch, "CUT_IN_MASK_SPANS_PER_SM", 10**6)  # every B (the simulator's 2 SMs)
    V = 5002 if mode.endswith("_words") else 5003
    x = np.full((5, V), 1.0)  # row 0: one value, k cuts it in the third group
    x[1] = np.round(rng.standard_normal(V))  # a few values: large groups everywhere
    x[2] = -1.0
    x[2, ::7] = 2.0  # 715 twos: k cuts them late
    x[3, :10] = 5.0  # ten fives, then ones: the 2047th one sits just past the first group
    k = np.array([4100, 2600, 700, 10 + 2047, V - 1])
    xs = as_logits(x, dtype)
    for ties in TIES:
        want = raw(run(xs, k, None, ties).apply(mask_value=-7.0))
        # option cut_groups off: every chunk scanned, one after another; mask_counts off: cut_count_kernel's counts
        for options in ({"cut_groups": True}, {"cut_groups": False}, {"mask_counts": False}):
            got = qrita.top_k_top_p(xs, k, None, backend="numba", ties=ties, mask_value=-7.0, options=options)
            np.testing.assert_array_equal(raw(got), want)


@sim
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("split", [0, 3])
def test_mask_counts_count_the_spans_in_the_mask_blocks(rng, dtype, split, monkeypatch):
    """Option ``mask_counts``: no count kernel; the mask blocks of a row whose boundary group is cut take their
    spans by a ticket, count them and add the earlier spans' published counts: Selection.apply's bits, both tie
    rules, on the one-block-a-row path and the split path (``tie_index`` off there too, so that the cut is left to
    the mask), rows whose group is cut in the first span, a middle one, the last, and rows whose cut the search
    settles, side by side; in place too."""
    from qrita.backends.numba import kernels, launch

    class NotLaunched:
        def __getitem__(self, _config):
            raise AssertionError("cut_count_kernel launched under mask_counts")

    monkeypatch.setattr(launch, "CUT_IN_MASK_SPANS_PER_SM", 10**6)  # every B (the simulator's 2 SMs)
    monkeypatch.setattr(kernels, "cut_count_kernel", NotLaunched())
    V = 998  # 32 spans of 32 entries (16-bit rows as words: 16 of 64), the last one short
    x = np.round(rng.standard_normal((5, V)) * 2.0) / 2.0
    x[0, :] = 1.0  # one value: k cuts it in a middle span
    x[1, [3, 40, 500, 990]] = 8.0  # a group of four at the top, cut by k = 2 in the first span
    x[2] = -1.0
    x[2, 900::9] = 3.0  # eleven threes in the last spans, cut by k = 10
    x[3, 7] = 9.0  # a single top entry: the search settles the cut (the row's blocks take no ticket)
    k = np.array([517, 2, 10, 1, 200])
    xs = as_logits(x, dtype)
    options = {"tie_index": False} | ({"split": split} if split else {})
    for ties in TIES:
        want = raw(run(xs, k, None, ties).apply(mask_value=-7.0))
        got = qrita.top_k_top_p(xs, k, None, backend="numba", ties=ties, mask_value=-7.0, options=options)
        np.testing.assert_array_equal(raw(got), want)
        y = xs.clone() if isinstance(xs, torch.Tensor) else xs.copy()
        qrita.top_k_top_p(y, k, None, backend="numba", ties=ties, mask_value=-7.0, inplace=True, options=options)
        np.testing.assert_array_equal(raw(y), want)


# ---- simulator: the pieces -------------------------------------------------------------------


@sim
def test_core_state_machine_is_reused_not_rewritten():
    from qrita.backends.numba import kernels
    from qrita.core import search

    for name in ("pivot", "classify_pivot", "narrow_lo", "narrow_hi", "topk_num_ties"):
        assert getattr(kernels, name).py_func is getattr(search, name)


@sim
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
def test_keys_match_core(dtype, rng):
    """Every 16-bit pattern (a sample of 32-bit ones) maps to the core's order, and
    thresholds come back to the exact input bits."""
    from qrita.backends.numba import kernels
    from qrita.core.keys import float_from_bits, keys_from_bits

    if dtype == "float32":
        bits = rng.integers(0, 2**32, 4000, dtype=np.uint64).astype(np.uint32)
    else:
        bits = np.ascontiguousarray(np.arange(2**16, dtype=np.uint16)[:: 1 if dtype == "float16" else 3])
    keys = np.zeros(bits.size, np.int64)
    back = np.zeros(bits.size, np.int64)
    kernels.keys_kernel[1, kernels.THREADS](bits, kernels.FMT_OF_DTYPE[dtype], keys, back)
    # order: the widened keys sort exactly like the values (NaN lowest, -0.0 == +0.0)
    with np.errstate(invalid="ignore"):  # NaN payloads widen noisily in numpy
        values = float_from_bits(bits, dtype).astype(np.float64)
    core = keys_from_bits(bits, dtype).astype(np.int64)
    order = np.argsort(keys, kind="stable")
    assert np.array_equal(np.argsort(core, kind="stable"), order)
    nan = np.isnan(values)
    assert np.all(keys[nan] == 0)
    np.testing.assert_array_equal(back[~nan], bits[~nan].astype(np.int64))


@sim
def test_capabilities_in_the_simulator():
    caps = BACKEND.capabilities
    assert "cpu" in caps.devices and "numpy" in caps.libs and "bfloat16" in caps.dtypes
    assert BACKEND.unavailable_reason() is None
    req_auto = qrita.select(np.zeros((1, 4), np.float32), k=1)
    assert req_auto.backend != "numba"  # "auto" never picks a simulator


def test_unavailable_without_gpu_or_simulator_says_why():
    """Without a GPU and without the simulator, the reason names the problem and the fix."""
    code = "import qrita; print(qrita.available_backends()['numba'])"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.getcwd(), env.get("PYTHONPATH", "")) if p)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    reason = out.stdout.strip()
    if reason == "None":
        pytest.skip("a CUDA device is present: the numba backend is available")
    assert "no CUDA device" in reason or 'pip install "qrita[numba]"' in reason, out


# ---- GPU: real shapes (run on the device machine) ----------------------------------------------

needs_cuda = pytest.mark.skipif(
    SIMULATED or not torch.cuda.is_available(), reason="needs a CUDA GPU (and no NUMBA_ENABLE_CUDASIM)"
)


def llm_logits(B: int, V: int, dtype: str, seed: int = 0):
    """A Gaussian noise floor with a few strong outliers per row, on the GPU."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(B, V, device="cuda", generator=g) * 2.0
    cols = torch.randint(0, V, (B, 16), device="cuda", generator=g)
    x.scatter_add_(1, cols, torch.rand(B, 16, device="cuda", generator=g) * 7 + 8)
    return x.to(getattr(torch, dtype))


def check_rows(x, k, p, ties, sel, rows):
    """Oracle check of some rows (the oracle sorts on the CPU)."""
    rows = torch.as_tensor(rows)
    pick = lambda a: a if a is None or isinstance(a, (int, float)) else a[rows.to(a.device)]  # noqa: E731
    check_selection(
        host(x[rows.to(x.device)]),
        host(pick(k)),
        host(pick(p)),
        ties,
        host(sel.threshold[rows.to(x.device)]),
        host(sel.num_ties[rows.to(x.device)]),
        host(sel.count[rows.to(x.device)]),
    )


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("V", [32000, 128256, 151936, 262144])
def test_gpu_real_shapes(V, dtype):
    B = 64
    x = llm_logits(B, V, dtype, seed=V)
    gen = torch.Generator().manual_seed(1)
    k = torch.randint(1, 200, (B,), generator=gen)
    k[::7] = 0
    k[1::9] = V
    p = torch.rand(B, generator=gen) * 0.98 + 0.01
    p[::5] = 1.0
    p[2::11] = 0.0
    k, p = k.cuda(), p.cuda()
    for ties in TIES:
        for kk, pp in ((k, None), (None, p), (k, p), (50, 0.9), (1, None), (None, 0.5)):
            sel = run(x, kk, pp, ties)
            assert sel.threshold.is_cuda and sel.threshold.dtype == x.dtype
            check_rows(x, kk, pp, ties, sel, range(0, B, 3))
    assert run(x, 50).hit.all()  # the truncation holds on LLM-like rows


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_gpu_large_batch_deterministic_and_batch_invariant(dtype):
    B, V = 1024, 128256
    x = llm_logits(B, V, dtype, seed=7)
    k = torch.randint(1, 100, (B,), device="cuda")
    p = torch.rand(B, device="cuda") * 0.9 + 0.05
    first = run(x, k, p)
    for _ in range(10):
        same_bits(run(x, k, p), first)
    check_rows(x, k, p, "lowest_index", first, list(range(0, B, 37)) + [B - 1])
    for lo, hi in ((0, 1), (5, 8), (500, 564), (1000, 1024)):
        part = run(x[lo:hi].clone(), k[lo:hi].clone(), p[lo:hi].clone())
        for field in ("threshold", "num_ties", "count"):
            np.testing.assert_array_equal(raw(getattr(part, field)), raw(getattr(first, field))[lo:hi], err_msg=field)


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("B", [1, 3, 16])
def test_gpu_split_path_is_bit_identical(B, dtype):
    V = 262144
    x = llm_logits(B, V, dtype, seed=B)
    k = torch.randint(1, 4000, (B,), device="cuda")
    p = torch.rand(B, device="cuda")
    for kk, pp in ((k, None), (None, p), (k, p)):
        one = run(x, kk, pp, split=1)
        for splits in (0, 4, 33):  # 0: the automatic choice (splits at small B)
            same_bits(run(x, kk, pp, split=splits), one)
            same_bits(run(x, kk, pp, split=splits, scan_prefetch=False), one)  # the default takes it
        check_rows(x, kk, pp, "lowest_index", one, range(B))
    same_bits(run(x, k, p, split=8, truncation=False), run(x, k, p, split=1, truncation=False))


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gpu_wide_miss_rounds_give_the_three_pivot_bits(dtype):
    """On the GPU (real concurrency of the bins' atomics): wide miss rounds and 3-pivot rounds give
    the same bits at V=131072, rows that miss (no truncation, Gaussian top-p) and rows that hit, on
    the one-block and the split path."""
    V = 131072
    x = torch.cat([llm_logits(6, V, dtype, seed=7), torch.randn(4, V, device="cuda").to(getattr(torch, dtype))])
    k = torch.tensor([50, 1, 4000, 0, 100, 20, 50, 0, 7, 1000], device="cuda")
    p = torch.tensor([1.0, 0.9, 0.5, 0.9, 0.9, 1.0, 0.99, 0.9, 0.3, 0.8], device="cuda")
    for kk, pp in ((k, None), (None, p), (k, p), (50, None), (None, 0.9)):
        for options in ({}, {"truncation": False}, {"split": 1}, {"split": 1, "truncation": False}):
            wide = run(x, kk, pp, wide_miss=True, **options)
            same_bits(wide, run(x, kk, pp, wide_miss=False, **options))
            same_bits(wide, run(x, kk, pp, wide_miss=True, wide_buffer=True, **options))
        check_rows(x, kk, pp, "lowest_index", wide, range(x.shape[0]))


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gpu_rank_groups_give_the_single_thread_bits(dtype):
    """On the GPU (shuffles; the simulator sums a group through shared memory): ``rank_select`` with a group of
    threads a key, the k+p rows' one mass sum (``kp_mass``) and their one ranking (``kp_rank``), and with one thread
    a key, the 3-pivot mass pass and two searches give the same bits, and the oracle's, at V=131072 on the split path
    (B=10: the finish) and the one-block path (``split`` 1): top-k, top-p over the top-k survivors, per-row and
    scalar requests, ties kept whole and cut."""
    V = 131072
    x = torch.cat([llm_logits(6, V, dtype, seed=11), torch.randn(4, V, device="cuda").to(getattr(torch, dtype))])
    k = torch.tensor([50, 1, 400, 0, 100, 20, 50, 0, 7, 2], device="cuda")
    p = torch.tensor([1.0, 0.9, 0.5, 0.9, 0.9, 1.0, 0.99, 0.9, 0.3, 0.8], device="cuda")
    for kk, pp in ((k, None), (k, p), (50, None), (100, 0.9), (None, 0.9)):
        for ties in TIES:
            for options in ({}, {"split": 1}):
                groups = run(x, kk, pp, ties, rank_groups=True, kp_mass=True, **options)
                same_bits(groups, run(x, kk, pp, ties, rank_groups=False, kp_mass=False, kp_rank=False, **options))
                check_rows(x, kk, pp, ties, groups, range(x.shape[0]))


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("B", [1, 16])
def test_gpu_split_wide_rounds_give_the_finish_bits(B, dtype):
    """On the GPU (real concurrency of the global bins' atomics and the gather's slots): top-p alone
    on the split path, its misses' first wide rounds taken by all of a row's blocks (``split_wide``)
    or by the finish alone, the same bits at every round count, the oracle's answer; LLM-like,
    Gaussian and Zipf-like rows (top-p 0.9 misses the truncation on the last two)."""
    V = 131072
    g = torch.Generator(device="cuda").manual_seed(11 + B)
    gauss = torch.randn(B, V, device="cuda", generator=g)
    zipf = -torch.log(torch.arange(1, V + 1, device="cuda", dtype=torch.float32)).repeat(B, 1)
    zipf = zipf[:, torch.randperm(V, device="cuda", generator=g)] * 1.1
    x = torch.cat([llm_logits(B, V, dtype, seed=B), gauss.to(getattr(torch, dtype)), zipf.to(getattr(torch, dtype))])
    p = torch.rand(x.shape[0], device="cuda", generator=g) * 0.5 + 0.5
    for pp in (0.9, p):
        finish = run(x, None, pp, split_wide=False)
        for rounds in (1, 2, 3, 5):
            same_bits(run(x, None, pp, split_wide_rounds=rounds), finish)
            same_bits(run(x, None, pp, split_wide_rounds=rounds, split_wide_fold=False), finish)
        same_bits(run(x, None, pp, split=1), finish)
        check_rows(x, None, pp, "lowest_index", finish, range(x.shape[0]))


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("B", [16, 300])
def test_gpu_two_cuts_turn_mass_concentrated_misses_into_hits(B, dtype):
    """On the GPU, split path (B=16) and one block a row (B=300):
    LLM-like top-p rows hit with two cuts where one cut overflowed, Gaussian rows miss either way; the
    same answers as one cut and the oracle's, and the same masked logits.  A row whose top-p set has
    more entries than the higher cut holds misses either way (in session 28's H100 run, 33 of 300
    LLM-like rows at p = 0.9: their strong logits are weak, the floor's mass counts); every row whose
    set has at most 16 entries must hit."""
    V = 131072
    x = torch.cat([llm_logits(B, V, dtype, seed=5), torch.randn(4, V, device="cuda").to(getattr(torch, dtype))])
    p = torch.rand(x.shape[0], device="cuda") * 0.3 + 0.7
    for pp in (0.9, p):
        one = run(x, None, pp, two_cuts=False)
        two = run(x, None, pp)
        same_answer(two, one)
        if isinstance(pp, float):  # mostly 1-9 entries needed, 40000 above the one cut
            small = two.count[:B] <= 16
            assert int(small.sum()) >= B // 2, two.count[:B]
            assert bool(two.hit[:B][small].all()) and not bool(one.hit[:B].any()), (two.count[:B], two.hit[:B])
        check_rows(x, None, pp, "lowest_index", two, [0, 1, B - 1, B, B + 3])
        masked = qrita.top_k_top_p(x, None, pp, backend="numba")
        assert torch.equal(masked, qrita.top_k_top_p(x, None, pp, backend="numba", options={"two_cuts": False}))


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_gpu_adversarial_rows(dtype):
    V = 151936
    rng = np.random.default_rng(3)
    rows = np.stack([np.resize(r, V) for r in adversarial_rows(rng, 4096)])
    rows[1] = np.round(rng.standard_normal(V) * 3) / 8  # huge tie groups
    x = as_logits(rows, dtype, "cuda")
    B = x.shape[0]
    k = torch.from_numpy(per_row_k(V, B)).cuda()
    p = torch.from_numpy(per_row_p(B)).float().cuda()
    for ties in TIES:
        for options in ({}, {"truncation": False}, {"split": 6}):
            for kk, pp in ((k, None), (None, p), (k, p), (V // 2, None)):
                check_rows(x, kk, pp, ties, run(x, kk, pp, ties, **options), range(B))


@gpu
@needs_cuda
def test_gpu_strided_and_transposed():
    x = llm_logits(32, 2 * 32000, "float16", seed=5)
    for view in (x[:, ::2], x[::2], x.t().contiguous().t()[:, 7:]):
        check_rows(view, 40, 0.9, "lowest_index", run(view, 40, 0.9), range(view.shape[0]))


@gpu
@needs_cuda
def test_gpu_more_than_2_pow_31_entries():
    B, V = 8200, 262144  # 2.15e9 entries, fp16: 4.3 GB
    x = torch.full((B, V), -1.0, dtype=torch.float16, device="cuda")
    x[:, 5] = 3.0
    x[-1, -3:] = torch.tensor([7.0, 6.0, 5.0], dtype=torch.float16)
    sel = run(x, 2)
    assert sel.count[-1].item() == 2 and sel.threshold[-1].item() == 6.0
    assert sel.threshold[0].item() == -1.0 and sel.num_ties[0].item() == 1
    check_rows(x, 2, None, "lowest_index", sel, [0, B // 2, B - 2, B - 1])
    del x


@gpu
@needs_cuda
def test_gpu_caller_stream_and_cuda_graph():
    x = llm_logits(128, 32000, "bfloat16", seed=11)
    k = torch.full((128,), 20, device="cuda")
    ref = run(x, k, 0.9)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        on_s = run(x, k, 0.9)
    s.synchronize()
    same_bits(on_s, ref)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = run(x, k, 0.9)
    graph.replay()
    torch.cuda.synchronize()
    same_bits(captured, ref)


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gpu_fused_mask_matches_selection_apply(dtype):
    """On the GPU the fused mask kernels (option fused_mask) give Selection.apply's bits, out of
    place and in place: adversarial rows with per-row and scalar requests, LLM-like rows, a strided view."""
    V = 151936
    rng = np.random.default_rng(11)
    rows = np.stack([np.resize(r, V) for r in adversarial_rows(rng, 4096)])
    adv = as_logits(rows, dtype, "cuda")
    B = adv.shape[0]
    k = torch.from_numpy(per_row_k(V, B)).cuda()
    p = torch.from_numpy(per_row_p(B)).float().cuda()
    llm = llm_logits(64, 128256, dtype, seed=12)
    cases = [(adv, kk, pp) for kk, pp in ((k, None), (None, p), (k, p), (V // 2, None), (50, 0.9))]
    cases += [(llm, 50, 0.9), (llm, None, 0.95), (llm[:, 3:100003], 40, None)]
    for ties in TIES:
        for x, kk, pp in cases:
            want = raw(run(x, kk, pp, ties).apply(mask_value=-7.0))
            fused = {"fused_mask": True}
            out = qrita.top_k_top_p(x, kk, pp, backend="numba", ties=ties, mask_value=-7.0, options=fused)
            np.testing.assert_array_equal(raw(out), want)
            y = x.clone()
            res = qrita.top_k_top_p(y, kk, pp, backend="numba", ties=ties, mask_value=-7.0, inplace=True, options=fused)
            assert res is y
            np.testing.assert_array_equal(raw(y), want)


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_gpu_cut_in_mask_gives_selection_apply_bits(dtype):
    """Option ``cut_in_mask`` (the mask blocks settle the cut from their spans' counts: ``cut_count_kernel``'s, or
    with ``mask_counts`` their own and the earlier spans' published ones) and the cut index kernel all give
    Selection.apply's bits where the boundary tie group is cut (values on a grid of 1/8: tens of entries equal to
    the 50th largest), at B = 16, 64 and 128 (on by default there on 132 SMs; bf16 at B = 256 too, the
    one-block-a-row path), out of place and in place; and option ``tie_index`` (the finish settles the cut from the
    candidates' indices), with either behind it."""
    rng = np.random.default_rng(21)
    for B in (16, 64, 128) + ((256,) if dtype == "bfloat16" else ()):
        x = as_logits(np.round(rng.standard_normal((B, 131072)) * 8) / 8, dtype, "cuda")
        for ties in TIES:
            want = raw(run(x, 50, None, ties).apply(mask_value=-7.0))
            for opts in ({"cut_in_mask": False, "tie_index": False}, {"cut_in_mask": True, "tie_index": False},
                         {"cut_in_mask": True, "tie_index": False, "mask_counts": False},
                         {"tie_index": True}, {"tie_index": True, "cut_in_mask": False}):
                out = qrita.top_k_top_p(x, 50, None, backend="numba", ties=ties, mask_value=-7.0, options=opts)
                np.testing.assert_array_equal(raw(out), want)
                y = x.clone()
                qrita.top_k_top_p(y, 50, None, backend="numba", ties=ties, mask_value=-7.0, inplace=True, options=opts)
                np.testing.assert_array_equal(raw(y), want)


@gpu
@needs_cuda
def test_gpu_masked_output_scratch_is_bounded():
    """The fused mask (the default for torch tensors) allocates no [B, V] scratch."""
    x = llm_logits(1024, 151936, "float32", seed=4)
    from backends import cuda_peak_extra_bytes

    def masked():
        return qrita.top_k_top_p(x, 50, 0.9, backend="numba", inplace=True)

    masked()  # warm-up (compiles)
    assert cuda_peak_extra_bytes(masked) <= 16 << 20


@gpu
@needs_cuda
def test_gpu_cupy_in_cupy_out():
    cupy = pytest.importorskip("cupy")
    x = cupy.asarray(host(llm_logits(16, 32000, "float32", seed=2)).astype(np.float32))
    sel = run(x, 30, 0.8)
    assert isinstance(sel.threshold, cupy.ndarray)
    check_selection(x.get(), 30, 0.8, "lowest_index", sel.threshold.get(), sel.num_ties.get(), sel.count.get())


@gpu
@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gpu_fused_mask_of_cupy_arrays(dtype):
    """Fused masking (forced here; the GPU default for cupy arrays since it passed on the H200) gives
    Selection.apply's bits for cupy arrays, out of place and in place."""
    cupy = pytest.importorskip("cupy")
    V = 32000
    rng = np.random.default_rng(13)
    rows = np.concatenate([np.stack([np.resize(r, V) for r in adversarial_rows(rng, 4096)]),
                           host(llm_logits(20, V, "float32", seed=14))])
    vals = rows.astype(dtype)
    B = vals.shape[0]
    k_h, p_h = per_row_k(V, B), per_row_p(B).astype(np.float32)
    opts = {"fused_mask": True}
    for ties in TIES:
        for kk, pp in ((k_h, None), (None, p_h), (k_h, p_h), (50, 0.9)):
            x = cupy.asarray(vals)
            kd = None if kk is None or isinstance(kk, int) else cupy.asarray(kk)
            pd = None if pp is None or isinstance(pp, float) else cupy.asarray(pp)
            want = raw(run(x, kd, pd, ties).apply(mask_value=-7.0).get())
            out = qrita.top_k_top_p(x, kd, pd, backend="numba", ties=ties, mask_value=-7.0, options=opts)
            assert isinstance(out, cupy.ndarray)
            np.testing.assert_array_equal(raw(out.get()), want)
            res = qrita.top_k_top_p(x, kd, pd, backend="numba", ties=ties, mask_value=-7.0, inplace=True, options=opts)
            assert res is x
            np.testing.assert_array_equal(raw(x.get()), want)
