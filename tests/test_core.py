"""``qrita.core``: the LUTs (checksum pinned), the order-preserving keys and the
pivot-search state machine, each against a brute-force definition."""

from __future__ import annotations

import math
import re
import subprocess
import sys
from statistics import NormalDist

import numpy as np
import pytest
from backends import package_env
from hypothesis import given
from hypothesis import strategies as st

from qrita.core import fingerprint, keys, lut, search, spec
from qrita.core.keys import KEY_CONSTANTS, KEY_NAN, bits_from_keys, float_from_bits, keys_from_bits

# Changing a table is a change of the spec: every backend's candidate sets move.
# Recompute with ``python -c "import qrita.core as c; print(c.lut_checksum())"``
# only when the change is intended, and say so in the commit.
LUT_CHECKSUM = "2fb8a77d826a16241073e2c6c529d0bbd9619fa78e9067c967bdecf67b24a7aa"

PHI_INV = NormalDist().inv_cdf


# --------------------------------------------------------------------------------------------
# LUTs
# --------------------------------------------------------------------------------------------


def test_lut_checksum_is_pinned():
    assert lut.lut_checksum() == LUT_CHECKSUM


def test_lut_shapes_and_dtypes():
    assert lut.TOPK_DELTA.shape == (spec.TOPK_LUT_SIZE,)
    assert lut.TOPP_DELTA.shape == (spec.TOPP_LUT_SIZE,)
    for table in (lut.TOPK_DELTA, lut.TOPP_DELTA):
        assert table.dtype == np.float32
        assert not table.flags.writeable
        assert np.isfinite(table).all()
        assert table.min() >= spec.LUT_DELTA_MIN - max(spec.TOPK_RELAX, spec.TOPP_RELAX)
        assert table.max() <= spec.LUT_DELTA_MAX


def test_lut_monotone():
    # more of the row kept (larger K/V, larger p) -> a lower cut
    assert (np.diff(lut.TOPK_DELTA) >= 0).all()
    assert (np.diff(lut.TOPP_DELTA) <= 0).all()


def test_lut_values():
    assert lut.TOPK_DELTA[0] == np.float32(spec.LUT_DELTA_MIN - spec.TOPK_RELAX)  # K = V
    assert lut.TOPK_DELTA[spec.TOPK_LUT_STEPS_PER_OCTAVE] == np.float32(-spec.TOPK_RELAX)  # K = V / 2
    assert lut.TOPP_DELTA[0] == np.float32(spec.LUT_DELTA_MAX - spec.TOPP_RELAX)  # p -> 0
    assert lut.TOPP_DELTA[-1] == np.float32(spec.LUT_DELTA_MIN - spec.TOPP_RELAX)  # p -> 1
    for i in range(1, spec.TOPK_LUT_SIZE):
        want = min(max(PHI_INV(1 - 2.0 ** (-i / spec.TOPK_LUT_STEPS_PER_OCTAVE)), -8.0), 8.0) - spec.TOPK_RELAX
        assert lut.TOPK_DELTA[i] == np.float32(want)
    for i in range(1, spec.TOPP_LUT_SIZE - 1):
        assert lut.TOPP_DELTA[i] == np.float32(PHI_INV(1 - i / (spec.TOPP_LUT_SIZE - 1)) - spec.TOPP_RELAX)


def test_lut_cut_never_above_the_gaussian_estimate():
    rng = np.random.default_rng(0)
    for V in [2, 7, 1000, 32000, 128256, 2**31]:
        for k in set(rng.integers(1, V, 50).tolist()) | {1, V - 1}:
            if not 0 < k < V:
                continue
            delta = float(lut.TOPK_DELTA[lut.topk_lut_index(k, V)])
            assert delta <= PHI_INV(1 - k / V) + 1e-6
    for p in np.concatenate([rng.uniform(0, 1, 200), [1e-9, 0.5, 0.9, 0.999999]]):
        delta = float(lut.TOPP_DELTA[lut.topp_lut_index(float(p))])
        assert delta <= PHI_INV(1 - p) + 1e-6


