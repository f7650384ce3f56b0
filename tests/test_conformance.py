"""One conformance suite for every backend that can run here, judged by the oracle.

Each test runs on every ``(target, dtype)`` pair of :mod:`backends` (backend x
array library x device x dtype) and compares with :mod:`qrita.reference`
exactly: ``(threshold, num_ties, count)`` through ``check_selection``, masks as
index sets, kept bits bit for bit.  Only probabilities are compared with a
tolerance.  Shapes stay small (``Target.shape``) so that simulated GPU backends
run here too; GPU-sized shapes are in the ``@pytest.mark.gpu`` tests at the end.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from backends import (
    bits,
    check_masked,
    check_request,
    copy,
    dtype_name,
    poisoned_like,
    skipped,
    to_numpy,
)

import qrita
from qrita.reference import check_mask

INF = math.inf
NAN = math.nan
TIES = ("lowest_index", "all")


def gaussian(rng, B, V, scale=1.0):
    return rng.standard_normal((B, V)) * scale


def llm_like(rng, B, V, n_outliers=8):
    """A Gaussian noise floor with a few strong outliers per row (what real logits look like)."""
    x = rng.standard_normal((B, V)) * 2.0
    for b in range(B):
        cols = rng.choice(V, size=min(n_outliers, V), replace=False)
        x[b, cols] += rng.uniform(8.0, 15.0, size=cols.size)
    return x


@pytest.mark.parametrize("name", [s.backend for s in skipped()] or ["-"])
def test_untested_backends_say_why(name):
    """Every registered backend either runs here or is skipped with its reason (visible with -ra)."""
    if name == "-":
        return
    entry = next(s for s in skipped() if s.backend == name)
    assert not entry.broken, f"backend {name!r} is broken: {entry.reason}"
    assert entry.reason, f"backend {name!r} is unavailable without a reason"
    pytest.skip(f"backend {name!r} not tested here: {entry.reason}")


# --------------------------------------------------------------------------------------------
# Random and realistic rows
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(
    ("k", "p"),
    [(1, None), (50, None), (None, 0.1), (None, 0.9), (None, 0.99), (50, 0.9), (7, 0.5)],
)
def test_gaussian_rows(target, dtype, ties, k, p, rng):
    B, V = target.shape(4, 600)
    check_request(target, target.array(gaussian(rng, B, V), dtype), k, p, ties)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [(50, None), (None, 0.9), (50, 0.9), (1, 0.5)])
def test_llm_like_rows(target, dtype, ties, k, p, rng):
    B, V = target.shape(8, 4096)
    check_request(target, target.array(llm_like(rng, B, V), dtype), k, p, ties)


# --------------------------------------------------------------------------------------------
# Ties and duplicates
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [(1, None), (3, None), (10, None), (None, 0.3), (None, 0.8), (5, 0.6), (0, 0.0)])
def test_ties_at_the_boundary(target, dtype, ties, k, p, rng):
    # values from a small integer set: every boundary sits inside a tie group
    B, V = target.shape(4, 64)
    x = rng.integers(-3, 4, size=(B, V)).astype(np.float64)
    check_request(target, target.array(x, dtype), k, p, ties)


def test_boundary_tie_group_hand_case(target, dtype):
    x = target.array([[3.0, 1.0, 2.0, 2.0, 2.0]], dtype)
    sel, _ = check_request(target, x, 2, None, "lowest_index")
    np.testing.assert_array_equal(to_numpy(sel.mask()), [[True, False, True, False, False]])
    sel, _ = check_request(target, x, 3, None, "lowest_index")
    np.testing.assert_array_equal(to_numpy(sel.mask()), [[True, False, True, True, False]])
    sel, _ = check_request(target, x, 2, None, "all")
    np.testing.assert_array_equal(to_numpy(sel.mask()), [[True, False, True, True, True]])
    assert to_numpy(sel.num_ties).tolist() == [3] and to_numpy(sel.count).tolist() == [4]


@pytest.mark.parametrize("value", [0.25, -0.0, 1000.0])
@pytest.mark.parametrize("k", [1, 17, 63])
def test_all_equal_rows_keep_arange_k(target, dtype, value, k):
    B, V = target.shape(3, 64)
    x = target.array(np.full((B, V), value), dtype)
    sel, _ = check_request(target, x, k, None, "lowest_index")
    expected = np.zeros((B, V), dtype=bool)
    expected[:, :k] = True
    np.testing.assert_array_equal(to_numpy(sel.mask()), expected)
    idx, _ = sel.indices()
    np.testing.assert_array_equal(to_numpy(idx), np.tile(np.arange(k), (B, 1)))
    sel, _ = check_request(target, x, k, None, "all")
    assert (to_numpy(sel.count) == V).all() and to_numpy(sel.mask()).all()


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("p", [0.0, 1e-6, 0.5, 0.999])
def test_all_equal_rows_top_p(target, dtype, ties, p):
    B, V = target.shape(2, 600)
    check_request(target, target.array(np.full((B, V), 1.5), dtype), None, p, ties)
    check_request(target, target.array(np.full((B, V), 1.5), dtype), 100, p, ties)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [(20, None), (None, 0.9), (20, 0.7), (200, 0.95)])
def test_low_precision_duplicates(target, dtype, ties, k, p, rng):
    # Dense values rounded hard: bf16/fp16 have long runs of equal values, and so do
    # the wider types here because the data are multiples of 1/8.
    B, V = target.shape(4, 600)
    x = np.round(gaussian(rng, B, V, 3.0) * 8) / 8
    check_request(target, target.array(x, dtype), k, p, ties)


# --------------------------------------------------------------------------------------------
# Special values
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(
    ("k", "p"), [(1, None), (2, None), (5, None), (None, 0.2), (None, 0.5), (None, 0.99), (2, 0.6)]
)
def test_infinities(target, dtype, ties, k, p, rng):
    B, V = target.shape(4, 100)
    x = gaussian(rng, B, V)
    x[:, rng.choice(V, size=V // 3, replace=False)] = -INF
    x[0, [3, 10, 50 % V]] = INF  # three +inf: they share all of the top-p mass
    x[1, 7] = INF
    x[2 % B, :] = -INF
    x[2 % B, 5] = INF
    check_request(target, target.array(x, dtype), k, p, ties)


@pytest.mark.parametrize("ties", TIES)
def test_plus_inf_shares_top_p_mass(target, dtype, ties):
    x = target.array([[INF, 100.0, INF, INF, -INF, 5.0]], dtype)
    sel, _ = check_request(target, x, None, 0.5, ties)  # S = 1/3, 2/3, 1
    assert to_numpy(sel.count).tolist() == ([2] if ties == "lowest_index" else [3])
    sel, _ = check_request(target, x, None, 0.99, ties)  # finite entries carry no mass
    assert to_numpy(sel.count).tolist() == [3]
    sel, _ = check_request(target, x, 2, 0.6, ties)  # renormalised over two +inf survivors
    assert to_numpy(sel.count).tolist() == ([2] if ties == "lowest_index" else [3])


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [(None, None), (1, None), (4, None), (None, 0.5), (3, 0.9), (0, -1.0)])
def test_nan_and_empty_rows(target, dtype, ties, k, p, rng):
    B, V = target.shape(6, 40)
    x = gaussian(rng, 6, V)
    x[0, :] = -INF  # all -inf: keeps nothing, threshold -inf, no NaN anywhere
    x[1, :] = NAN  # only NaN
    x[2, :] = -INF
    x[2, 9] = 1.0  # a single keepable entry
    x[3, rng.choice(V, size=V // 4, replace=False)] = NAN  # NaN is never kept
    x[4, :] = NAN
    x[4, ::2] = -INF  # NaN and -inf only
    sel, _ = check_request(target, target.array(x[:B], dtype), k, p, ties)
    count, threshold, num_ties = (to_numpy(getattr(sel, n)) for n in ("count", "threshold", "num_ties"))
    empty = [r for r in (0, 1, 4) if r < B]
    assert (count[empty] == 0).all() and (threshold[empty] == -INF).all() and (num_ties[empty] == 0).all()
    assert count[2] == 1 and threshold[2] == 1.0


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [(3, None), (5, None), (None, 0.5), (4, 0.7), (1, None)])
def test_signed_zeros(target, dtype, ties, k, p, rng):
    V = 32
    x = np.where(rng.random((4, V)) < 0.5, -0.0, 0.0)
    x[0, :3] = 1.0
    x[1, :] = -0.0
    x[2, :] = [-0.0 if i % 3 else 0.0 for i in range(V)]
    x[3, 5] = -1.0
    B, _ = target.shape(4, V)
    sel, _ = check_request(target, target.array(x[:B], dtype), k, p, ties)
    thr = to_numpy(sel.threshold)
    assert not np.signbit(thr[thr == 0]).any()


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [(3, None), (20, None), (None, 0.5), (10, 0.9)])
def test_subnormal_values(target, dtype, ties, k, p, rng):
    # Rows of the dtype's subnormal values (and zeros of both signs): the sigma-truncation cut then
    # lies among them, and a kernel that compares float values instead of keys (the Triton span
    # pass) must order them exactly as the keys do: no flush to zero anywhere.
    unit = {"float16": 2.0**-24, "bfloat16": 2.0**-133, "float32": 2.0**-149, "float64": 2.0**-1074}[dtype]
    V = 64
    x = rng.integers(-6, 7, size=(4, V)) * unit
    x[1, ::4] = -0.0
    x[2] = np.round(gaussian(rng, 1, V)[0] * 8.0) * unit  # a bell of subnormal values
    x[3, :8] = [1.0, 2 * unit, unit, unit, 0.0, -0.0, -unit, 3 * unit]  # one normal value above them
    B, _ = target.shape(4, V)
    check_request(target, target.array(x[:B], dtype), k, p, ties)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [(1, None), (10, None), (None, 0.5), (None, 0.999999), (10, 0.9)])
def test_extreme_ranges(target, dtype, ties, k, p, rng):
    # A dominant token (exp underflow for everything else), values at the dtype's limits,
    # and a row whose entries differ in the last place only.
    big = {"float16": 60000.0, "bfloat16": 3e38, "float32": 3e38, "float64": 1e300}[dtype]
    tiny = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}[dtype]
    V = 64
    x = np.zeros((4, V))
    x[0] = gaussian(rng, 1, V)
    x[0, 17] = 200.0
    x[1] = rng.uniform(-big, big, V)
    x[2] = 1.0 + tiny * rng.integers(0, 4, V)
    x[3] = -big
    x[3, ::5] = big
    check_request(target, target.array(x, dtype), k, p, ties)


# --------------------------------------------------------------------------------------------
# k and p: scalars, per-row arrays, disabled and out-of-range values
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("args", ["k-rows", "p-rows", "p64-rows", "k-and-p-rows", "k-scalar-p-rows", "k-rows-p-scalar"])
def test_per_row_k_and_p(target, dtype, ties, args, rng):
    # rows ordered so that the first four (all a simulator gets) cover the most cases
    B, V = target.shape(8, 50)
    x = target.array(np.round(gaussian(rng, B, V, 2.0) * 4) / 4, dtype)
    k_rows = np.array([0, V + 5, 3, -1, V, 1, V - 1, 2**40], dtype=np.int64)[:B]
    p_rows = np.array([NAN, 0.3, -0.5, 1.5, 0.0, 1.0, 1e-9, 0.999], dtype=np.float32)[:B]
    k = target.index_array(k_rows)
    p = target.float_array(p_rows)
    k, p = {
        "k-rows": (k, None),
        "p-rows": (None, p),
        "p64-rows": (None, target.float_array(p_rows.astype(np.float64), "float64")),
        "k-and-p-rows": (k, p),
        "k-scalar-p-rows": (5, p),
        "k-rows-p-scalar": (k, 0.5),
    }[args]
    check_request(target, x, k, p, ties)


@pytest.mark.parametrize("kk", [5, 0, "V"])
def test_per_row_values_equal_to_a_scalar_give_the_scalars_answer(target, dtype, kk, rng):
    B, V = target.shape(4, 50)
    kk = V if kk == "V" else kk
    x = target.array(np.round(gaussian(rng, B, V, 2.0) * 4) / 4, dtype)
    for pp in (0.5, 1.0):
        a = qrita.select(
            x, target.index_array(np.full(B, kk)), target.float_array(np.full(B, pp)), backend=target.backend
        )
        s = qrita.select(x, kk, pp, backend=target.backend)
        np.testing.assert_array_equal(to_numpy(a.mask()), to_numpy(s.mask()))


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("k", [0, -5, "V-1", "V", "V+1", 2**70])
def test_k_disabled_or_near_V(target, dtype, ties, k, rng):
    B, V = target.shape(3, 200)
    k = {"V-1": V - 1, "V": V, "V+1": V + 1}.get(k, k)
    x = gaussian(rng, B, V)
    x[0, :10] = NAN  # fewer keepable entries than k
    check_request(target, target.array(x, dtype), k, None, ties)
    check_request(target, target.array(x, dtype), k, 0.9, ties)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("p", [0.0, -1.0, -INF, 1.0, INF, 1e-30])
def test_p_special_scalars(target, dtype, ties, p, rng):
    B, V = target.shape(3, 100)
    x = np.round(gaussian(rng, B, V) * 2) / 2  # ties at the maximum are likely
    x[1, :5] = x[1].max()  # a tie group at the top: p <= 0 keeps one, or all under "all"
    xs = target.array(x, dtype)
    sel, _ = check_request(target, xs, None, p, ties)
    if p <= 0:  # the single best token, or the whole tie group of the maximum under "all"
        values = to_numpy(xs)
        n_max = (values == values.max(axis=1, keepdims=True)).sum(axis=1)
        want = np.ones_like(n_max) if ties == "lowest_index" else n_max
        np.testing.assert_array_equal(to_numpy(sel.count), want)
    check_request(target, target.array(x, dtype), 3, p, ties)


def test_tiny_positive_p_keeps_the_best_token(target, dtype, rng):
    """0 < p far below float32's smallest normal (5e-324 is 0 in float32, 1e-40 subnormal): the best
    token alone holds at least 1/V of the mass, so the answer is the one of p <= 0 (one token of the
    maximum's tie group, or the whole group under "all"), scalar or per row, alone or after a top-k."""
    B, V = target.shape(3, 100)
    x = np.round(gaussian(rng, B, V) * 2) / 2
    x[1, :5] = x[1].max()  # a tie group at the top
    xs = target.array(x, dtype)
    values = to_numpy(xs)
    n_max = (values == values.max(axis=1, keepdims=True)).sum(axis=1)
    per_row = np.array([5e-324, 1e-40, 1e-300][:B] + [1e-45] * max(0, B - 3))
    for ties in TIES:
        want = np.ones_like(n_max) if ties == "lowest_index" else n_max
        for p in (5e-324, 1e-40, target.float_array(per_row, "float64"), target.float_array(per_row)):
            sel, _ = check_request(target, xs, None, p, ties)
            np.testing.assert_array_equal(to_numpy(sel.count), want)
        check_request(target, xs, 3, 5e-324, ties)


def test_p_just_below_one_keeps_the_window(target, dtype, rng):
    """0 < 1 - p below float32's resolution at 1 (0.9999999999999998 is 1.0 in float32; 1 - 2**-30 too): a
    backend that reads p as a float32 sees no top-p and keeps every keepable entry, which SPEC's top-p window
    allows; the threshold, its ties and the count must still be the row's own (session 43: Triton's plan read the
    float64 p, skipped the smallest key, and returned -FLT_MAX with no ties).  All-equal rows, distinct rows, a
    row with -inf, scalar and per row, alone and after a top-k."""
    B, V = target.shape(3, 40)
    x = np.round(gaussian(rng, B, V) * 2) / 2
    x[0] = 0.0  # one value
    x[2, :7] = -np.inf
    xs = target.array(x, dtype)
    per_row = np.array([0.9999999999999998, 1 - 2.0**-30, 0.9999999][:B] + [0.9999999999999998] * max(0, B - 3))
    for ties in TIES:
        per_row_ps = (target.float_array(per_row, "float64"), target.float_array(per_row))
        for p in (0.9999999999999998, 1 - 2.0**-30, *per_row_ps):
            check_request(target, xs, None, p, ties)
        check_request(target, xs, 5, 0.9999999999999998, ties)


# --------------------------------------------------------------------------------------------
# Top-k then top-p
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ties", TIES)
def test_top_p_renormalises_over_top_k_survivors(target, dtype, ties):
    x = target.array([[3.0, 1.0, 2.0, 2.0, 2.0, -5.0]], dtype)
    for k, p in [(2, 0.6), (2, 0.75), (3, 0.5), (6, 0.5), (1, 0.01)]:
        check_request(target, x, k, p, ties)
    # top-2 renormalised: q(index 0) = e / (e + 1) ~ 0.731 >= 0.6: only index 0 survives
    sel, _ = check_request(target, x, 2, 0.6, "lowest_index")
    np.testing.assert_array_equal(to_numpy(sel.mask()), [[True, False, False, False, False, False]])
    # e^x / sum over the whole row would need index 2 too
    sel, _ = check_request(target, x, None, 0.6, "lowest_index")
    assert to_numpy(sel.count).tolist() == [2]


# --------------------------------------------------------------------------------------------
# Shapes and layouts
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "p"), [(3, None), (None, 0.5), (3, 0.5), ("rows", "rows")])
def test_empty_batch(target, dtype, k, p):
    x = target.array(np.zeros((0, 16)), dtype)
    if k == "rows":
        k, p = target.index_array([]), target.float_array([])
    sel, _ = check_request(target, x, k, p)
    assert tuple(sel.threshold.shape) == (0,)
    assert tuple(sel.mask().shape) == (0, 16)
    idx, count = sel.indices()
    assert tuple(idx.shape) == (0, 0) and tuple(count.shape) == (0,)
    assert tuple(sel.apply().shape) == (0, 16)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [(5, None), (None, 0.9), (5, 0.5)])
