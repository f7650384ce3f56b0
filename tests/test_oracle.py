"""The oracle itself, proven on hand-computed cases and against a brute-force definition.

Every other test trusts ``qrita.reference``; these tests are why it may be trusted.
Expected answers below are worked out by hand from SPEC.md, not by running code.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from qrita.reference import (
    OracleMismatch,
    check_mask,
    check_selection,
    mask_from_selection,
    oracle_select,
)

INF = math.inf
NAN = math.nan


def kept(result, b=0):
    """Kept indices of row ``b`` in ranking order, as a list."""
    return result.order[b].tolist()


def assert_row(result, b, order, threshold, num_ties):
    """One row of an OracleResult equals a hand-computed answer (all fields)."""
    assert kept(result, b) == order
    assert result.count[b] == len(order)
    assert result.num_ties[b] == num_ties
    assert result.threshold[b] == threshold
    # a zero boundary is +0.0, never -0.0
    assert math.copysign(1.0, result.threshold[b]) == math.copysign(1.0, threshold)
    expected_mask = np.zeros(result.mask.shape[1], dtype=bool)
    expected_mask[order] = True
    assert np.array_equal(result.mask[b], expected_mask)


# --------------------------------------------------------------------------------------------
# Top-k
# --------------------------------------------------------------------------------------------


def test_topk_ties_at_boundary_lowest_index():
    x = [[3.0, 1.0, 2.0, 2.0, 2.0]]
    r = oracle_select(x, k=2)
    assert_row(r, 0, [0, 2], 2.0, 1)
    r = oracle_select(x, k=3)
    assert_row(r, 0, [0, 2, 3], 2.0, 2)


def test_topk_ties_at_boundary_all():
    x = [[3.0, 1.0, 2.0, 2.0, 2.0]]
    r = oracle_select(x, k=2, ties="all")
    assert_row(r, 0, [0, 2, 3, 4], 2.0, 3)
    r = oracle_select(x, k=1, ties="all")
    assert_row(r, 0, [0], 3.0, 1)
    r = oracle_select(x, k=4, ties="all")
    assert_row(r, 0, [0, 2, 3, 4], 2.0, 3)


@pytest.mark.parametrize("k", [1, 5, 17, 63])
def test_all_equal_rows_keep_arange_k(k):
    x = np.full((3, 64), 0.25, dtype=np.float32)
    r = oracle_select(x, k=k)
    for b in range(3):
        assert_row(r, b, list(range(k)), 0.25, k)
    r = oracle_select(x, k=k, ties="all")
    for b in range(3):
        assert_row(r, b, list(range(64)), 0.25, 64)


@pytest.mark.parametrize("k", [None, 0, -1, -100, 6, 7, 1000])
def test_topk_disabled_keeps_every_keepable_entry(k):
    x = [[0.5, NAN, 2.0, -INF, 2.0, -1.0]]  # V = 6
    r = oracle_select(x, k=k)
    assert_row(r, 0, [2, 4, 0, 5], -1.0, 1)
    np.testing.assert_array_equal(r.k, [0])


def test_per_row_k():
    x = np.tile(np.array([1.0, 4.0, 3.0, 2.0]), (4, 1))
    r = oracle_select(x, k=np.array([1, 0, 4, 3]))
    assert_row(r, 0, [1], 4.0, 1)
    assert_row(r, 1, [1, 2, 3, 0], 1.0, 1)  # 0: off
    assert_row(r, 2, [1, 2, 3, 0], 1.0, 1)  # k == V: off
    assert_row(r, 3, [1, 2, 3], 2.0, 1)
    np.testing.assert_array_equal(r.k, [1, 0, 0, 3])


def test_fewer_keepable_than_k():
    x = [[NAN, 1.0, -INF, -INF, 0.0, NAN]]
    r = oracle_select(x, k=4)
    assert_row(r, 0, [1, 4], 0.0, 1)
    assert r.count[0] < 4


def test_plus_and_minus_inf_and_nan():
    x = [[1.0, INF, NAN, -INF, INF, 5.0]]
    r = oracle_select(x, k=1)
    assert_row(r, 0, [1], INF, 1)
    r = oracle_select(x, k=2)
    assert_row(r, 0, [1, 4], INF, 2)
    r = oracle_select(x, k=3)
    assert_row(r, 0, [1, 4, 5], 5.0, 1)
    r = oracle_select(x, k=1, ties="all")
    assert_row(r, 0, [1, 4], INF, 2)


def test_all_minus_inf_and_all_nan_rows_keep_nothing():
    x = [[-INF, -INF, -INF], [NAN, NAN, NAN], [NAN, -INF, NAN]]
    for k, p in [(None, None), (2, None), (None, 0.5), (1, 0.0), (2, 0.9)]:
        for ties in ("lowest_index", "all"):
            r = oracle_select(x, k=k, p=p, ties=ties)
            for b in range(3):
                assert_row(r, b, [], -INF, 0)


def test_signed_zeros_are_one_value():
    x = [[-0.0, 0.0, -1.0, -0.0]]
    r = oracle_select(x, k=2)
    assert_row(r, 0, [0, 1], 0.0, 2)  # index order decides, not the sign bit
    r = oracle_select(x, k=1)
    # the threshold is +0.0 even though the kept entry is -0.0
    assert_row(r, 0, [0], 0.0, 1)
    r = oracle_select(x, k=1, ties="all")
    assert_row(r, 0, [0, 1, 3], 0.0, 3)
    r = oracle_select([[-0.0, -0.0]], p=0.0)
    assert_row(r, 0, [0], 0.0, 1)


def test_low_precision_dtypes_compare_as_values():
    # 1 + 2**-12 is not representable in float16: it rounds to 1.0, a tie.
    x16 = np.array([[1.0, 1.0 + 2**-12, 0.5]], dtype=np.float16)
    r = oracle_select(x16, k=1)
    assert_row(r, 0, [0], 1.0, 1)
    r = oracle_select(x16, k=1, ties="all")
    assert_row(r, 0, [0, 1], 1.0, 2)


def test_torch_bfloat16_input():
    torch = pytest.importorskip("torch")
    x = torch.tensor([[1.0, 1.0 + 2**-9, 3.0, 1.0078125]], dtype=torch.bfloat16)
    # bf16 rounds 1 + 2**-9 to 1.0; 1.0078125 = 1 + 2**-7 is exact.
    r = oracle_select(x, k=3)
    assert_row(r, 0, [2, 3, 0], 1.0, 1)
    r = oracle_select(x, k=3, ties="all")
    assert_row(r, 0, [2, 3, 0, 1], 1.0, 2)


def test_batch_of_zero_rows():
    for V in (0, 5):
        r = oracle_select(np.zeros((0, V), dtype=np.float32), k=3, p=0.5)
        assert r.threshold.shape == (0,) and r.threshold.dtype == np.float64
        assert r.num_ties.shape == (0,) and r.num_ties.dtype == np.int32
        assert r.count.shape == (0,) and r.count.dtype == np.int32
        assert r.mask.shape == (0, V) and r.mask.dtype == np.bool_
        assert r.order == [] and r.topp == []
        assert r.indices().shape == (0, 0)
        check_selection(
            np.zeros((0, V)), 3, 0.5, "lowest_index", r.threshold, r.num_ties, r.count
        )


def test_one_dimensional_input_is_one_row():
    r = oracle_select([2.0, 3.0, 1.0], k=2)
    assert_row(r, 0, [1, 0], 2.0, 1)
    assert r.mask.shape == (1, 3)


def test_indices_padding():
    r = oracle_select([[1.0, 2.0, 3.0], [NAN, -INF, 0.0], [-INF, -INF, -INF]], k=2)
    np.testing.assert_array_equal(r.indices(), [[2, 1], [2, -1], [-1, -1]])
    assert r.indices().dtype == np.int64


def test_bad_arguments():
    with pytest.raises(ValueError, match="ties"):
        oracle_select([[1.0]], ties="random")
    with pytest.raises(ValueError, match=r"k must have shape \[B\]=\[2\]"):
        oracle_select([[1.0], [2.0]], k=np.array([1, 2, 3]))
    with pytest.raises(TypeError, match="k must be an integer"):
        oracle_select([[1.0]], k=np.array([1.5]))
    with pytest.raises(ValueError, match=r"p must have shape \[B\]=\[2\]"):
        oracle_select([[1.0], [2.0]], p=np.array([0.5]))


# --------------------------------------------------------------------------------------------
# Top-p
# --------------------------------------------------------------------------------------------

# Four logits ln 4, ln 3, ln 2, ln 1 (scrambled): probabilities .4, .3, .2, .1.
LOGS = [math.log(2.0), math.log(4.0), 0.0, math.log(3.0)]  # ranking: 1, 3, 0, 2


@pytest.mark.parametrize(
    "p, order",
    [
        (0.05, [1]),
        (0.39, [1]),
        (0.41, [1, 3]),
        (0.69, [1, 3]),
        (0.71, [1, 3, 0]),
        (0.89, [1, 3, 0]),
        (0.91, [1, 3, 0, 2]),
        (0.999, [1, 3, 0, 2]),
    ],
)
def test_topp_prefix(p, order):
    r = oracle_select([LOGS], p=p)
    assert_row(r, 0, order, LOGS[order[-1]], 1)
    tp = r.topp[0]
    np.testing.assert_allclose(tp.S, [0.4, 0.7, 0.9, 1.0], rtol=1e-14)
    assert tp.S[-1] == 1.0
    assert tp.j_star == len(order) and tp.p == p and tp.windowed


@pytest.mark.parametrize("p", [1.0, 1.5, INF, NAN, None])
def test_topp_disabled(p):
    r = oracle_select([LOGS], p=p)
    assert_row(r, 0, [1, 3, 0, 2], 0.0, 1)
    assert r.topp[0] is None


@pytest.mark.parametrize("p", [0.0, -0.0, -1.0, -INF, 1e-300])
def test_topp_nonpositive_keeps_single_best(p):
    x = [[1.0, 5.0, 5.0, NAN, 5.0]]
    r = oracle_select(x, p=p)
    assert_row(r, 0, [1], 5.0, 1)
    r = oracle_select(x, p=p, ties="all")
    assert_row(r, 0, [1, 2, 4], 5.0, 3)
    assert r.topp[0].j_star == 1
    assert r.topp[0].windowed == (p > 0)


def test_per_row_p_with_nan_and_out_of_range():
    x = np.tile(np.array(LOGS), (5, 1))
    r = oracle_select(x, p=np.array([NAN, 0.5, 1.0, -0.5, 0.95]))
    assert_row(r, 0, [1, 3, 0, 2], 0.0, 1)  # NaN: no top-p
    assert_row(r, 1, [1, 3], LOGS[3], 1)
    assert_row(r, 2, [1, 3, 0, 2], 0.0, 1)  # p == 1: no top-p
    assert_row(r, 3, [1], LOGS[1], 1)  # p <= 0: top-1
    assert_row(r, 4, [1, 3, 0, 2], 0.0, 1)
    assert r.topp[0] is None and r.topp[2] is None
    assert np.isnan(r.p[0]) and np.isnan(r.p[2])


def test_topp_renormalises_over_topk_survivors():
    # Over the whole row, q(index 1) = e / (e + 3) ~ 0.475 < 0.7, so without the
    # renormalisation top-k 2 + top-p 0.7 would keep both survivors.  Over the
    # top-2 survivors, q(index 1) = e / (e + 1) ~ 0.731 >= 0.7: one entry.
    x = [[0.0, 1.0, 0.0, 0.0]]
    assert kept(oracle_select(x, p=0.7)) == [1, 0, 2]  # S = .475 .650 .825 1
    r = oracle_select(x, k=2, p=0.7)
    assert_row(r, 0, [1], 1.0, 1)
    np.testing.assert_allclose(r.topp[0].S, [math.e / (math.e + 1), 1.0], rtol=1e-15)
    # top-3: S = e/(e+2) ~ .576, (e+1)/(e+2) ~ .788
    assert kept(oracle_select(x, k=3, p=0.7)) == [1, 0]


def test_topp_all_keeps_tie_group_of_last_taken():
    # probabilities e/(e+3), 1/(e+3) x3 ~ 0.475, 0.175 x3; S_2 ~ 0.650 >= 0.5.
    x = [[1.0, 0.0, 0.0, 0.0]]
    r = oracle_select(x, p=0.5)
    assert_row(r, 0, [0, 1], 0.0, 1)
    r = oracle_select(x, p=0.5, ties="all")
    assert_row(r, 0, [0, 1, 2, 3], 0.0, 3)
    assert r.topp[0].j_star == 2
    # p below the first mass: ties="all" adds nothing (the max is unique).
    r = oracle_select(x, p=0.4, ties="all")
    assert_row(r, 0, [0], 1.0, 1)


def test_topk_all_then_topp_all():
    # top-k "all" with k=2 keeps 3 and every 2 (indices 0, 2, 3, 4); top-p then
    # renormalises over those four: masses e/(e+3), 1/(e+3) x3 (after shifting by 2).
    x = [[3.0, 1.0, 2.0, 2.0, 2.0, -5.0]]
    r = oracle_select(x, k=2, p=0.6, ties="all")
    assert_row(r, 0, [0, 2, 3, 4], 2.0, 3)
    assert r.topp[0].j_star == 2
    np.testing.assert_array_equal(r.survivors[0], [0, 2, 3, 4])
    # lowest_index renormalises over 2 survivors only: q(index 0) = e/(e+1) ~ 0.731
    r = oracle_select(x, k=2, p=0.6)
    assert_row(r, 0, [0], 3.0, 1)
    np.testing.assert_array_equal(r.survivors[0], [0, 2])
    r = oracle_select(x, k=2, p=0.75)
    assert_row(r, 0, [0, 2], 2.0, 1)


def test_plus_inf_entries_share_the_mass():
    x = [[INF, 100.0, INF, INF, -INF, 1e308]]
    r = oracle_select(x, p=0.5)
    np.testing.assert_array_equal(r.topp[0].S, [1 / 3, 2 / 3, 1.0, 1.0, 1.0])
    assert_row(r, 0, [0, 2], INF, 2)
    r = oracle_select(x, p=0.2)
    assert_row(r, 0, [0], INF, 1)
    r = oracle_select(x, p=0.2, ties="all")
    assert_row(r, 0, [0, 2, 3], INF, 3)
    r = oracle_select(x, p=0.99)
    assert_row(r, 0, [0, 2, 3], INF, 3)  # finite entries have zero mass
    r = oracle_select(x, k=2, p=0.6)  # renormalised over two +inf survivors
    assert_row(r, 0, [0, 2], INF, 2)
    np.testing.assert_array_equal(r.topp[0].S, [0.5, 1.0])


def test_topp_with_zero_mass_tail_and_huge_range():
    # exp underflows to 0 for the tail; the boundary must still be the first entry.
    x = [[0.0, -1000.0, -2000.0, NAN]]
    r = oracle_select(x, p=0.999999)
    assert_row(r, 0, [0], 0.0, 1)
    np.testing.assert_array_equal(r.topp[0].S, [1.0, 1.0, 1.0])


def test_topp_window():
    r = oracle_select([[0.0, 0.0, 0.0, 0.0]], p=0.5)  # S = .25 .5 .75 1
    tp = r.topp[0]
    assert tp.j_star == 2
    assert tp.window() == (2, 3)
    assert [tp.accepts(j) for j in range(6)] == [False, False, True, True, False, False]
    assert tp.window(eps=0.3) == (1, 4)  # S_3 = .75 < p + eps = .8


# --------------------------------------------------------------------------------------------
# Brute force: the SPEC.md definitions written with counting instead of sorting.
# --------------------------------------------------------------------------------------------


def brute_force(row, k, p, ties):
    """One row by the definitions; returns the kept indices in ranking order."""
    V = len(row)
    x = [v + 0.0 for v in row]
    keep = [i for i in range(V) if not math.isnan(x[i]) and x[i] != -INF]
    # rank = number of keepable entries ahead in (value desc, index asc).
    rank = {i: sum(x[j] > x[i] or (x[j] == x[i] and j < i) for j in keep) for i in keep}
    if k is not None and 0 < k < V:
        if ties == "all":
            survivors = [i for i in keep if sum(x[j] > x[i] for j in keep) < k]
        else:
            survivors = [i for i in keep if rank[i] < k]
    else:
        survivors = keep
    # Survivors are a prefix of the ranking, so their ranks are 0..n-1.
    ranked = [None] * len(survivors)
    for i in survivors:
        ranked[rank[i]] = i
    if p is None or math.isnan(p) or p >= 1 or not ranked:
        return ranked
    if p <= 0:
        j_star = 1
    else:
        if any(x[i] == INF for i in ranked):
            weights = [1.0 if x[i] == INF else 0.0 for i in ranked]
        else:
            m = max(x[i] for i in ranked)
            weights = [math.exp(x[i] - m) for i in ranked]
        total = math.fsum(weights)
        masses = [math.fsum(weights[:j]) / total for j in range(1, len(ranked) + 1)]
        # The oracle sums in float64 and this in exact-then-rounded arithmetic:
        # only compare where no mass is within rounding of p.
        assume(all(abs(s - p) > 1e-12 for s in masses))
        j_star = next(j for j, s in enumerate(masses, start=1) if s >= p)
    if ties == "all":
        last = x[ranked[j_star - 1]]
        return [i for i in ranked if x[i] >= last]
    return ranked[:j_star]


VALUE_POOL = [-INF, INF, NAN, -0.0, 0.0, 1.0, -1.0, 2.0, 0.5, -3.0, 10.0, -30.0]


@st.composite
def requests(draw):
    B = draw(st.integers(0, 4))
    V = draw(st.integers(1, 7))
    element = st.one_of(st.sampled_from(VALUE_POOL), st.floats(-5, 5, width=32))
    x = [[draw(element) for _ in range(V)] for _ in range(B)]
    k_rows = [draw(st.one_of(st.none(), st.integers(-2, V + 2))) for _ in range(B)]
    p_choice = st.one_of(
        st.none(),
        st.sampled_from([0.0, -0.5, 1.0, 2.0, NAN, 1e-6]),
        st.floats(0.0, 1.0, exclude_min=True, exclude_max=True),
    )
    p_rows = [draw(p_choice) for _ in range(B)]
    ties = draw(st.sampled_from(["lowest_index", "all"]))
    per_row = draw(st.booleans())
    return x, V, k_rows, p_rows, ties, per_row


@settings(
    max_examples=400, deadline=None, suppress_health_check=[HealthCheck.filter_too_much]
)
@given(requests())
def test_oracle_matches_brute_force(req):
    x, V, k_rows, p_rows, ties, per_row = req
    B = len(x)
    if per_row:
        k_arg = np.array([0 if k is None else k for k in k_rows], dtype=np.int64)
        p_arg = np.array([NAN if p is None else p for p in p_rows], dtype=np.float64)
    else:
        # scalars apply to every row
        k_rows = [k_rows[0] if B else None] * B
        p_rows = [p_rows[0] if B else None] * B
        k_arg, p_arg = (k_rows[0], p_rows[0]) if B else (None, None)
    values = np.array(x, dtype=np.float64).reshape(B, V)
    r = oracle_select(values, k_arg, p_arg, ties)
    for b in range(B):
        expected = brute_force(x[b], k_rows[b], p_rows[b], ties)
        assert kept(r, b) == expected
        assert r.count[b] == len(expected)
        mask = np.zeros(V, dtype=bool)
        mask[expected] = True
        assert np.array_equal(r.mask[b], mask)
        if expected:
            thr = min(x[b][i] for i in expected)
            assert r.threshold[b] == thr
            assert thr != 0 or math.copysign(1.0, r.threshold[b]) == 1.0
            assert r.num_ties[b] == sum(x[b][i] == thr for i in expected)
        else:
            assert r.threshold[b] == -INF and r.num_ties[b] == 0
    # The description (threshold, num_ties) reproduces the mask, and the checker accepts it.
    assert np.array_equal(mask_from_selection(values, r.threshold, r.num_ties), r.mask)
    check_selection(values, k_arg, p_arg, ties, r.threshold, r.num_ties, r.count)
    check_mask(values, k_arg, p_arg, ties, r.mask)


# --------------------------------------------------------------------------------------------
# Checker
# --------------------------------------------------------------------------------------------


def test_mask_from_selection():
    x = [
        [2.0, 1.0, 2.0, NAN, -INF, 2.0],
        [-INF, -INF, 0.0, 0.0, 0.0, 0.0],
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
    ]
    mask = mask_from_selection(x, [2.0, -INF, 5.0], [2, 0, 1])
    np.testing.assert_array_equal(
        mask,
        [
            [True, False, True, False, False, False],
            [False] * 6,  # threshold -inf: nothing, even though finite entries exist
            [False, False, False, False, True, True],
        ],
    )
    mask = mask_from_selection([[-0.0, 0.0, -0.0]], np.array([-0.0]), [2])
    np.testing.assert_array_equal(mask, [[True, True, False]])


def test_checker_accepts_oracle_answer_in_other_dtypes():
    torch = pytest.importorskip("torch")
    x = torch.tensor(
        [[1.0, 3.0, 3.0, -0.0], [0.0, 0.0, 0.0, 0.0]], dtype=torch.bfloat16
    )
    r = oracle_select(x, k=2, p=0.3)
    check_selection(
        x, 2, 0.3, "lowest_index", r.threshold.astype(np.float32), r.num_ties, r.count
    )
    thr_bf16 = torch.tensor(r.threshold, dtype=torch.bfloat16)
    check_selection(
        x,
        2,
        0.3,
        "lowest_index",
        thr_bf16,
        torch.tensor(r.num_ties),
        torch.tensor(r.count),
    )
    check_mask(x, 2, 0.3, "lowest_index", torch.tensor(r.mask))


def test_checker_compares_thresholds_by_value():
    x = [[-0.0, 1.0, -0.0]]
    r = oracle_select(x, k=2)
    assert r.threshold[0] == 0.0 and math.copysign(1.0, r.threshold[0]) == 1.0
    check_selection(x, 2, None, "lowest_index", [-0.0], [1], [2])


def test_checker_rejects_topk_off_by_one_naming_the_row():
    x = np.tile(np.arange(8, dtype=np.float64), (3, 1))
    r = oracle_select(x, k=3)
    count = r.count.copy()
    thr = r.threshold.copy()
    count[2] += 1
    thr[2] -= 1
    with pytest.raises(
        OracleMismatch,
        match=r"row 2 \(top-k only.*threshold expected 5\.0, got 4\.0.*count expected 3, got 4",
    ) as info:
        check_selection(x, 3, None, "lowest_index", thr, r.num_ties, count)
    assert info.value.rows == [2]
    assert isinstance(info.value, AssertionError)


def test_checker_rejects_topk_tie_off_by_one():
    # All-equal row: a different num_ties is a different top-k set; never tolerated.
    x = np.zeros((1, 10))
    with pytest.raises(OracleMismatch, match=r"row 0.*num_ties expected 4, got 5"):
        check_selection(x, 4, None, "lowest_index", [0.0], [5], [5])
    with pytest.raises(OracleMismatch, match="row 0"):
        check_selection(x, 4, None, "all", [0.0], [4], [4])


def test_checker_window_lowest_index():
    # S = .25 .5 .75 1 for four equal logits.
    x = np.zeros((2, 4))
    # j* = 3 (S_2 = .5 < p), but j = 2 is inside the window (S_2 >= p - eps)
    p = 0.5 + 5e-6
    r = oracle_select(x, p=p)
    assert r.count.tolist() == [3, 3]
    check_selection(x, None, p, "lowest_index", r.threshold, r.num_ties, r.count)
    # row 0 picks j = 2
    check_selection(x, None, p, "lowest_index", [0.0, 0.0], [2, 3], [2, 3])
    check_mask(
        x,
        None,
        p,
        "lowest_index",
        [[True, True, False, False], [True, True, True, False]],
    )
    # j = 4 and j = 1 are outside it.
    with pytest.raises(
        OracleMismatch,
        match=r"row 1 \(top-p.*count 4 is outside the top-p ambiguity window: oracle j\*=3, window j in \[2, 3\]",
    ) as info:
        check_selection(x, None, p, "lowest_index", [0.0, 0.0], [3, 4], [3, 4])
    assert info.value.rows == [1]
    with pytest.raises(OracleMismatch, match=r"row 0 .*count 1 is outside") as info:
        check_selection(x, None, p, "lowest_index", [0.0, 0.0], [1, 3], [1, 3])
    assert info.value.rows == [0]
    # an inconsistent triple is rejected even inside the window
    with pytest.raises(OracleMismatch, match=r"row 0.*count expected 2"):
        check_selection(x, None, p, "lowest_index", [0.0, 0.0], [2, 3], [3, 3])
    # and so is keeping nothing
    with pytest.raises(OracleMismatch, match=r"row 0.*keeps nothing"):
        check_selection(x, None, p, "lowest_index", [-INF, 0.0], [0, 3], [0, 3])


def test_checker_window_respects_topk_survivors():
    # 6 equal logits, top-k 4 -> S = .25 .5 .75 1 over the survivors; p = 0.99: j* = 4.
    x = np.zeros((1, 6))
    r = oracle_select(x, k=4, p=0.99)
    assert r.count.tolist() == [4]
    with pytest.raises(OracleMismatch, match="beyond the 4 top-k survivors"):
        check_selection(x, 4, 0.99, "lowest_index", [0.0], [5], [5])


def test_checker_window_ties_all():
    # Two tie groups: [a, a, b, b] with a > b; masses 2/6, 2/6, 1/6, 1/6.
    x = np.array([[math.log(2.0), 0.0, math.log(2.0), 0.0]])
    S = oracle_select(x, p=0.5).topp[0].S
    p = float(S[1])  # j* = 2 exactly at the boundary of the first group
    r = oracle_select(x, p=p, ties="all")
    assert_row(r, 0, [0, 2], math.log(2.0), 2)
    check_selection(x, None, p, "all", r.threshold, r.num_ties, r.count)
    # Keeping both groups uses j = 3 inside the last group: S_2 < p + eps, S_3 >= p - eps.
    check_selection(x, None, p, "all", [0.0], [2], [4])
    check_mask(x, None, p, "all", [[True, True, True, True]])
    # Cutting a tie group is never allowed under ties="all".
    with pytest.raises(OracleMismatch, match=r"row 0.*num_ties expected 2 .*got 1"):
        check_selection(x, None, p, "all", [0.0], [1], [3])
    with pytest.raises(OracleMismatch, match="row 0"):
        check_mask(x, None, p, "all", [[True, True, True, False]])
    # Far from the boundary the second group is outside the window.
    p = float(S[0]) + 0.01
    with pytest.raises(
        OracleMismatch, match=r"row 0 \(top-p.*outside the top-p ambiguity window"
    ):
        check_selection(x, None, p, "all", [0.0], [2], [4])


def test_checker_topp_with_nonpositive_p_is_exact():
    # p = 0 is the top-1 rule, not arithmetic: no window even when S_1 is tiny.
    x = np.zeros((1, 300000))
    with pytest.raises(OracleMismatch, match=r"row 0 \(top-p with p <= 0"):
        check_selection(x, None, 0.0, "lowest_index", [0.0], [2], [2])


def test_check_mask_rejects_non_prefix_and_unkeepable():
    x = [[3.0, 2.0, 1.0, NAN, -INF]]
    with pytest.raises(OracleMismatch, match=r"row 0: mask is not a ranking prefix"):
        check_mask(x, 2, None, "lowest_index", [[True, False, True, False, False]])
    with pytest.raises(OracleMismatch, match=r"row 0: mask is not a ranking prefix"):
        check_mask(x, None, None, "lowest_index", [[True, True, True, True, False]])
    with pytest.raises(OracleMismatch, match=r"row 0: mask is not a ranking prefix"):
        check_mask([[-INF, -INF]], None, None, "lowest_index", [[True, False]])
    # later-index tie kept instead of the lower one
    with pytest.raises(OracleMismatch, match="row 0"):
        check_mask([[1.0, 1.0, 0.0]], 1, None, "lowest_index", [[False, True, False]])


def test_checker_shape_errors():
    with pytest.raises(AssertionError, match=r"count must have shape \[B\]=\[2\]"):
        check_selection(
            np.zeros((2, 3)), 1, None, "lowest_index", [0.0, 0.0], [1, 1], [1]
        )


def test_large_batch_runs_in_seconds():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 200_000)).astype(np.float32)
    x[:, ::7] = x[:, :1]  # plenty of duplicates
    r = oracle_select(x, k=50, p=0.9)
    assert (r.count <= 50).all()
    check_selection(
        x, 50, 0.9, "lowest_index", r.threshold, r.num_ties, r.count, expected=r
    )