def test_lut_index_vectorised_matches_scalar():
    rng = np.random.default_rng(1)
    V = 151936
    k = rng.integers(1, V, 500)
    np.testing.assert_array_equal(lut.topk_lut_indices(k, V), [lut.topk_lut_index(int(x), V) for x in k])
    p = np.concatenate([rng.uniform(0, 1, 500), [1e-12, 0.5, 1 - 1e-12]])
    np.testing.assert_array_equal(lut.topp_lut_indices(p), [lut.topp_lut_index(float(x)) for x in p])
    assert lut.topk_lut_index(V, V) == 0
    assert lut.topk_lut_index(1, 2**40) == spec.TOPK_LUT_SIZE - 1


# --------------------------------------------------------------------------------------------
# Order-preserving keys
# --------------------------------------------------------------------------------------------

SPECIAL_VALUES = [0.0, -0.0, math.inf, -math.inf, 1.0, -1.0, 65504.0, -65504.0, 2.0**-24, -(2.0**-24), 1e-45, 3e38]


def _all_bits(dtype, rng):
    """Every 16-bit pattern; random and special patterns for 32/64-bit formats."""
    kc = KEY_CONSTANTS[dtype]
    if kc.width == 16:
        return np.arange(2**16, dtype=np.uint64).astype(np.uint16)
    u = rng.integers(0, 2**kc.width, 20000, dtype=np.uint64, endpoint=False).astype(kc.uint)
    specials = np.array(SPECIAL_VALUES, dtype=np.float64).astype(dtype).view(kc.uint)
    edges = np.array(
        [
            0,
            kc.sign,
            kc.pos_inf_bits,
            kc.neg_inf_bits,
            kc.pos_inf_bits - 1,
            kc.neg_inf_bits - 1,
            kc.sign + 1,
            1,
            kc.mask,
            kc.pos_inf_bits + 1,
        ],
        dtype=kc.uint,
    )
    return np.concatenate([u, specials, edges])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_keys_preserve_order(dtype):
    rng = np.random.default_rng(2)
    b = _all_bits(dtype, rng)
    with np.errstate(invalid="ignore"):  # NaN payloads
        values = float_from_bits(b, dtype).astype(np.float64)
    k = keys_from_bits(b, dtype).astype(np.uint64)
    nan = np.isnan(values)
    assert (k[nan] == KEY_NAN).all(), "NaN must map to KEY_NAN"
    assert (k[~nan] > KEY_NAN).all()
    v, kk = values[~nan], k[~nan]
    order = np.argsort(v, kind="stable")
    v, kk = v[order], kk[order]
    same = v[1:] == v[:-1]  # -0.0 == +0.0: one key
    assert (kk[1:][same] == kk[:-1][same]).all()
    assert (kk[1:][~same] > kk[:-1][~same]).all(), "keys must be strictly increasing in value"
    kc = KEY_CONSTANTS[dtype]
    assert kk[0] == kc.key_neg_inf, "-inf is the lowest keepable key"
    assert kk[-1] == kc.key_pos_inf
    assert (k[values == -math.inf] == kc.key_neg_inf).all()


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_signed_zeros_share_a_key(dtype):
    kc = KEY_CONSTANTS[dtype]
    z = np.array([0, kc.sign], dtype=kc.uint)
    k = keys_from_bits(z, dtype)
    assert k[0] == k[1] == kc.sign
    np.testing.assert_array_equal(bits_from_keys(k, dtype), [0, 0])  # back to +0.0


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_bits_from_keys_inverts_keys_from_bits(dtype):
    rng = np.random.default_rng(3)
    b = _all_bits(dtype, rng)
    kc = KEY_CONSTANTS[dtype]
    with np.errstate(invalid="ignore"):
        nan = np.isnan(float_from_bits(b, dtype).astype(np.float64))
    b = b[~nan & (b != kc.sign)]  # NaN is not invertible; -0.0 comes back as +0.0
    np.testing.assert_array_equal(bits_from_keys(keys_from_bits(b, dtype), dtype), b)
    # and every non-NaN key is the key of its own bits
    k = keys_from_bits(b, dtype)
    np.testing.assert_array_equal(keys_from_bits(bits_from_keys(k, dtype), dtype), k)