def test_one_dimensional_input(target, dtype, ties, k, p, rng):
    V = min(300, target.max_V)
    row = gaussian(rng, 1, V)[0]
    x = target.array(row, dtype)
    if True:
        sel, _ = check_request(target, x, k, p, ties)
        for name in ("threshold", "num_ties", "count"):
            assert tuple(getattr(sel, name).shape) == (), f"{name} of a 1-D input must be 0-d"
        assert tuple(sel.mask().shape) == (V,)
        idx, count = sel.indices()
        assert tuple(idx.shape) == (int(to_numpy(count)),) and tuple(count.shape) == ()
        assert tuple(sel.probs().shape) == tuple(idx.shape)
        out = qrita.top_k_top_p(x, k, p, backend=target.backend, ties=ties)
        assert tuple(out.shape) == (V,)
        # the same row as a [1, V] batch gives the same answer
        sel2 = qrita.select(x[None], k, p, backend=target.backend, ties=ties)
        assert bits(sel2.threshold).tolist() == [bits(sel.threshold).item()]
        assert to_numpy(sel2.count).tolist() == [int(to_numpy(sel.count))]


LAYOUTS = ("row-stride", "transposed", "strided-columns", "every-other-row", "negative-strides")


def _view_like(name, parent, V):
    return {
        "row-stride": lambda a: a[:, 5 : 5 + V],
        "transposed": lambda a: a.T,
        "strided-columns": lambda a: a[:, ::2],
        "every-other-row": lambda a: a[::2],
        "negative-strides": lambda a: a[::-1, ::-1],
    }[name](parent)


def _parent_shape(name, B, V):
    return {
        "row-stride": (B, V + 37),
        "transposed": (V, B),
        "strided-columns": (B, 2 * V),
        "every-other-row": (2 * B, V),
        "negative-strides": (B, V),
    }[name]


def _layout(name, target, dtype, values):
    """``values`` [B, V] as a non-contiguous view of a larger array: ``(parent, view)``."""
    if name == "negative-strides" and target.lib != "numpy":
        pytest.skip(f"{target.lib} has no negative strides")
    B, V = values.shape
    host = np.full(_parent_shape(name, B, V), -7.0)
    _view_like(name, host, V)[...] = values
    parent = target.array(host, dtype)
    return parent, _view_like(name, parent, V)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [(5, None), (None, 0.8), (5, 0.6)])
def test_non_contiguous_rows(target, dtype, layout, ties, k, p, rng):
    B, V = target.shape(4, 200)
    values = np.round(gaussian(rng, B, V) * 4) / 4
    parent, view = _layout(layout, target, dtype, values)
    before = bits(parent)
    sel, _ = check_request(target, view, k, p, ties)
    assert np.array_equal(bits(parent), before), "the parent array changed"
    want = qrita.select(target.array(values, dtype), k, p, backend=target.backend, ties=ties)
    assert np.array_equal(bits(sel.threshold), bits(want.threshold)), "strides changed the answer"
    assert np.array_equal(to_numpy(sel.count), to_numpy(want.count)), "strides changed the answer"


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize(("k", "p"), [(5, None), (None, 0.8), (5, 0.6)])
def test_in_place_on_non_contiguous_views_writes_only_the_view(target, dtype, layout, k, p, rng):
    B, V = target.shape(4, 200)
    values = np.round(gaussian(rng, B, V) * 4) / 4
    parent, _ = _layout(layout, target, dtype, values)
    want = to_numpy(qrita.top_k_top_p(target.array(values, dtype), k, p, backend=target.backend))
    # poison the parent around the view: a stray write shows up as a changed NaN
    poisoned = poisoned_like(parent)
    view = _view_like(layout, poisoned, V)
    view[...] = target.array(values, dtype)
    outside = ~_view_mask(layout, parent.shape, V)
    before = bits(poisoned)
    result = qrita.top_k_top_p(view, k, p, backend=target.backend, inplace=True)
    assert result is view, "inplace=True must return the same object"
    assert np.array_equal(bits(poisoned)[outside], before[outside]), "wrote outside the view"
    np.testing.assert_array_equal(to_numpy(view), want)