def test_key_constants():
    for name, kc in KEY_CONSTANTS.items():
        width, exp_bits, frac_bits = spec.DTYPE_BITS[name]
        assert kc.width == width and kc.uint == f"uint{width}"
        assert kc.key_neg_inf == kc.frac_mask  # ~(-inf bits) keeps only the mantissa bits
        inf = np.array([kc.neg_inf_bits, kc.pos_inf_bits], dtype=kc.uint)
        np.testing.assert_array_equal(float_from_bits(inf, name).astype(np.float64), [-math.inf, math.inf])
    assert KEY_NAN == 0 and keys.KEY_NAN == 0


# --------------------------------------------------------------------------------------------
# The pivot-search state machine
# --------------------------------------------------------------------------------------------


def brute_force_boundary(key_list, weights, target):
    """``(z*, C(z*), n(z*))`` by the definition: walk the distinct keys from the top."""
    total = 0
    for z in sorted(set(key_list), reverse=True):
        here = sum(w for k, w in zip(key_list, weights, strict=True) if k == z)
        if total + here >= target:
            return z, total, sum(1 for k in key_list if k == z)
        total += here
    raise AssertionError("target above the total weight")


def make_stats(key_list, weights, hi, log):
    arr = np.asarray(key_list, dtype=object)
    w = np.asarray(weights, dtype=object)

    def stats(taus):
        log.append(list(taus))
        out = []
        for tau in taus:
            above = arr > tau
            c = sum(w[above]) if above.any() else 0
            if above.any():
                zmn = min(arr[above])
                eq = arr == zmn
                n = int(eq.sum())
                out.append((c, zmn, sum(w[eq]), n))
            else:
                out.append((0, hi + 1, 0, 0))
        return out

    return stats


def run_search(key_list, weights, target, key_bits, num_pivots, lo=None):
    hi = max(key_list)
    lo = min(key_list) - 1 if lo is None else lo
    log = []
    z, above, n, rounds = search.search(make_stats(key_list, weights, hi, log), lo, hi, target, num_pivots, key_bits)
    assert rounds == len(log) <= search.max_rounds(key_bits, num_pivots)
    for taus in log:
        assert len(taus) in (1, num_pivots)
    return z, above, n, rounds


@st.composite
def multisets(draw, key_bits):
    top = 2**key_bits - 1
    pool = draw(st.lists(st.integers(1, top), min_size=1, max_size=6))
    key_list = draw(st.lists(st.one_of(st.sampled_from(pool), st.integers(1, top)), min_size=1, max_size=40))
    return key_list


@pytest.mark.parametrize("num_pivots", [1, 3, 7])
@pytest.mark.parametrize("key_bits", [16, 32])
@given(data=st.data())
def test_search_counts_match_brute_force(key_bits, num_pivots, data):
    key_list = data.draw(multisets(key_bits))
    target = data.draw(st.integers(1, len(key_list)))
    weights = [1] * len(key_list)
    z, above, n, _ = run_search(key_list, weights, target, key_bits, num_pivots)
    assert (z, above, n) == brute_force_boundary(key_list, weights, target)
    # the tie rule on top: lowest_index keeps exactly the missing count, "all" the whole group
    assert search.topk_num_ties(target, above, n, 0) == target - above
    assert search.topk_num_ties(target, above, n, 1) == n
    assert 1 <= target - above <= n