def _view_mask(name, shape, V):
    m = np.zeros(shape, dtype=bool)
    _view_like(name, m, V)[...] = True
    return m


# --------------------------------------------------------------------------------------------
# The sigma-truncation: hits, natural misses, forced misses
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [(5, None), (50, None), (None, 0.5), (None, 0.9), (50, 0.9)])
def test_forced_truncation_misses(target, dtype, ties, k, p, rng):
    B, V = target.shape(4, 600)
    x = target.array(llm_like(rng, B, V), dtype)
    sel, _ = check_request(target, x, k, p, ties, options={"truncation": False})
    if sel.hit is not None:
        assert not to_numpy(sel.hit).any(), "options={'truncation': False} must force misses"
    full = qrita.select(x, k, p, backend=target.backend, ties=ties)
    if p is None:  # top-k has no ambiguity: both paths give the same set
        np.testing.assert_array_equal(to_numpy(sel.mask()), to_numpy(full.mask()))


# (k=5 of 600 misses now and then: too few samples above a cut that high)
@pytest.mark.parametrize(("k", "p"), [(50, None), (None, 0.9), (50, 0.9)])
def test_truncation_hits_on_gaussian_rows(target, dtype, k, p, rng):
    B, V = target.shape(4, 600)
    x = target.array(gaussian(rng, B, V), dtype)
    sel, _ = check_request(target, x, k, p)
    if sel.hit is not None:
        assert to_numpy(sel.hit).all(), f"k={k}, p={p}: Gaussian rows should be truncation hits"


def _outlier_rows(rng, V):
    """A flat floor plus 12 outliers per row: a bad fit for the Gaussian model."""
    x = np.zeros((4, V))
    x[:, :12] = 10.0
    x[2:, :12] = 3.0
    x[3, 12:] = rng.standard_normal(V - 12) * 0.01
    return x


def test_natural_truncation_misses(target, dtype, rng):
    # The cut lands above the k-th value (top-k) or leaves too little mass above it
    # (top-p): the backend must notice and search the whole row.  Still exact.
    V = min(512, target.max_V)
    xs = target.array(_outlier_rows(rng, V), dtype)
    sel, _ = check_request(target, xs, 50, None)
    if sel.hit is not None:
        assert not to_numpy(sel.hit).any(), "12 outliers cannot hold a top-50: expected misses"
    sel, _ = check_request(target, xs, None, 0.5)
    if sel.hit is not None:
        assert not to_numpy(sel.hit)[2:].any(), "12 outliers at 3.0 hold < 50% of the mass: expected misses"


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [("V-1", None), ("V-2", 0.999), (None, 0.9999), (None, 1 - 1e-7)])
def test_k_near_V_and_p_near_1(target, dtype, ties, k, p, rng):
    # near-complete selections: candidate buffers overflow, cuts sit below everything
    V = min(512, target.max_V)
    k = {"V-1": V - 1, "V-2": V - 2}.get(k, k)
    check_request(target, target.array(_outlier_rows(rng, V), dtype), k, p, ties)
    check_request(target, target.array(gaussian(rng, 2, V), dtype), k, p, ties)