@pytest.mark.parametrize("num_pivots", [1, 3])
@pytest.mark.parametrize("key_bits", [16, 32])
@given(data=st.data())
def test_search_masses_match_brute_force(key_bits, num_pivots, data):
    # dyadic weights: every partial sum is exact in float64, so the boundary is unambiguous
    key_list = data.draw(multisets(key_bits))
    weight_of = {
        key: data.draw(st.integers(1, 200)) / 64.0 for key in sorted(set(key_list))
    }  # equal keys, equal weights
    weights = [weight_of[key] for key in key_list]
    total = sum(weights)
    if data.draw(st.booleans()):
        target = data.draw(st.floats(1 / 64, total))
    else:  # exactly a prefix sum: the boundary sits on a step of C
        srt = sorted(zip(key_list, weights, strict=True), reverse=True)
        target = sum(w for _, w in srt[: data.draw(st.integers(1, len(srt)))])
    z, above, n, _ = run_search(key_list, weights, target, key_bits, num_pivots)
    assert (z, above, n) == brute_force_boundary(key_list, weights, target)
    kept = search.topp_num_ties(target, above, weight_of[z], n, 0)
    assert 1 <= kept <= n
    assert above + kept * weight_of[z] >= target
    assert kept == 1 or above + (kept - 1) * weight_of[z] < target
    assert search.topp_num_ties(target, above, weight_of[z], n, 1) == n


@pytest.mark.parametrize("key_bits", [16, 32, 64])
@pytest.mark.parametrize("num_pivots", [1, 3, 7, 255])
def test_search_worst_case_rounds_within_max_rounds(key_bits, num_pivots):
    # the whole key range, boundary between two adjacent keys at either end and in the middle
    top = 2**key_bits - 1
    for key_list in (
        [1, 2],
        [top - 1, top],
        [1, top],
        [2 ** (key_bits - 1), 2 ** (key_bits - 1) + 1, top],
        [1, 2, 3, top],
    ):
        for target in range(1, len(key_list) + 1):
            z, above, n, rounds = run_search(key_list, [1] * len(key_list), target, key_bits, num_pivots, lo=0)
            assert (z, above, n) == brute_force_boundary(key_list, [1] * len(key_list), target)
            assert rounds <= search.max_rounds(key_bits, num_pivots)


def test_max_rounds():
    assert search.max_rounds(32, 3) <= 18 and search.max_rounds(16, 3) <= 10
    assert search.max_rounds(32, 1) > search.max_rounds(32, 3)


def test_classify_pivot_and_narrowing():
    # C(tau) = c, weight of zmn group w, target T
    assert search.classify_pivot(5, 2, 6, False) == search.BELOW
    assert search.classify_pivot(7, 2, 6, False) == search.STOP
    assert search.classify_pivot(9, 2, 6, False) == search.ABOVE
    assert search.classify_pivot(9, 2, 6, True) == search.STOP  # forced at width 1
    assert search.narrow_lo(10, search.ABOVE, 17) == 17 and search.narrow_lo(10, search.BELOW, 17) == 10
    assert search.narrow_hi(30, search.BELOW, 20) == 20 and search.narrow_hi(30, search.ABOVE, 20) == 30
    assert [search.pivot(0, 16, j, 3) for j in (1, 2, 3)] == [4, 8, 12]
    assert search.pivot(5, 6, 1, 3) == 5


# --------------------------------------------------------------------------------------------
# Fingerprint and constants
# --------------------------------------------------------------------------------------------


def test_spec_fingerprint():
    fp = fingerprint.spec_fingerprint()
    assert re.fullmatch(r"[0-9a-f]{16}", fp)
    assert fingerprint.spec_fingerprint() == fp
    # also the same in a fresh process (kernel caches rely on it)
    out = subprocess.run(
        [sys.executable, "-c", "import qrita.core as c; print(c.spec_fingerprint())"],
        capture_output=True,
        text=True,
        check=True,
        env=package_env(),
    )
    assert out.stdout.strip() == fp


def test_spec_constants():
    assert spec.TIES == {"lowest_index": spec.TIES_LOWEST_INDEX, "all": spec.TIES_ALL}
    assert spec.TOPP_EPS == 1e-5
    assert spec.NUM_PIVOTS == 3
    assert set(spec.GPU_DTYPES) <= set(spec.CPU_DTYPES) == set(spec.DTYPE_BITS)