# --------------------------------------------------------------------------------------------
# Determinism and batch invariance
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("k", "p"), [(50, None), (None, 0.9), (50, 0.9)])
def test_deterministic(target, dtype, k, p, rng):
    B, V = target.shape(4, 600)
    x = target.array(np.round(llm_like(rng, B, V) * 16) / 16, dtype)
    first = qrita.select(x, k, p, backend=target.backend)
    first_out = bits(qrita.top_k_top_p(x, k, p, backend=target.backend))
    for _ in range(3 if target.simulated else 10):
        again = qrita.select(x, k, p, backend=target.backend)
        for name in ("threshold", "num_ties", "count"):
            assert np.array_equal(bits(getattr(again, name)), bits(getattr(first, name))), name
        assert np.array_equal(bits(qrita.top_k_top_p(x, k, p, backend=target.backend)), first_out)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("k", "p"), [(20, None), (None, 0.9), (20, 0.8)])
def test_batch_invariant(target, dtype, ties, k, p, rng):
    B, V = target.shape(4, 600)
    rows = np.round(llm_like(rng, B, V) * 8) / 8
    others = llm_like(rng, 3, V) * 3.0
    batch = qrita.select(target.array(rows, dtype), k, p, backend=target.backend, ties=ties)
    for r in [int(rng.integers(B))] if target.simulated else range(B):
        # the row alone (1-D and [1, V]) and at another position of another batch
        alone = qrita.select(target.array(rows[r], dtype), k, p, backend=target.backend, ties=ties)
        single = qrita.select(target.array(rows[r : r + 1], dtype), k, p, backend=target.backend, ties=ties)
        mixed_values = np.concatenate([others[:2], rows[r : r + 1], others[2:]])
        mixed = qrita.select(target.array(mixed_values, dtype), k, p, backend=target.backend, ties=ties)
        for name in ("threshold", "num_ties", "count"):
            want = bits(getattr(batch, name))[r]
            assert bits(getattr(alone, name)).item() == want, f"row {r} alone: {name}"
            assert bits(getattr(single, name))[0] == want, f"row {r} as [1, V]: {name}"
            assert bits(getattr(mixed, name))[2] == want, f"row {r} in another batch: {name}"


# --------------------------------------------------------------------------------------------
# Selection methods and the masking entry points
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("mask_value", [-INF, -1000.0, 0.0, -0.0])
def test_apply_in_place(target, dtype, ties, mask_value, rng):
    B, V = target.shape(4, 300)
    x = target.array(np.round(gaussian(rng, B, V) * 4) / 4, dtype)
    sel = qrita.select(x, 10, 0.8, backend=target.backend, ties=ties)
    mask = to_numpy(sel.mask())
    y = copy(x)
    result = sel.apply(y, mask_value=mask_value, inplace=True)
    assert result is y
    check_masked(target, x, y, mask, mask_value)
    check_masked(target, x, sel.apply(mask_value=mask_value), mask, mask_value)  # out of place
    # the selection's own logits, in place, come back as the same object too
    z = copy(x)
    sel_z = qrita.select(z, 10, 0.8, backend=target.backend, ties=ties)
    assert sel_z.apply(mask_value=mask_value, inplace=True) is z
    check_masked(target, x, z, mask, mask_value)


@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("mask_value", [-INF, -1000.0])
def test_masking_entry_points(target, dtype, ties, mask_value, rng):
    B, V = target.shape(4, 300)
    values = np.round(llm_like(rng, B, V) * 4) / 4
    values[0, :7] = NAN
    x = target.array(values, dtype)
    xv = to_numpy(x)
    kw = dict(backend=target.backend, ties=ties, mask_value=mask_value)
    for k, p, call in [
        (10, 0.8, lambda a, **o: qrita.top_k_top_p(a, 10, 0.8, **o)),
        (10, None, lambda a, **o: qrita.top_k(a, 10, **o)),
        (None, 0.8, lambda a, **o: qrita.top_p(a, 0.8, **o)),
    ]:
        before = bits(x)
        out = call(x, **kw)
        assert out is not x and np.array_equal(bits(x), before), "out of place must not touch the input"
        kept = _kept_mask(xv, out, mask_value)
        check_mask(xv, k, p, ties, kept)
        check_masked(target, x, out, kept, mask_value)
        y = copy(x)
        result = call(y, inplace=True, **kw)
        assert result is y, "inplace=True returns the caller's object"
        assert np.array_equal(bits(y), bits(out)), "in place and out of place must agree"


def _kept_mask(values, out, mask_value):
    """Kept entries of a masked output (``mask_value`` must not occur in ``values``)."""
    assert not (values == mask_value).any()
    return to_numpy(out) != mask_value


def test_selection_methods_on_other_logits(target, dtype, rng):
    # apply()/probs() take the logits explicitly too (same shape as the selection's)
    B, V = target.shape(3, 100)
    x = target.array(gaussian(rng, B, V), dtype)
    sel = qrita.select(x, 5, None, backend=target.backend)
    other = copy(x)
    out = sel.apply(other)
    check_masked(target, x, out, to_numpy(sel.mask()), -INF)
    np.testing.assert_array_equal(to_numpy(sel.probs(other)), to_numpy(sel.probs()))
    assert dtype_name(sel.threshold) == dtype


def test_repr(target):
    x = target.array(np.zeros((2, 4)), "float32")
    text = repr(qrita.select(x, 1, backend=target.backend))
    assert text.startswith("Selection(") and f"backend={target.backend!r}" in text and "B=2" in text


def test_check_true_accepts_correct_answers(target, dtype, rng):
    B, V = target.shape(4, 300)
    x = target.array(llm_like(rng, B, V), dtype)
    sel = qrita.select(x, 20, 0.9, backend=target.backend, check=True)
    check_request(target, x, 20, 0.9)
    out = qrita.top_k_top_p(x, 20, 0.9, backend=target.backend, check=True)
    np.testing.assert_array_equal(to_numpy(out) != -INF, to_numpy(sel.mask()))


# --------------------------------------------------------------------------------------------
# GPU-sized shapes (device machine: pytest -m gpu)
# --------------------------------------------------------------------------------------------


def _check_sampled_rows(target, x, k, p, ties, rows):
    """Judge ``rows`` of a large batch against the oracle (the oracle is too slow for all of them)."""
    from qrita.reference import check_selection

    sel = qrita.select(x, k, p, backend=target.backend, ties=ties)
    thr, nt, cnt = (to_numpy(getattr(sel, n)) for n in ("threshold", "num_ties", "count"))
    for r in rows:
        row = to_numpy(x[r : r + 1])
        kk = k if k is None or isinstance(k, int) else to_numpy(k)[r : r + 1]
        pp = p if p is None or isinstance(p, float) else to_numpy(p)[r : r + 1]
        check_selection(row, kk, pp, ties, thr[r : r + 1], nt[r : r + 1], cnt[r : r + 1])
    return sel


@pytest.mark.gpu
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(("B", "V"), [(1, 32000), (8, 128256), (64, 151936), (256, 32000)])
@pytest.mark.parametrize(("k", "p"), [(50, None), (None, 0.9), (50, 0.9), (1, None), (4096, 0.99)])
def test_gpu_shapes(target, dtype, ties, B, V, k, p, rng):
    x = target.array(llm_like(rng, B, V, n_outliers=32), dtype)
    rows = sorted({0, B - 1, B // 2})
    _check_sampled_rows(target, x, k, p, ties, rows)


@pytest.mark.gpu
def test_gpu_ties_and_per_row(target, dtype, rng):
    B, V = 64, 131072
    x = target.array(np.round(gaussian(rng, B, V) * 2) / 2, dtype)
    k = target.index_array(rng.integers(-10, V + 10, B))
    p = target.float_array(rng.uniform(-0.1, 1.1, B))
    for ties in TIES:
        _check_sampled_rows(target, x, k, p, ties, [0, 1, 31, 63])


@pytest.mark.gpu
@pytest.mark.slow
def test_gpu_more_than_2_pow_31_entries(target, dtype):
    # int32 offsets overflow past 2**31 entries; check rows at the far end.
    if dtype not in ("bfloat16", "float16"):
        pytest.skip("one 16-bit dtype is enough for the offset test (4 GiB)")
    B, V = 16400, 131072
    assert B * V > 2**31
    torch = pytest.importorskip("torch")
    x = torch.randn(B, V, device=target.device).to(getattr(torch, dtype))
    if target.lib == "cupy":
        import cupy

        x = cupy.from_dlpack(x)
    x[B - 1, 12345] = 100.0
    sel = _check_sampled_rows(target, x, 50, 0.9, "lowest_index", [0, B // 2, B - 1])
    assert to_numpy(sel.mask()[B - 1, 12345]).item()


@pytest.mark.gpu
@pytest.mark.slow
@pytest.mark.parametrize("B", [2, 32])
def test_gpu_column_stride_past_2_pow_31(target, dtype, B):
    # Rows with a column stride of 65536 (a transposed or column-sliced view of a large buffer):
    # in-row offsets times the stride pass 2**31, so they must be 64-bit whatever the row size.
    if dtype != "float16":
        pytest.skip("one 16-bit dtype is enough for the offset test (5 GiB)")
    torch = pytest.importorskip("torch")
    V, stride = 40000, 65536
    assert (V - 1) * stride > 2**31
    buf = torch.empty((V - 1) * stride + B, dtype=torch.float16, device=target.device)
    x = buf.as_strided((B, V), (1, stride))
    x.copy_(torch.randn(B, V, device=target.device).to(torch.float16))
    x[1, V - 7] = 100.0
    if target.lib == "cupy":
        import cupy

        x = cupy.from_dlpack(x)
    sel = _check_sampled_rows(target, x, 50, 0.9, "lowest_index", [0, 1, B - 1])
    assert to_numpy(sel.mask()[1, V - 7]).item()
