"""Triton kernels of the Qrita method (the pipeline is described in ``docs/triton.md``).

Per wave of rows:

``cut_kernel``     grid (rows,), above 16 rows: the sigma-truncation cut of each
                   row (below, every span program computes it itself).
``span_kernel``    grid (rows, spans). Each program reads one span once: row max,
                   online softmax denominator, keepable/+inf counts, largest (and
                   smallest) key with multiplicities, and the candidates ``x > t``
                   appended to the row's compact slot (token indices beside them
                   when the caller samples).
``finish_kernel``  grid (rows,). Combines the span partials in span order, decides
                   hit or miss, and on a hit runs the pivot search of
                   ``qrita.core.search`` over the candidates and the tie rules.
``round_kernel``, ``update_kernel``  the parallel miss rounds of rows that missed.
                   For a top-k (alone, or a scalar one with a top-p) at small batches
                   (``launch.FOLD_MAX_ROWS``) the last round program of a row runs its
                   update (``FOLD``, :func:`last_of_row`): one launch a round, the
                   same bits.  The option ``fold_finish`` folds the finish into the
                   span pass the same way.
``slot_ties_kernel``, ``tie_count_kernel``, ``tie_pick_kernel``  (masking and
                   sampling) the index of the last kept entry of a cut tie group.
``mask_kernel``    grid (rows, blocks): mask_value wherever an entry is not kept,
                   into ``out`` (``x`` itself in place); ``scatter_kernel`` with
                   the ``scatter`` option.
``sample_slot_kernel``  (``qrita.sample``) the Gumbel-max race over the slot of a
                   row that hit.

After the waves, ``sample_kernel`` and ``sample_pick_kernel`` draw the rows that
did not hit, in one pass over each such row.

The state-machine steps are the portable functions of ``qrita.core.search``
compiled by ``triton.jit``; key constants and LUTs come from ``qrita.core``.
All addressing is int64.
"""

from __future__ import annotations

import types

import triton
import triton.language as tl

from ...core import rng as core_rng
from ...core import search as core_search


def _portable(fn):
    """``triton.jit`` of a portable core function (same source; ``tl`` visible to the JIT)."""
    clone = types.FunctionType(fn.__code__, {**fn.__globals__, "tl": tl}, fn.__name__, fn.__defaults__, fn.__closure__)
    clone.__module__ = fn.__module__
    clone.__qualname__ = fn.__qualname__
    clone.__doc__ = fn.__doc__
    return triton.jit(clone)


pivot = _portable(core_search.pivot)
classify_pivot = _portable(core_search.classify_pivot)
narrow_lo = _portable(core_search.narrow_lo)
narrow_hi = _portable(core_search.narrow_hi)
snap_hi = _portable(core_search.snap_hi)
topk_num_ties = _portable(core_search.topk_num_ties)

# dtype codes (constexpr)
F32 = tl.constexpr(0)
F16 = tl.constexpr(1)
BF16 = tl.constexpr(2)


@triton.jit
def ordered_key(bits, W: tl.constexpr):
    """Order-preserving uint32 keys of W-bit value bits (uint32, zero-extended), NaN not treated."""
    sign: tl.constexpr = 1 << (W - 1)
    mask: tl.constexpr = (1 << W) - 1
    key = tl.where((bits & sign) != 0, (~bits) & mask, bits | sign)
    return tl.where(key == sign - 1, sign, key)  # -0.0 -> +0.0


@triton.jit
def keys_of(raw, DTYPE: tl.constexpr, W: tl.constexpr):
    """Order-preserving keys (uint32, zero-extended for 16-bit) of raw values; NaN -> 0."""
    if DTYPE == F32:
        bits = raw.to(tl.uint32, bitcast=True)
    else:
        bits = raw.to(tl.uint16, bitcast=True).to(tl.uint32)
    sign: tl.constexpr = 1 << (W - 1)
    mask: tl.constexpr = (1 << W) - 1
    key = ordered_key(bits, W)
    if DTYPE == F32:
        exp_mask: tl.constexpr = 0x7F800000
    elif DTYPE == F16:
        exp_mask: tl.constexpr = 0x7C00
    else:
        exp_mask: tl.constexpr = 0x7F80
    is_nan = (bits & (mask ^ sign)) > exp_mask
    return tl.where(is_nan, 0, key)


@triton.jit
def upcast(raw, DTYPE: tl.constexpr):
    """float32 of raw values, exactly.  bfloat16 goes through its bits (the upper half of a
    float32): the same single instruction on a GPU, and exact under ``TRITON_INTERPRET=1``,
    whose bfloat16 conversion is wrong for subnormal values."""
    if DTYPE == BF16:
        v = (raw.to(tl.uint16, bitcast=True).to(tl.uint32) << 16).to(tl.float32, bitcast=True)
    else:
        v = raw.to(tl.float32)
    return v


@triton.jit
def key_of_value(v, DTYPE: tl.constexpr, W: tl.constexpr):
    """:func:`keys_of` of non-NaN float32 values that the dtype holds exactly (:func:`upcast`
    values); bfloat16 through its bits, as in :func:`upcast`."""
    if DTYPE == F32:
        bits = v.to(tl.uint32, bitcast=True)
    elif DTYPE == F16:
        bits = v.to(tl.float16).to(tl.uint16, bitcast=True).to(tl.uint32)
    else:
        bits = v.to(tl.uint32, bitcast=True) >> 16
    return ordered_key(bits, W)


@triton.jit
def value_of_key(key, DTYPE: tl.constexpr, W: tl.constexpr):
    """float32 value of a key (inverse mapping, then a bitcast)."""
    sign: tl.constexpr = 1 << (W - 1)
    mask: tl.constexpr = (1 << W) - 1
    k = key.to(tl.uint32)
    bits = tl.where((k & sign) != 0, k ^ sign, (~k) & mask)
    if DTYPE == F32:
        v = bits.to(tl.float32, bitcast=True)
    elif DTYPE == F16:
        v = bits.to(tl.uint16).to(tl.float16, bitcast=True).to(tl.float32)
    else:
        v = (bits << 16).to(tl.float32, bitcast=True)
    return v


@triton.jit
def bits_of_key(key, W: tl.constexpr):
    sign: tl.constexpr = 1 << (W - 1)
    mask: tl.constexpr = (1 << W) - 1
    k = key.to(tl.uint32)
    return tl.where((k & sign) != 0, k ^ sign, (~k) & mask)


LOG2E = tl.constexpr(1.4426950408889634)  # log2(e), float32 0x3FB8AA3B in the kernels


@triton.jit
def exp_of(x):
    """exp(x) for float32 ``x`` as ``ex2.approx.ftz(x * log2(e))``: one multiply and one MUFU.EX2 on NVIDIA.
    ``tl.exp`` is ``ex2.approx`` of the same product without ``.ftz``, which ptxas wraps in a compare, two
    predicated multiplies and a select for results below ``2**-126`` (4 more instructions an entry in the scan
    and miss-round loops); the bits are the same except that such results flush to 0.  A weight below
    ``2**-126`` is ``exp(x - m)`` for an entry more than 87 below the row maximum: 0 in the fixed-point masses
    either way, and far inside SPEC's ``1e-5`` top-p window in a float sum."""
    return tl.exp2(x * LOG2E)


@triton.jit
def weight_of(value, m, INF_MODE):
    """Top-p weight of a float32 value: exp(x - m), or [x == +inf] when the row holds +inf."""
    w = exp_of(value - m)
    return tl.where(INF_MODE, tl.where(value == float("inf"), 1.0, 0.0), w)


@triton.jit
def fix_mass(w):
    """A top-p weight (0 <= w <= 1) as a 2**-40 fixed-point int64.  Sums of these do
    not depend on the order of the terms, so a candidate set in any slot order
    gives the same bits; the rounding (< 2**-40 a term) is far inside SPEC's
    top-p tolerance."""
    return (w * 1099511627776.0).to(tl.int64)


@triton.jit
def unfix_mass(s):
    """A fixed-point mass sum back in float32 (deterministic rounding)."""
    return s.to(tl.float32) * (1.0 / 1099511627776.0)


@triton.jit
def row_params(row, k_ptr, k_scalar, p_ptr, p_scalar, V, k_mode, p_mode_arg):
    """(k_active, K, p_mode, p) of a row; modes: 0 absent, 1 scalar, 2 per-row array.

    p_mode: 0 = no top-p, 1 = top-1 (p <= 0), 2 = top-p.
    """
    k = tl.cast(k_scalar, tl.int64)
    if k_mode == 2:
        k = tl.load(k_ptr + row).to(tl.int64)
    k = tl.where(k_mode == 0, 0, k)
    k_active = (k > 0) & (k < V)
    p = tl.cast(p_scalar, tl.float32)
    if p_mode_arg == 2:
        p = tl.load(p_ptr + row).to(tl.float32)
    p = tl.where(p_mode_arg == 0, 1.0, p)
    p_mode = tl.where(p >= 1.0, 0, tl.where(p <= 0.0, 1, 2))
    p_mode = tl.where(p != p, 0, p_mode)  # NaN: no top-p
    return k_active, k, p_mode, p


@triton.jit
def cut_key_of(t, usable, DTYPE: tl.constexpr, W: tl.constexpr):
    """Key of a cut value rounded to the data's dtype (any representable value is a valid cut); 0 if not usable."""
    usable = usable & (t == t) & (tl.abs(t) < float("inf"))
    if DTYPE == F32:
        t_raw = t
    elif DTYPE == F16:
        t_raw = tl.minimum(tl.maximum(t, -65504.0), 65504.0).to(tl.float16)
    else:
        t_raw = ((t.to(tl.uint32, bitcast=True) >> 16).to(tl.uint16)).to(tl.bfloat16, bitcast=True)
    key = keys_of(t_raw, DTYPE, W)
    return tl.where(usable, key, 0).to(tl.int64)


@triton.jit
def topk_delta(lut_ptr, n_eff, k, LUT_STEPS: tl.constexpr, TOPK_LUT_N: tl.constexpr):
    """The top-k LUT's delta for ``k`` of ``n_eff`` entries (float32 scalars)."""
    ik = tl.floor(tl.log2(n_eff / k) * LUT_STEPS).to(tl.int32)
    return tl.load(lut_ptr + tl.minimum(tl.maximum(ik, 0), TOPK_LUT_N - 1))


@triton.jit
def sample_entries(x_row, stride_xv, V, DTYPE: tl.constexpr, S: tl.constexpr):
    """``S`` entries of a row, ``S // 32`` runs of 32 neighbours ``V // (S // 32)`` apart: (raw values, float32
    values with NaN as -inf).  Whole cache lines, not ``S`` scattered sectors (single entries ``V // S`` apart
    cost about 40 us a wave of 1024 rows on the H100, session 33).  For a fixed set of positions the count among
    a randomly placed top ``kk - 1`` is the same hypergeometric draw.  The runs of ``S`` are every
    ``S2 // S``-th run of ``S2 > S``."""
    offs = tl.arange(0, S)
    pos = (offs // 32).to(tl.int64) * tl.maximum(V // (S // 32), 1) + offs % 32
    raw = tl.load(x_row + pos * stride_xv, mask=pos < V, other=float("-inf"))
    xs = upcast(raw, DTYPE)
    return raw, tl.where(xs == xs, xs, float("-inf"))  # NaN: never a candidate


@triton.jit
def sample_rank(kk, V, S: tl.constexpr):
    """The rank ``n`` (int32) of a sample of ``S`` entries whose value bounds the top ``kk`` of ``V``: if the
    row's ``kk - 1`` largest entries sit at random positions, the number of sampled entries among them is
    about Poisson with mean ``lam = (kk - 1) S / V``; fewer than ``kk`` entries lie at or above the sample's
    ``n``-th largest only if ``n`` or more are, so ``n`` is the smallest count with ``P(Poisson(lam) >= n) <
    1e-5`` (a normal bound above ``lam = 16``)."""
    lam = (kk - 1.0) * (S / tl.cast(V, tl.float32))
    term = tl.exp(-lam)  # P(Poisson(lam) = n - 1), summed into cdf = P(Poisson(lam) < n)
    cdf = term
    n = tl.full((), 1, tl.int32)
    for i in tl.static_range(1, 48):
        more = (1.0 - cdf) >= 1e-5
        term = tl.where(more, term * (lam / i), term)
        cdf = tl.where(more, cdf + term, cdf)
        n += more.to(tl.int32)
    return tl.where(lam > 16.0, tl.ceil(lam + 4.5 * tl.sqrt(lam) + 3.0).to(tl.int32), n)


@triton.jit
def nth_largest(xs, n, go):
    """(t, c): the ``n``-th largest of ``xs`` found by taking out the largest value (with its ties) ``n`` times
    at most, about ``n`` pairs of block reductions (a bitonic ``tl.sort`` of the sample measured 100-400 us a
    wave of 1024 rows, H100); ``c`` counts the entries at or above ``t``.  Nothing when ``go`` is false (c 0)."""
    c = tl.zeros((), tl.int32)
    t = float("inf")
    while (c < n) & (t > float("-inf")) & go:
        t = tl.max(xs, axis=0)
        top = xs == t
        c += tl.sum(top.to(tl.int32), axis=0)
        xs = tl.where(top, float("-inf"), xs)
    return t, c


@triton.jit
def sample_cut_key(x_row, stride_xv, V, kk, floor, DTYPE: tl.constexpr, W: tl.constexpr, S: tl.constexpr,
                   S_WIDE: tl.constexpr = 0):
    """A cut key for the top ``kk`` (float32, >= 1) entries of a row from ``S`` entries
    (:func:`sample_entries`): the key just below the sample's ``n``-th largest value (:func:`sample_rank`), so
    that the candidates are the entries ``>=`` it (0, no cut, when the sample cannot place it: ``V < S``,
    ``n > S`` or that value not finite).  Top-k 50 of 131072 with ``S = 1024``: ``n = 6``, about ``n V / S =
    768`` candidates expected on any distribution (686 on average on 16 Zipf rows, interpreter).  A row where
    it fails misses: slower, never wrong.

    Returns the higher of that key and ``floor`` (int64, the row's model cut): where fewer than ``n`` sampled
    keys exceed ``floor + 1`` the order statistic cannot be higher, and its search is skipped (rows whose
    Gaussian cut is already tight).

    ``S_WIDE > S`` (option ``sample_wide``, 0 = off): a row whose ``S`` sampled keys do not skip (at least
    ``n`` exceed the model cut: a heavier upper tail than the model's, Zipf rows) takes the order statistic of
    ``S_WIDE`` entries instead (``V >= S_WIDE``), which leaves about ``n' V / S_WIDE`` candidates (top-k 50 of
    131072 with 4096: ``n' = 9``, about 290) with the same bound on a miss: a Zipf row's candidates then fit the
    finish's smallest register tile.  Rows that skip read only the ``S`` entries, as without it."""
    raw, xs = sample_entries(x_row, stride_xv, V, DTYPE, S)
    n = sample_rank(kk, V, S)
    above = tl.sum((keys_of(raw, DTYPE, W).to(tl.int64) > floor + 1).to(tl.int32), axis=0)
    fits = V >= S
    if S_WIDE > S:
        if (above >= n) & (V >= S_WIDE):
            _, xs_w = sample_entries(x_row, stride_xv, V, DTYPE, S_WIDE)
            n = sample_rank(kk, V, S_WIDE)
            t, c = nth_largest(xs_w, n, n <= S_WIDE)
        else:
            t, c = nth_largest(xs, n, above >= n)
    else:
        t, c = nth_largest(xs, n, above >= n)
    ok = fits & (c >= n) & (tl.abs(t) < float("inf"))
    return tl.maximum(floor, tl.where(ok, key_of_value(tl.where(ok, t, 0.0), DTYPE, W).to(tl.int64) - 1, 0))


TOPP_FLOOR_K = tl.constexpr(128)  # a top-p row's cut is no higher than the top-k cut for this many entries


@triton.jit
def row_cut_key(x_row, stride_xv, V, k_active, k, p_mode, p, topk_lut_ptr, topp_lut_ptr,
                DTYPE: tl.constexpr, W: tl.constexpr, SAMPLE: tl.constexpr, LUT_STEPS: tl.constexpr,
                TOPK_LUT_N: tl.constexpr, TOPP_LUT_N: tl.constexpr, rowcap=0, TWO_CUTS: tl.constexpr = 0,
                SAMPLE_CUT: tl.constexpr = 0, SAMPLE_WIDE: tl.constexpr = 0):
    """Keys of the sigma-truncation cuts (0 = no usable cut: every keepable entry is a candidate):
    (gathering cut, low cut).

    ``SAMPLE_CUT`` (a power of two, 0 = off; option ``sample_cut``): a top-k row's cut, and a top-p
    row's second (gathering) cut, are at least an order statistic of a sample of ``SAMPLE_CUT``
    entries (:func:`sample_cut_key`), which bounds the candidates of rows whose upper tail is heavier than
    the Gaussian model's; ``SAMPLE_WIDE`` (option ``sample_wide``) a larger sample for the rows where the
    first one does not skip (:func:`sample_cut_key`).

    Without ``TWO_CUTS`` (0) both are the cut ``t``.  With it, a top-p row whose model
    predicts more than its slot of ``rowcap`` keys above ``t`` (``t`` below the
    top-k cut for ``rowcap`` entries, and more than ``rowcap`` finite entries
    expected) gathers above a second cut, the top-k cut for ``rowcap // TWO_CUTS``
    entries (the option ``two_cut_share``, 32 by default), and keeps ``t`` as its low
    cut: the span pass then counts and weighs the entries above both.
    Mass-concentrated rows (a few strong logits over a wide floor, where ``t`` lands
    in the floor) then hit.
    """
    offs = tl.arange(0, SAMPLE)
    inb = offs < V
    raw = tl.load(x_row + offs.to(tl.int64) * stride_xv, mask=inb, other=0.0)
    xf = upcast(raw, DTYPE)
    finite = inb & (xf == xf) & (tl.abs(xf) < float("inf"))
    n = tl.sum(finite.to(tl.float32), axis=0)
    mu = tl.sum(tl.where(finite, xf, 0.0), axis=0) / tl.maximum(n, 1.0)
    d = tl.where(finite, xf - mu, 0.0)
    sigma = tl.sqrt(tl.sum(d * d, axis=0) / tl.maximum(n, 1.0))
    kk = tl.minimum(tl.maximum(k, 1), V).to(tl.float32)
    delta_k = topk_delta(topk_lut_ptr, tl.cast(V, tl.float32), kk, LUT_STEPS, TOPK_LUT_N)
    ip = tl.ceil(p * (TOPP_LUT_N - 1)).to(tl.int32)
    ip = tl.minimum(tl.maximum(ip, 0), TOPP_LUT_N - 1)
    delta_p = tl.load(topp_lut_ptr + ip) + sigma
    delta = tl.where(k_active, delta_k, delta_p)
    # a top-p row's cut no higher than the top-k cut for TOPP_FLOOR_K entries: where the weights' Gaussian model
    # puts the mass p above the row's largest entries (sigma >= 5, or p <= 0.1 on sigma 3-4: the model's tail is
    # a continuum, the row's is a few entries) the cut left no candidate and every such row missed (numpy model,
    # V=131072: p = 0.1-0.99 on sigma 6-12 rows, 0 of 4 hit; with the floor all but one of 80, at most about 440
    # candidates).  A lower cut only adds candidates, so rows the model gets right still hit
    t_floor = topk_delta(topk_lut_ptr, tl.cast(V, tl.float32), TOPP_FLOOR_K * 1.0, LUT_STEPS, TOPK_LUT_N)
    delta = tl.where(k_active, delta, tl.minimum(delta, t_floor))
    t = mu + delta * sigma
    usable = (n >= 2.0) & (k_active | (p_mode == 2))
    key = cut_key_of(t, usable, DTYPE, W)
    if SAMPLE_CUT:
        if k_active:  # a top-k row (a top-p row alone keeps its model's cut)
            key = sample_cut_key(x_row, stride_xv, V, kk, key, DTYPE, W, SAMPLE_CUT, SAMPLE_WIDE)
    gkey = key
    if TWO_CUTS:
        # the finite entries the sample predicts, and the top-k cuts for rowcap and rowcap // TWO_CUTS of them
        n_eff = tl.maximum(n * (tl.cast(V, tl.float32) / tl.minimum(tl.cast(V, tl.float32), SAMPLE * 1.0)), 1.0)
        cap = tl.cast(rowcap, tl.float32)
        t_cap = mu + topk_delta(topk_lut_ptr, n_eff, cap, LUT_STEPS, TOPK_LUT_N) * sigma
        t2 = mu + topk_delta(topk_lut_ptr, n_eff, cap * (1.0 / TWO_CUTS), LUT_STEPS, TOPK_LUT_N) * sigma
        switch = (k_active == 0) & (p_mode == 2) & (n_eff > cap) & (t < t_cap) & (t2 > t)
        key2 = cut_key_of(t2, usable, DTYPE, W)
        if SAMPLE_CUT:
            if switch:  # the gathering cut, like a top-k cut, no lower than the sample's for its count
                key2 = sample_cut_key(x_row, stride_xv, V, cap * (1.0 / TWO_CUTS), key2, DTYPE, W, SAMPLE_CUT,
                                      SAMPLE_WIDE)
        gkey = tl.where(switch & (key2 > key), key2, key)
    return gkey, key


@triton.jit
def slot_value(raw, DTYPE: tl.constexpr):
    """What a candidate slot holds for a value: its bits as int32 (16-bit values zero-extended).

    The span pass stores candidates without computing their keys (no key work per
    entry); the slot's readers take keys with :func:`slot_keys`."""
    if DTYPE == F32:
        v = raw.to(tl.int32, bitcast=True)
    else:
        v = raw.to(tl.uint16, bitcast=True).to(tl.int32)
    return v


@triton.jit
def slot_keys(stored, W: tl.constexpr):
    """uint32 keys of slot entries (:func:`slot_value`; never NaN): :func:`keys_of` of their values."""
    return ordered_key(stored.to(tl.uint32, bitcast=True), W)


@triton.jit
def above_value(cut, DTYPE: tl.constexpr, W: tl.constexpr, KEY_NEG_INF: tl.constexpr, KEY_POS_INF: tl.constexpr):
    """The float32 ``c`` with ``x >= c`` exactly when ``key(x) > cut``, for every value ``x``
    of the dtype (upcast); NaN and -inf fail both.

    ``key(x) > cut`` is ``key(x) >= cut + 1``.  Keys order values, so that is
    ``x >= value(cut + 1)``; a ``cut + 1`` at or below the key of -inf becomes the
    lowest finite value (everything keepable passes, -inf does not), and one above the
    key of +inf becomes NaN (nothing passes).  The keys of +0.0 and -0.0 are one key,
    as the two compare equal.
    """
    nk = tl.maximum(cut.to(tl.int64) + 1, KEY_NEG_INF + 1)
    c = value_of_key(tl.minimum(nk, KEY_POS_INF).to(tl.uint32), DTYPE, W)
    return tl.where(nk > KEY_POS_INF, float("nan"), c)


@triton.jit
def span_lanes(BLOCK: tl.constexpr, STRIDED: tl.constexpr):
    """The int32 offsets ``0..BLOCK-1`` of a span block.  ``STRIDED``: one entry per thread per
    load, threads adjacent (the layout of the slot atomics and stores, so the loop needs no
    shared-memory layout conversion)."""
    lane = tl.arange(0, BLOCK)
    if STRIDED:
        lane = tl.max_contiguous(lane, 1)
    return lane


@triton.jit
def load_span_block(x_span, stride_xv, n_here, i, SPAN: tl.constexpr, BLOCK: tl.constexpr,
                    STRIDED: tl.constexpr):
    """Entries ``[i, i + BLOCK)`` of a span of ``n_here <= SPAN`` entries at ``x_span``; -inf past
    it (never keepable, never a candidate, no maximum).  The block's base is a scalar
    pointer and the lanes' offsets are loop-invariant, so the loop does no index
    arithmetic per entry.  Both are 64-bit products with the stride (an int32 product
    overflows once a span's offsets times the stride pass 2**31, e.g. a column stride of
    65536); for rows with unit stride (Triton specialises it) the sm_90 loop is the
    same as with int32 offsets."""
    lane = span_lanes(BLOCK, STRIDED)
    return tl.load((x_span + tl.cast(i, tl.int64) * stride_xv) + lane.to(tl.int64) * stride_xv, mask=lane < n_here - i,
                   other=float("-inf"))


@triton.jit
def first_block(x_span, stride_xv, n_here, SPAN: tl.constexpr, BLOCK: tl.constexpr, PREFETCH: tl.constexpr,
                STRIDED: tl.constexpr):
    """What :func:`span_block` carries into the first iteration: the first block (prefetching) or nothing."""
    if PREFETCH:
        nxt = load_span_block(x_span, stride_xv, n_here, 0, SPAN, BLOCK, STRIDED)
    else:
        nxt = tl.zeros((BLOCK,), x_span.dtype.element_ty)
    return nxt


@triton.jit
def span_block(x_span, stride_xv, n_here, i, nxt, SPAN: tl.constexpr, BLOCK: tl.constexpr,
               PREFETCH: tl.constexpr, STRIDED: tl.constexpr = False):
    """Block ``i`` of a span: (raw values, -inf out of bounds; what to carry to the next block).

    With ``PREFETCH`` the block was loaded one iteration earlier and the next one is
    issued now (software pipelining); otherwise it is loaded here.  Offsets are taken
    within the span (``x_span`` points at its first entry) by :func:`load_span_block`.
    """
    if PREFETCH:
        raw = nxt
        nxt = load_span_block(x_span, stride_xv, n_here, i + BLOCK, SPAN, BLOCK, STRIDED)
    else:
        raw = load_span_block(x_span, stride_xv, n_here, i, SPAN, BLOCK, STRIDED)
    return raw, nxt


@triton.jit
def append_keys(slot_ptr, ctr_ptr, key, sel, cap, STOP: tl.constexpr, idx_ptr=None, offs=None,
                WITH_IDX: tl.constexpr = False, AGG: tl.constexpr = 0):
    """Append the selected keys to a row's slot of ``cap`` keys; past ``cap`` they are dropped.

    ``WITH_IDX``: the token indices ``offs`` go to ``idx_ptr`` at the same positions
    (``qrita.sample`` draws from the slot on a hit).

    Each selected key takes its position from the row's atomic counter at
    ``ctr_ptr`` (zero before the pass): no block-wide scan or barrier, and every
    program of the row shares one compact slot.  The slot order is arbitrary;
    every consumer is order-independent (counts, min/max, fixed-point masses).

    ``STOP``: once the counter has reached ``cap`` (read without ordering: a stale
    value only costs atomics), no more atomics are issued, so a row with far more
    candidates than slots does not serialise on its counter.  The counter then
    no longer counts every key: callers that need the count keep their own
    (the span pass does; a miss round gathers only what is known to fit).

    ``AGG`` (an option, ``append_agg``): the block is viewed as ``[BLOCK // AGG, AGG]``,
    column j holding the entries ``j, j + AGG, ...`` (one thread's entries in the
    strided layout when AGG is the thread count); each column takes one atomic for
    its selected entries, and their positions follow by a prefix sum down the column.
    """
    pos, sel_a = claim_slots(ctr_ptr, sel, cap, STOP, AGG)
    store_slots(slot_ptr, pos, key, sel_a, cap, idx_ptr, offs, WITH_IDX)


@triton.jit
def claim_slots(ctr_ptr, sel, cap, STOP: tl.constexpr, AGG: tl.constexpr = 0):
    """The slot positions of the selected entries (atomics on the row's counter; :func:`append_keys`):
    (positions, the entries that took one)."""
    sel_a = sel
    if STOP:
        sel_a = sel & ((tl.zeros(sel.shape, tl.int32) + tl.load(ctr_ptr)) < cap)
    if AGG > 0:
        ROWS: tl.constexpr = sel.shape[0] // AGG
        sel2 = tl.reshape(sel_a.to(tl.int32), (ROWS, AGG))
        n_col = tl.sum(sel2, axis=0)
        col0 = tl.atomic_add(ctr_ptr + tl.zeros((AGG,), tl.int32), n_col, mask=n_col > 0, sem="relaxed")
        pos = tl.reshape(col0[None, :] + tl.cumsum(sel2, axis=0) - sel2, (ROWS * AGG,))
    else:
        ones = tl.full(sel.shape, 1, tl.int32)
        pos = tl.atomic_add(ctr_ptr + tl.zeros(sel.shape, tl.int32), ones, mask=sel_a, sem="relaxed")
    return pos, sel_a


@triton.jit
def store_slots(slot_ptr, pos, key, sel_a, cap, idx_ptr, offs, WITH_IDX: tl.constexpr):
    """Store claimed entries (keys, and token indices with ``WITH_IDX``) at their slot positions below ``cap``."""
    tl.store(slot_ptr + pos, key, mask=sel_a & (pos < cap))
    if WITH_IDX:
        tl.store(idx_ptr + pos, offs.to(tl.int32), mask=sel_a & (pos < cap))


@triton.jit
def append_deferred(slot_ptr, ctr_ptr, key, sel, cap, idx_ptr, offs, d_pos, d_key, d_sel, d_offs,
                    WITH_IDX: tl.constexpr, AGG: tl.constexpr):
    """:func:`append_keys` one block late: claim this block's positions, then store the previous
    block's entries (``d_*``), whose atomics had a whole iteration to return, so that the loop
    does not wait for them.  Returns this block's claim, for the next call (or a last
    :func:`store_slots`)."""
    pos, sel_a = claim_slots(ctr_ptr, sel, cap, True, AGG)
    store_slots(slot_ptr, d_pos, d_key, d_sel, cap, idx_ptr, d_offs, WITH_IDX)
    return pos, key, sel_a, offs


@triton.jit(do_not_specialize=["V", "row0", "k_scalar", "p_scalar", "k_mode", "p_mode"])
def cut_kernel(
    x_ptr, stride_xb, stride_xv, V, row0,
    k_ptr, k_scalar, p_ptr, p_scalar, k_mode, p_mode,
    topk_lut_ptr, topp_lut_ptr, cut_ptr, rowcap,
    DTYPE: tl.constexpr, W: tl.constexpr,
    SAMPLE: tl.constexpr, LUT_STEPS: tl.constexpr, TOPK_LUT_N: tl.constexpr, TOPP_LUT_N: tl.constexpr,
    TWO_CUTS: tl.constexpr = 0,
    PDL: tl.constexpr = 0,
    SAMPLE_CUT: tl.constexpr = 0,
    SAMPLE_WIDE: tl.constexpr = 0,
):
    """The sigma-truncation cuts of each row of a wave, once per row (grid (rows,)), for the span pass:
    ``cut[slot] = (gathering cut, low cut)`` (:func:`row_cut_key`; ``SAMPLE_CUT``: a top-k row's cut is
    raised to a sample's order statistic where that is higher, :func:`sample_cut_key`, of ``SAMPLE_WIDE``
    entries where the ``SAMPLE_CUT`` entries do not skip)."""
    pdl_start(PDL)
    slot = tl.program_id(0)
    row = (row0 + slot).to(tl.int64)
    k_active, k, row_p_mode, p = row_params(row, k_ptr, k_scalar, p_ptr, p_scalar, V, k_mode, p_mode)
    cut, low = row_cut_key(x_ptr + row * stride_xb, stride_xv, V, k_active, k, row_p_mode, p, topk_lut_ptr,
                           topp_lut_ptr, DTYPE, W, SAMPLE, LUT_STEPS, TOPK_LUT_N, TOPP_LUT_N, rowcap, TWO_CUTS,
                           SAMPLE_CUT, SAMPLE_WIDE)
    tl.store(cut_ptr + slot * 2, cut)
    tl.store(cut_ptr + slot * 2 + 1, low)


@triton.jit
def pdl_start(PDL: tl.constexpr):
    """The first statement of a kernel launched with programmatic dependent launch (NVIDIA sm_90+, option
    ``pdl``): 1 or 2 wait here until the kernel before it in the stream has completed and its writes are
    visible (before this, a program must not touch global memory); 2 then lets the next kernel's programs
    start (they wait in their own ``pdl_start``).  0: nothing (any other launch)."""
    if PDL >= 1:
        tl.extra.cuda.gdc_wait()
    if PDL >= 2:
        tl.extra.cuda.gdc_launch_dependents()


@triton.jit
def grid_cell(REVERSE: tl.constexpr):
    """This program's (row of the wave, column) of a 2-D grid; ``REVERSE`` counts both from the end.
    CUDA and HIP dispatch programs in grid order (the first axis fastest), so a reversed pass starts
    on the data that the previous pass over the same grid read last."""
    a = tl.program_id(0)
    b = tl.program_id(1)
    if REVERSE:
        a = tl.num_programs(0) - 1 - a
        b = tl.num_programs(1) - 1 - b
    return a, b


@triton.jit
def last_of_row(ticket_ptr, n_spans):
    """Whether this program is the last of its row's ``n_spans`` programs to get here.

    Every thread's stores are issued before the barrier, and the ticket is an
    ``acq_rel`` atomic: the last program has seen the release of every other one
    and so reads all of their partials and slot entries.  The last program sets
    the ticket back to zero for the row's next launch.
    """
    tl.debug_barrier()
    ticket = tl.atomic_add(ticket_ptr, 1, sem="acq_rel")
    last = ticket == n_spans - 1
    if last:
        tl.store(ticket_ptr, tl.zeros((), tl.int32))
    return last


@triton.jit(do_not_specialize=["V", "row0", "k_scalar", "p_scalar", "k_mode", "p_mode", "n_spans", "ties_all",
                               "truncation"])
def span_kernel(
    x_ptr, stride_xb, stride_xv, V, row0,
    k_ptr, k_scalar, p_ptr, p_scalar, k_mode, p_mode,
    topk_lut_ptr, topp_lut_ptr,
    cand_ptr, part_i_ptr, part_f_ptr, n_spans, ctr_ptr, cut_ptr, idx_ptr, part_low_ptr,
    ticket_ptr, ties_all, truncation, state_i_ptr, state_f_ptr,
    thr_key_ptr, thr_bits_ptr, num_ties_ptr, count_ptr, hit_ptr, cut_idx_ptr, lanes_ptr,
    SPAN: tl.constexpr, SPAN_CAP: tl.constexpr, BLOCK: tl.constexpr,
    DTYPE: tl.constexpr, W: tl.constexpr, KEY_NEG_INF: tl.constexpr, KEY_POS_INF: tl.constexpr,
    SAMPLE: tl.constexpr, LUT_STEPS: tl.constexpr, TOPK_LUT_N: tl.constexpr, TOPP_LUT_N: tl.constexpr,
    FOLD: tl.constexpr, N_SPANS_P2: tl.constexpr, CB: tl.constexpr, REG_CAP: tl.constexpr, REG_SMALL: tl.constexpr,
    REG_MID: tl.constexpr, NP: tl.constexpr, MAX_ROUNDS: tl.constexpr, VALUE_LANES: tl.constexpr, NPM: tl.constexpr,
    HAS_P: tl.constexpr, PREFETCH: tl.constexpr = False, CUT_IN: tl.constexpr = False,
    NEED_MIN: tl.constexpr = True, WITH_IDX: tl.constexpr = False, STRIDED: tl.constexpr = False,
    TWO_CUTS: tl.constexpr = 0, AGG: tl.constexpr = 0, DEFER: tl.constexpr = False, ROW_Z: tl.constexpr = True,
    NEED_NMAX: tl.constexpr = True, FUSED_ROUNDS: tl.constexpr = False, RADIX: tl.constexpr = False,
    PDL: tl.constexpr = 0, SAMPLE_LANES: tl.constexpr = 0,
):
    """Partials of one span of one row; candidates go to the row's slot ``cand[slot, :n_spans * SPAN_CAP]``.

    Counters live in per-lane vectors and are reduced once at the end of the
    span.  Candidates take their slot positions from the row's counter
    ``ctr[slot]`` (zero on entry), so the loop has no block-level operation.

    ``CUT_IN``: the row's cut was computed by :func:`cut_kernel` (``cut[slot]``);
    otherwise each program computes it (the same function of the same sample:
    the same bits).  ``NEED_MIN``: track the smallest key and its count (only
    rows that keep everything need it; without it the partials hold
    ``KEY_NEG_INF + 1``, a valid exclusive lower bound for the miss path).
    ``NEED_NMAX``: count the largest key (only rows with ``p <= 0`` use it; without it
    the partials hold 0).  The
    +inf count is kept only with ``HAS_P`` (it only changes top-p weights).
    ``WITH_IDX``: each candidate's token index goes to ``idx[slot]`` beside its key.
    ``STRIDED``: a thread's entries of a block lie one thread count apart (the
    option ``span_layout`` of ``launch.py``).  ``TWO_CUTS`` (top-p only; the share of
    :func:`row_cut_key`, 0 = one cut): the
    candidates are the keys above the gathering cut, and the count and mass above
    the row's low cut go to ``part_low`` and ``part_f[3]`` (:func:`row_cut_key`).
    ``AGG``: one slot atomic per column of AGG entries (:func:`append_keys`).
    ``DEFER`` (option ``append_defer``): a block's candidates are stored in the next
    iteration (:func:`append_deferred`).
    ``ROW_Z`` (with ``HAS_P``): the row's softmax partials (max, denominator, candidate
    mass).  A request whose every row has a top-k needs none of them: its top-p runs over
    the top-k survivors, whose masses the finish takes from the candidates with the row
    max from ``kmax``; the partials then hold -inf and zeros.

    ``FOLD``: the row's last program to finish its span (:func:`last_of_row`) runs
    :func:`finish_kernel`, so that no finish launch follows.
    """
    pdl_start(PDL)
    slot = tl.program_id(0)
    span = tl.program_id(1)
    row = (row0 + slot).to(tl.int64)
    x_row = x_ptr + row * stride_xb
    k_active, k, row_p_mode, p = row_params(row, k_ptr, k_scalar, p_ptr, p_scalar, V, k_mode, p_mode)
    rowcap = n_spans * SPAN_CAP
    if CUT_IN:
        cut = tl.load(cut_ptr + slot * 2)
        low = tl.load(cut_ptr + slot * 2 + 1) if TWO_CUTS else cut
    else:
        cut, low = row_cut_key(x_row, stride_xv, V, k_active, k, row_p_mode, p, topk_lut_ptr, topp_lut_ptr,
                               DTYPE, W, SAMPLE, LUT_STEPS, TOPK_LUT_N, TOPP_LUT_N, rowcap, TWO_CUTS)
    # the loop compares float32 values, not keys (above_value): x >= c_cand is key(x) > cut,
    # x > -inf is keepable (NaN fails every comparison); candidates go to the slot as value bits
    c_cand = above_value(cut, DTYPE, W, KEY_NEG_INF, KEY_POS_INF)
    c_low = above_value(low, DTYPE, W, KEY_NEG_INF, KEY_POS_INF)
    cand_base = cand_ptr + slot.to(tl.int64) * rowcap
    idx_base = idx_ptr + slot.to(tl.int64) * rowcap
    ctr = ctr_ptr + slot

    # a lane counts at most SPAN // BLOCK entries: with fewer than 2**15 the keepable count and
    # the candidate count share one int32 counter (low 16 bits, and the high ones below the sign)
    PACK: tl.constexpr = SPAN // BLOCK < 32768
    n_keep_v = tl.zeros((BLOCK,), tl.int32)
    n_inf_v = tl.zeros((BLOCK,), tl.int32)
    kmin_v = tl.full((BLOCK,), float("inf"), tl.float32)  # per-lane min and max over keepable values
    nmin_v = tl.zeros((BLOCK,), tl.int32)
    kmax_v = tl.full((BLOCK,), float("-inf"), tl.float32)
    nmax_v = tl.zeros((BLOCK,), tl.int32)
    m_v = tl.full((BLOCK,), float("-inf"), tl.float32)  # per-lane max over finite entries
    z_v = tl.zeros((BLOCK,), tl.float32)  # per-lane sum exp(x - m_v), finite entries
    cm_v = tl.zeros((BLOCK,), tl.float32)  # the same over finite candidates
    n_cand_v = tl.zeros((BLOCK,), tl.int32)
    cl_v = tl.zeros((BLOCK,), tl.float32)  # TWO_CUTS: the mass and count above the low cut
    n_low_v = tl.zeros((BLOCK,), tl.int32)
    start = tl.cast(span, tl.int64) * SPAN
    x_span = x_row + start * stride_xv
    n_here = tl.minimum(V - start, SPAN).to(tl.int32)  # entries of this span
    start32 = start.to(tl.int32)
    nxt = first_block(x_span, stride_xv, n_here, SPAN, BLOCK, PREFETCH, STRIDED)
    # DEFER: the previous block's claimed slot entries, stored one iteration late (none yet)
    d_pos = tl.zeros((BLOCK,), tl.int32)
    d_key = d_pos
    d_sel = d_pos > 0
    d_offs = d_pos
    for i in range(0, SPAN, BLOCK):
        raw, nxt = span_block(x_span, stride_xv, n_here, i, nxt, SPAN, BLOCK, PREFETCH, STRIDED)
        xf = upcast(raw, DTYPE)
        keep = xf > float("-inf")
        cand = xf >= c_cand  # c_cand > -inf: only keepable entries
        if PACK:  # both counts in one lane counter (cand implies keep)
            n_keep_v += tl.where(cand, 0x10001, keep.to(tl.int32))
        else:
            n_keep_v += keep.to(tl.int32)
            n_cand_v += cand.to(tl.int32)
        if NEED_MIN:
            lt = keep & (xf < kmin_v)
            nmin_v = tl.where(lt, 1, tl.where(keep & (xf == kmin_v), nmin_v + 1, nmin_v))
            kmin_v = tl.where(lt, xf, kmin_v)
        if NEED_NMAX:
            gt = xf > kmax_v
            nmax_v = tl.where(gt, 1, tl.where(keep & (xf == kmax_v), nmax_v + 1, nmax_v))
            kmax_v = tl.where(gt, xf, kmax_v)
        else:  # the row maximum alone (its count only serves rows with p <= 0)
            kmax_v = tl.where(xf > kmax_v, xf, kmax_v)
        if HAS_P:
            n_inf_v += (xf == float("inf")).to(tl.int32)
        if HAS_P and ROW_Z:  # online softmax per lane (max rescaling), no block reduction in the loop
            # one exp an entry: t = exp(-|x - m_v|) is the old sums' scale when x raises the lane's
            # maximum (the new entry then weighs 1) and the new entry's weight otherwise (scale 1), the
            # same products and sums as exp(m_v - m_new) and exp(x - m_new) (0 for m_v = -inf: d = +inf)
            finite = keep & (xf != float("inf"))
            up = finite & (xf > m_v)
            t = exp_of(-tl.abs(xf - m_v))
            scale = tl.where(up, t, 1.0)
            e = tl.where(finite, tl.where(up, 1.0, t), 0.0)
            m_new = tl.where(up, xf, m_v)
            z_v = z_v * scale + e
            cm_v = cm_v * scale + tl.where(cand, e, 0.0)
            if TWO_CUTS:
                above_low = xf >= c_low
                cl_v = cl_v * scale + tl.where(above_low, e, 0.0)
                n_low_v += above_low.to(tl.int32)
            m_v = m_new
        key = slot_value(raw, DTYPE)  # the slot holds value bits (slot_keys)
        offs_i = (start32 + i) + span_lanes(BLOCK, STRIDED)
        if DEFER:
            d_pos, d_key, d_sel, d_offs = append_deferred(cand_base, ctr, key, cand, rowcap, idx_base, offs_i,
                                                          d_pos, d_key, d_sel, d_offs, WITH_IDX, AGG)
        else:
            append_keys(cand_base, ctr, key, cand, rowcap, True, idx_base, offs_i, WITH_IDX, AGG)
    if DEFER:
        store_slots(cand_base, d_pos, d_key, d_sel, rowcap, idx_base, d_offs, WITH_IDX)
    m = tl.max(m_v, axis=0)
    f = tl.where(m_v == float("-inf"), 0.0, exp_of(m_v - m))
    if PACK:
        n_cand_v = n_keep_v >> 16
        n_keep_v = n_keep_v & 0xFFFF
    n_keep = tl.sum(n_keep_v, axis=0)
    if NEED_MIN:
        kmin_f = tl.min(kmin_v, axis=0)
        nmin = tl.sum(tl.where(kmin_v == kmin_f, nmin_v, 0), axis=0)
        kmin = tl.where(n_keep > 0, key_of_value(kmin_f, DTYPE, W), 0xFFFFFFFF)
    else:
        kmin = tl.full((), KEY_NEG_INF + 1, tl.uint32)
        nmin = tl.zeros((), tl.int32)
    kmax_f = tl.max(kmax_v, axis=0)
    kmax = tl.where(n_keep > 0, key_of_value(kmax_f, DTYPE, W), 0)
    if NEED_NMAX:
        nmax = tl.sum(tl.where(kmax_v == kmax_f, nmax_v, 0), axis=0)
    else:
        nmax = tl.zeros((), tl.int32)
    pi = part_i_ptr + (slot.to(tl.int64) * n_spans + span) * 8
    tl.store(pi + 0, tl.sum(n_cand_v, axis=0).to(tl.int64))
    tl.store(pi + 1, n_keep.to(tl.int64))
    tl.store(pi + 2, tl.sum(n_inf_v, axis=0).to(tl.int64))
    tl.store(pi + 3, kmin.to(tl.int64))
    tl.store(pi + 4, nmin.to(tl.int64))
    tl.store(pi + 5, kmax.to(tl.int64))
    tl.store(pi + 6, nmax.to(tl.int64))
    tl.store(pi + 7, cut)
    pf = part_f_ptr + (slot.to(tl.int64) * n_spans + span) * 4
    tl.store(pf + 0, m)
    tl.store(pf + 1, tl.sum(z_v * f, axis=0))
    tl.store(pf + 2, tl.sum(cm_v * f, axis=0))
    if TWO_CUTS:
        tl.store(pf + 3, tl.sum(cl_v * f, axis=0))
        pl = part_low_ptr + (slot.to(tl.int64) * n_spans + span) * 2
        tl.store(pl + 0, tl.sum(n_low_v, axis=0).to(tl.int64))
        tl.store(pl + 1, low)
    if FOLD:
        if last_of_row(ticket_ptr + slot, n_spans):
            finish_kernel(
                x_ptr, stride_xb, stride_xv, V, row0, k_ptr, k_scalar, p_ptr, p_scalar, k_mode, p_mode,
                ties_all, truncation, cand_ptr, part_i_ptr, part_f_ptr, n_spans, ctr_ptr, state_i_ptr, state_f_ptr,
                thr_key_ptr, thr_bits_ptr, num_ties_ptr, count_ptr, hit_ptr, cut_idx_ptr, part_low_ptr, lanes_ptr,
                N_SPANS_P2, SPAN_CAP, CB, REG_CAP, REG_SMALL, REG_MID, NP, MAX_ROUNDS, DTYPE, W, KEY_NEG_INF,
                TWO_CUTS != 0, VALUE_LANES, NPM, FUSED_ROUNDS, RADIX, 0, SAMPLE_LANES,
            )


# --------------------------------------------------------------------------------------
# Search sources.  src 0: candidates in registers; 1: a candidate buffer (the row's
# compact slot, its count at cnt_ptr); 2: the row itself.  Keys are uint32; a source
# holds the keys in (lo, hi] of the current search (hi is implied: nothing above it is
# present, or it is accounted for by the caller's base offsets).
# --------------------------------------------------------------------------------------


@triton.jit
def load_keys(buf_row, n, REG: tl.constexpr, W: tl.constexpr):
    """The first ``n`` keys of a row's compact slot (n <= REG), as [REG] uint32 keys (0 past n) and validity."""
    j = tl.arange(0, REG)
    valid = j < n
    keys = tl.where(valid, slot_keys(tl.load(buf_row + j, mask=valid, other=0), W), 0)
    return keys, valid


@triton.jit
def load_chunk(x_row, stride_xv, V, buf_row, cnt_ptr, c, FROM_BUF, lo32,
               SPAN_CAP: tl.constexpr, CB: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr):
    """Chunk ``c`` of a source in memory: uint32 keys and validity (keys <= lo are invalid).

    From the buffer (a compact slot holding ``*cnt_ptr`` keys) and from the row,
    chunk c is entries [c * CB, (c + 1) * CB).
    """
    if FROM_BUF:
        j = c * CB + tl.arange(0, CB)
        n = tl.load(cnt_ptr).to(tl.int32)
        valid = j < n
        key = tl.where(valid, slot_keys(tl.load(buf_row + j, mask=valid, other=0), W), 0)
    else:
        offs = tl.cast(c, tl.int64) * CB + tl.arange(0, CB).to(tl.int64)
        valid = offs < V
        raw = tl.load(x_row + offs * stride_xv, mask=valid, other=0.0)
        key = keys_of(raw, DTYPE, W)
    return key, valid & (key > lo32)


@triton.jit
def lane_stats(key, valid, w, taus, COUNT: tl.constexpr):
    """Per pivot lane: mass (fixed-point, ``w`` from :func:`fix_mass`) and count above
    tau, zmn, n(zmn), zmx (largest key <= tau)."""
    k2 = key[:, None]
    gt = valid[:, None] & (k2 > taus[None, :])
    cnt = tl.sum(gt.to(tl.int32), axis=0)
    if COUNT:
        mass = cnt.to(tl.int64)
    else:
        mass = tl.sum(tl.where(gt, w[:, None], tl.zeros_like(w)[:, None]), axis=0)
    zmn = tl.min(tl.where(gt, k2, ~tl.zeros_like(k2)), axis=0)
    n = tl.sum((gt & (k2 == zmn[None, :])).to(tl.int32), axis=0)
    zmx = tl.max(tl.where(valid[:, None] & (gt == 0), k2, tl.zeros_like(k2)), axis=0)
    return mass, cnt, zmn, n, zmx


@triton.jit
def pick(vec, idx, j):
    """vec[j] for a small vector (Triton has no scalar indexing)."""
    return tl.sum(tl.where(idx == j, vec, tl.zeros_like(vec)), axis=0)


@triton.jit
def _count_min_max(c1, z1, n1, x1, c2, z2, n2, x2):
    """Combine of :func:`lane_stats_fused` for counts: (count, min key, its count, max key)."""
    return c1 + c2, tl.minimum(z1, z2), tl.where(z1 == z2, n1 + n2, tl.where(z1 < z2, n1, n2)), tl.maximum(x1, x2)


@triton.jit
def _mass_count_min_max(q1, c1, z1, n1, x1, q2, c2, z2, n2, x2):
    """Combine of :func:`lane_stats_fused` for masses: (fixed-point mass, count, min key, its count, max key)."""
    c, z, n, x = _count_min_max(c1, z1, n1, x1, c2, z2, n2, x2)
    return q1 + q2, c, z, n, x


@triton.jit
def lane_stats_fused(key, valid, w, taus, COUNT: tl.constexpr):
    """:func:`lane_stats` for every lane in one reduction of a tuple (one block-wide tree instead of
    one per statistic and lane: 3 barriers a search round in the sm_90 SASS, against 23-24): per
    lane, the mass (fixed-point, or the count) and count above tau, zmn and its count, and zmx (the
    largest key <= tau).  Integer statistics only, so the bits are those of the separate reductions."""
    k2 = key[:, None]
    gt = valid[:, None] & (k2 > taus[None, :])
    c0 = gt.to(tl.int32)
    z0 = tl.where(gt, k2, ~tl.zeros_like(k2))
    x0 = tl.where(valid[:, None] & (gt == 0), k2, tl.zeros_like(k2))
    if COUNT:
        cnt, zmn, n, zmx = tl.reduce((c0, z0, c0, x0), 0, _count_min_max)
        qmass = cnt.to(tl.int64)
    else:
        q0 = tl.where(gt, w[:, None], tl.zeros_like(w)[:, None])
        qmass, cnt, zmn, n, zmx = tl.reduce((q0, c0, z0, c0, x0), 0, _mass_count_min_max)
    return qmass, cnt, zmn, n, zmx


@triton.jit
def pick_lane(qmass, cnt, zmn, nmn, zmx, target, idx, COUNT: tl.constexpr):
    """From every lane's statistics: the largest lane ``a`` whose C reaches ``target``, its C,
    count, zmn and n(zmn), and zmx of lane a + 1 (0 past the last lane)."""
    if COUNT:
        mass = qmass.to(tl.float32)
    else:
        mass = unfix_mass(qmass)
    a = tl.max(tl.where(mass >= target, idx, 0), axis=0)
    return (a, pick(mass, idx, a), pick(cnt, idx, a), pick(zmn, idx, a), pick(nmn, idx, a),
            pick(zmx, idx, a + 1))


@triton.jit
def search_round(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, buf_row, cnt_ptr, n_chunks,
                 lo, taus, target, m, inf_mode, COUNT: tl.constexpr, NP: tl.constexpr, SPAN_CAP: tl.constexpr,
                 CB: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr, FUSED: tl.constexpr = False):
    """One round: the largest lane ``a`` with C(tau_a) >= target and its stats.

    Returns (a, C(tau_a), count above tau_a, zmn(tau_a), n(zmn), zmx(tau_{a+1})).
    In registers the lane masses are one 1-D reduction a lane; zmn/n/zmx are then
    taken for the two lanes that matter (``FUSED``: every statistic of every lane
    in one reduction, :func:`lane_stats_fused`, for small tiles).  From memory all
    lanes are gathered in one pass (chunks merged in chunk order: deterministic sums).
    """
    idx = tl.arange(0, NP)
    lo32 = lo.to(tl.uint32)
    if FUSED:
        qm, cnt_f, zmn_f, nmn_f, zmx_f = lane_stats_fused(keys_reg, valid_reg & (keys_reg > lo32), w_reg, taus,
                                                          COUNT)
        a, mass_a, cnt_a, zmn_a, n_a, zmx_n = pick_lane(qm, cnt_f, zmn_f, nmn_f, zmx_f, target, idx, COUNT)
    elif src == 0:
        valid = valid_reg & (keys_reg > lo32)
        mass = tl.zeros((NP,), tl.float32)
        for j in tl.static_range(NP):  # one lane at a time: a 1-D reduction, few registers
            gt_j = valid & (keys_reg > pick(taus, idx, j))
            if COUNT:
                mass_j = tl.sum(gt_j.to(tl.int32), axis=0).to(tl.float32)
            else:
                mass_j = unfix_mass(tl.sum(tl.where(gt_j, w_reg, tl.zeros_like(w_reg)), axis=0))
            mass = tl.where(idx == j, mass_j, mass)
        a = tl.max(tl.where(mass >= target, idx, 0), axis=0)
        tau_a = pick(taus, idx, a)
        tau_n = pick(taus, idx, a + 1)
        g = valid & (keys_reg > tau_a)
        cnt_a = tl.sum(g.to(tl.int32), axis=0)
        zmn_a = tl.min(tl.where(g, keys_reg, ~tl.zeros_like(keys_reg)), axis=0)
        n_a = tl.sum((g & (keys_reg == zmn_a)).to(tl.int32), axis=0)
        zmx_n = tl.max(tl.where(valid & (keys_reg <= tau_n), keys_reg, tl.zeros_like(keys_reg)), axis=0)
        mass_a = pick(mass, idx, a)
    else:
        qmass = tl.zeros((NP,), tl.int64)
        cnt = tl.zeros((NP,), tl.int32)
        zmn = tl.full((NP,), 0xFFFFFFFF, tl.uint32)
        nmn = tl.zeros((NP,), tl.int32)
        zmx = tl.zeros((NP,), tl.uint32)
        for c in range(n_chunks):
            key, valid = load_chunk(x_row, stride_xv, V, buf_row, cnt_ptr, c, src == 1, lo32,
                                    SPAN_CAP, CB, DTYPE, W)
            if COUNT:
                w = tl.zeros((CB,), tl.int64)
            else:
                w = fix_mass(weight_of(value_of_key(key, DTYPE, W), m, inf_mode))
            b_mass, b_cnt, b_zmn, b_n, b_zmx = lane_stats(key, valid, w, taus, COUNT)
            qmass += b_mass
            cnt += b_cnt
            nmn = tl.where(b_zmn < zmn, b_n, tl.where(b_zmn == zmn, nmn + b_n, nmn))
            zmn = tl.minimum(zmn, b_zmn)
            zmx = tl.maximum(zmx, b_zmx)
        a, mass_a, cnt_a, zmn_a, n_a, zmx_n = pick_lane(qmass, cnt, zmn, nmn, zmx, target, idx, COUNT)
    return a, mass_a, cnt_a.to(tl.int64), zmn_a.to(tl.int64), n_a.to(tl.int64), zmx_n.to(tl.int64)


@triton.jit
def search(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, buf_row, cnt_ptr, n_chunks, lo, hi,
           target, m, inf_mode, COUNT: tl.constexpr, NP: tl.constexpr, MAX_ROUNDS: tl.constexpr,
           SPAN_CAP: tl.constexpr, CB: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr,
           FUSED: tl.constexpr = False):
    """The pivot search of qrita.core.search: returns (z_star, mass above, count above, n_eq).

    NP lanes evaluate pivots lo + (hi - lo) * j // NP, j = 0..NP-1 (lane 0 is
    ``lo`` itself; NP = 4 is the paper's three interior pivots).  Visiting the
    pivots in increasing order ends at the largest one with C >= T, so only
    that one is classified (the argument is in the numpy backend), then lo/hi
    are narrowed and snapped to present keys.  lo/hi are int64 scalars; the
    per-element work is on uint32 keys.
    """
    idx = tl.arange(0, NP)
    done = lo < 0  # False, as a tensor
    z_star = hi
    above = tl.zeros((), tl.float32)
    above_n = tl.zeros((), tl.int64)
    n_eq = tl.zeros((), tl.int64)
    rounds = 0
    while (rounds < MAX_ROUNDS) & (done == 0):
        forced = hi - lo <= 1
        taus64 = tl.where(forced, hi - 1, pivot(lo, hi, idx.to(tl.int64), NP - 1))
        a, mass_a, cnt_a, zmn_a, n_a, zmx_n = search_round(
            src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, buf_row, cnt_ptr, n_chunks, lo,
            taus64.to(tl.uint32), target, m, inf_mode, COUNT, NP, SPAN_CAP, CB, DTYPE, W, FUSED)
        if COUNT:
            w_a = n_a.to(tl.float32)
        else:
            w_a = n_a.to(tl.float32) * weight_of(value_of_key(zmn_a, DTYPE, W), m, inf_mode)
        state = classify_pivot(mass_a, w_a, target, forced)
        if state == 1:
            done = lo >= 0
            z_star = zmn_a
            n_eq = n_a
            above = mass_a - w_a
            above_n = cnt_a - n_a
        else:
            new_lo = narrow_lo(lo, state, zmn_a)
            has_next = a + 1 < NP
            tau_next = pick(taus64, idx, a + 1)
            new_hi = tl.where(has_next, snap_hi(narrow_hi(hi, 0, tau_next), new_lo, zmx_n), hi)
            lo = new_lo
            hi = new_hi
            lo = tl.where(lo >= hi, hi - 1, lo)
        rounds += 1
    return z_star, above, above_n, n_eq


@triton.jit
def stats_above(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, buf_row, cnt_ptr, n_chunks, lo,
                tau, m, inf_mode, SPAN_CAP: tl.constexpr, CB: tl.constexpr, DTYPE: tl.constexpr,
                W: tl.constexpr):
    """Mass above tau over the source (fixed-point sums: any slot order, same bits)."""
    lo32 = lo.to(tl.uint32)
    tau32 = tau.to(tl.uint32)
    if src == 0:
        g = valid_reg & (keys_reg > lo32) & (keys_reg > tau32)
        qmass = tl.sum(tl.where(g, w_reg, tl.zeros_like(w_reg)), axis=0)
    else:
        qmass = tl.zeros((), tl.int64)
        for c in range(n_chunks):
            key, valid = load_chunk(x_row, stride_xv, V, buf_row, cnt_ptr, c, src == 1, lo32,
                                    SPAN_CAP, CB, DTYPE, W)
            w = fix_mass(weight_of(value_of_key(key, DTYPE, W), m, inf_mode))
            qmass += tl.sum(tl.where(valid & (key > tau32), w, tl.zeros_like(w)), axis=0)
    return unfix_mass(qmass)


@triton.jit
def _sum_sum_min(a1, b1, c1, a2, b2, c2):
    """Combine of :func:`radix_kth`'s per-byte statistics: (sum, sum, min)."""
    return a1 + a2, b1 + b2, tl.minimum(c1, c2)


@triton.jit
def radix_kth(keys, valid, target, W: tl.constexpr):
    """The ``target``-th largest of the valid keys (1 <= target <= their number), by radix select: the key's
    bytes from the top, one 256-bin histogram a round of the keys that match the bytes chosen so far (W // 8
    rounds).  Returns (z, count above z, count equal to z) as int64, what :func:`search` gives for a count
    target (an order statistic: no bit depends on how it is found)."""
    t = target.to(tl.int32)
    prefix = tl.zeros((), tl.uint32)
    above = tl.zeros((), tl.int32)  # valid keys above every key that matches the prefix
    n_match = tl.sum(valid.to(tl.int32), axis=0)
    for r in tl.static_range(W // 8):
        shift = W - 8 * (r + 1)
        if r == 0:
            match = valid
        else:
            match = valid & ((keys >> (shift + 8)) == (prefix >> (shift + 8)))
        h = tl.histogram(((keys >> shift) & 0xFF).to(tl.int32), 256, mask=match)
        at_or_above = n_match - tl.cumsum(h, axis=0) + h  # matching keys whose byte is >= the bin's: non-increasing
        reach = (above + at_or_above) >= t  # true for the bins up to the chosen byte b
        n_reach, n_past, at_b = tl.reduce((reach.to(tl.int32), tl.where(reach, 0, h),
                                           tl.where(reach, at_or_above, 0x7FFFFFFF)), 0, _sum_sum_min)
        prefix = prefix | ((n_reach - 1).to(tl.uint32) << shift)
        above = above + n_past
        n_match = at_b - n_past  # the keys whose bytes so far are the prefix
    return prefix.to(tl.int64), above.to(tl.int64), n_match.to(tl.int64)


@triton.jit
def topp_ties(target, mass_above, weight, n_eq, ties_all):
    """qrita.core.search.topp_num_ties with Triton's ceil."""
    need = tl.where(weight > 0, (target - mass_above) / weight, n_eq.to(tl.float32))
    n = tl.ceil(need).to(tl.int64)
    n = tl.where(need == need, n, n_eq)
    n = tl.minimum(tl.maximum(n, 1), n_eq)
    return tl.where(ties_all != 0, n_eq, n)


@triton.jit
def solve(src, keys_reg, valid_reg, x_row, stride_xv, V, buf_row, cnt_ptr, n_chunks,
          stage, lo, hi, base_cnt, base_mass, K, p_mode, p, target_p, z_k, nties_k, above_k, n_k,
          kmax, nmax, ties_all, m, inf_mode,
          NP: tl.constexpr, MAX_ROUNDS: tl.constexpr, SPAN_CAP: tl.constexpr, CB: tl.constexpr,
          DTYPE: tl.constexpr, W: tl.constexpr, FUSED: tl.constexpr = False, RADIX: tl.constexpr = False):
    """The rest of a row's request over a source holding its keys in (lo, hi].

    Entries above ``hi`` are outside the source: ``base_cnt``/``base_mass``
    account for them.  ``stage``: 1 top-k first (then top-p if asked), 2 top-p
    alone with target ``target_p``, 3 top-p over the top-k survivors given
    (z_k, nties_k, above_k, n_k) (requires base 0).

    Returns (z, nties, count, n_total, next_stage): next_stage 0 when done, 3
    when top-p after top-k still needs a source above z_k (base was not 0).
    ``RADIX`` (a register source): the top-k by :func:`radix_kth` instead of the pivot search.
    """
    w_reg = fix_mass(weight_of(value_of_key(keys_reg, DTYPE, W), m, inf_mode))
    z = z_k
    nties = nties_k
    count = above_k + nties_k
    n_total = n_k
    next_stage = stage * 0
    lo_p = lo
    target = target_p
    if stage == 1:
        if RADIX:
            zk, above_n, nk = radix_kth(keys_reg, valid_reg & (keys_reg > lo.to(tl.uint32)), K - base_cnt, W)
        else:
            zk, _mass, above_n, nk = search(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, buf_row, cnt_ptr,
                                            n_chunks, lo, hi, (K - base_cnt).to(tl.float32), m, inf_mode,
                                            True, NP, MAX_ROUNDS, SPAN_CAP, CB, DTYPE, W, FUSED)
        z_k = zk
        above_k = base_cnt + above_n
        n_k = nk
        nties_k = topk_num_ties(K, above_k, nk, ties_all)
        z = z_k
        nties = nties_k
        count = above_k + nties_k
        n_total = n_k
        if p_mode == 1:  # p <= 0: the best token (or its tie group) among the top-k survivors
            n_best = tl.where(kmax == z_k, nties_k, nmax)
            z = kmax
            nties = tl.where(ties_all != 0, n_best, 1)
            count = nties
            n_total = nmax
        if p_mode == 2:
            if base_cnt == 0:
                stage = stage * 0 + 3
            else:
                next_stage = stage * 0 + 3
    if stage == 3:
        mass_above_zk = stats_above(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, buf_row, cnt_ptr,
                                    n_chunks, lo, z_k, m, inf_mode, SPAN_CAP, CB, DTYPE, W)
        w_zk = weight_of(value_of_key(z_k, DTYPE, W), m, inf_mode)
        target = p * (mass_above_zk + nties_k.to(tl.float32) * w_zk)
        if mass_above_zk < target:  # the boundary is the top-k boundary group itself
            nties = topp_ties(target, mass_above_zk, w_zk, nties_k, ties_all)
            z = z_k
            count = above_k + nties
            n_total = n_k
        else:
            stage = stage * 0 + 2
            lo_p = z_k
    if stage == 2:
        zp, mass_above, cnt_above, n_p = search(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, buf_row,
                                                cnt_ptr, n_chunks, lo_p, hi, target - base_mass, m,
                                                inf_mode, False, NP, MAX_ROUNDS, SPAN_CAP, CB, DTYPE, W, FUSED)
        w_z = weight_of(value_of_key(zp, DTYPE, W), m, inf_mode)
        nties = topp_ties(target, base_mass + mass_above, w_z, n_p, ties_all)
        z = zp
        count = base_cnt + cnt_above + nties
        n_total = n_p
    return z, nties, count, n_total, next_stage


@triton.jit
def solve_slot(n, slot_row, cnt_ptr, n_chunks, x_row, stride_xv, V,
               stage, lo, hi, base_cnt, base_mass, K, p_mode, p, target_p, z_k, nties_k, above_k, n_k,
               kmax, nmax, ties_all, m, inf_mode,
               NP: tl.constexpr, MAX_ROUNDS: tl.constexpr, SPAN_CAP: tl.constexpr, CB: tl.constexpr,
               DTYPE: tl.constexpr, W: tl.constexpr, REG_SMALL: tl.constexpr, REG_MID: tl.constexpr,
               REG_CAP: tl.constexpr, FUSED_ROUNDS: tl.constexpr = False, RADIX: tl.constexpr = False):
    """:func:`solve` over a row's compact slot of ``n`` keys, in the smallest register tile
    that holds them (REG_SMALL, REG_MID, REG_CAP), else from the slot in memory.
    ``FUSED_ROUNDS``: the REG_SMALL tile's rounds take each lane's statistics in one
    reduction (:func:`lane_stats_fused`; the same bits).  ``RADIX``: the REG_SMALL and REG_MID tiles' top-k
    by radix select (:func:`radix_kth`; the same bits)."""
    if n <= REG_SMALL:
        keys, valid = load_keys(slot_row, n, REG_SMALL, W)
        z, nties, count, n_total, nxt = solve(
            0, keys, valid, x_row, stride_xv, V, slot_row, cnt_ptr, n_chunks, stage, lo, hi, base_cnt, base_mass,
            K, p_mode, p, target_p, z_k, nties_k, above_k, n_k, kmax, nmax, ties_all, m, inf_mode,
            NP, MAX_ROUNDS, SPAN_CAP, CB, DTYPE, W, FUSED_ROUNDS, RADIX)
    elif n <= REG_MID:
        keys_m, valid_m = load_keys(slot_row, n, REG_MID, W)
        z, nties, count, n_total, nxt = solve(
            0, keys_m, valid_m, x_row, stride_xv, V, slot_row, cnt_ptr, n_chunks, stage, lo, hi, base_cnt,
            base_mass, K, p_mode, p, target_p, z_k, nties_k, above_k, n_k, kmax, nmax, ties_all, m, inf_mode,
            NP, MAX_ROUNDS, SPAN_CAP, CB, DTYPE, W, False, RADIX)
    else:
        src = tl.where(n <= REG_CAP, 0, 1)
        keys_r, valid_r = load_keys(slot_row, tl.where(src == 0, n, 0), REG_CAP, W)
        z, nties, count, n_total, nxt = solve(
            src, keys_r, valid_r, x_row, stride_xv, V, slot_row, cnt_ptr, n_chunks, stage, lo, hi, base_cnt,
            base_mass, K, p_mode, p, target_p, z_k, nties_k, above_k, n_k, kmax, nmax, ties_all, m, inf_mode,
            NP, MAX_ROUNDS, SPAN_CAP, CB, DTYPE, W)
    return z, nties, count, n_total, nxt


@triton.jit
def finalize(V, row, z, nties, count, n_total, empty, hit,
             thr_key_ptr, thr_bits_ptr, num_ties_ptr, count_ptr, hit_ptr, cut_idx_ptr,
             W: tl.constexpr, KEY_NEG_INF: tl.constexpr):
    """Write a row's answer.  When a tie group is cut, the index of its last kept
    entry is left TIE_PENDING: ``tie_count_kernel`` and ``tie_pick_kernel`` find it,
    over many programs, for the callers that need it (masking, sampling); ``select``
    alone never does."""
    z = tl.where(empty, KEY_NEG_INF, z)
    nties = tl.where(empty, 0, nties)
    count = tl.where(empty, 0, count)
    cut_idx = tl.where(empty, -1, tl.cast(V, tl.int64))
    cut_idx = tl.where((nties < n_total) & (empty == 0), TIE_PENDING, cut_idx)
    tl.store(thr_key_ptr + row, z)
    tl.store(thr_bits_ptr + row, bits_of_key(z, W).to(tl.int32))
    tl.store(num_ties_ptr + row, nties.to(tl.int32))
    tl.store(count_ptr + row, count.to(tl.int32))
    tl.store(hit_ptr + row, hit.to(tl.int8))
    tl.store(cut_idx_ptr + row, cut_idx)


@triton.jit
def is_tie(raw, z32, c_eq, DTYPE: tl.constexpr, W: tl.constexpr, VALUE_CMP: tl.constexpr):
    """Whether entries equal the threshold: their keys against its key ``z32``, or (``VALUE_CMP``) their
    float32 values against its :func:`equal_value` ``c_eq``."""
    if VALUE_CMP:
        eq = upcast(raw, DTYPE) == c_eq
    else:
        eq = keys_of(raw, DTYPE, W) == z32
    return eq


TIE_PENDING = tl.constexpr(-2)  # cut_idx of a row whose tie group is cut, before tie_pick_kernel


@triton.jit(do_not_specialize=["V", "row0", "n_spans"])
def tie_count_kernel(x_ptr, stride_xb, stride_xv, V, row0, thr_key_ptr, cut_idx_ptr, tie_cnt_ptr, n_spans,
                     ticket_ptr, num_ties_ptr, SPAN: tl.constexpr, BLOCK: tl.constexpr, DTYPE: tl.constexpr,
                     W: tl.constexpr, FOLD: tl.constexpr = False, N_SPANS_P2: tl.constexpr = 2,
                     CHUNK: tl.constexpr = 4096, REVERSE: tl.constexpr = False, PDL: tl.constexpr = 0,
                     VALUE_CMP: tl.constexpr = False, KEY_NEG_INF: tl.constexpr = 0, KEY_POS_INF: tl.constexpr = 0):
    """grid (rows, spans): entries equal to the threshold in each span of a row whose tie group is cut.

    ``FOLD``: the row's last program to store its count (:func:`last_of_row`) runs
    :func:`tie_pick_kernel` for the row, so that the cut tie is one launch.  ``REVERSE``:
    the grid from its end (:func:`grid_cell`).  ``VALUE_CMP``: entries compared as float32
    values with :func:`equal_value` (no key an entry)."""
    pdl_start(PDL)
    slot, span = grid_cell(REVERSE)
    row = (row0 + slot).to(tl.int64)
    if tl.load(cut_idx_ptr + row) == TIE_PENDING:
        thr = tl.load(thr_key_ptr + row)
        z32 = thr.to(tl.uint32)
        c_eq = equal_value(thr, DTYPE, W, KEY_NEG_INF, KEY_POS_INF) if VALUE_CMP else 0.0
        x_row = x_ptr + row * stride_xb
        start = tl.cast(span, tl.int64) * SPAN
        n_eq = tl.zeros((BLOCK,), tl.int32)
        if start + SPAN <= V:
            # a whole span (all but a row's last): no mask, so that a contiguous row's loads are vectors
            # (V is not specialized: a mask of unknown constancy keeps them scalar, 16-bit rows most of all)
            for i in range(0, SPAN, BLOCK):
                offs = start + i + tl.arange(0, BLOCK).to(tl.int64)
                raw = tl.load(x_row + offs * stride_xv)
                n_eq += is_tie(raw, z32, c_eq, DTYPE, W, VALUE_CMP).to(tl.int32)
        else:
            for i in range(0, SPAN, BLOCK):
                offs = start + i + tl.arange(0, BLOCK).to(tl.int64)
                inb = offs < V
                raw = tl.load(x_row + offs * stride_xv, mask=inb, other=0.0)
                n_eq += (inb & is_tie(raw, z32, c_eq, DTYPE, W, VALUE_CMP)).to(tl.int32)
        tl.store(tie_cnt_ptr + slot.to(tl.int64) * n_spans + span, tl.sum(n_eq, axis=0))
        if FOLD:
            if last_of_row(ticket_ptr + slot, n_spans):
                tie_pick_kernel(x_ptr, stride_xb, stride_xv, V, row0, thr_key_ptr, num_ties_ptr, cut_idx_ptr,
                                tie_cnt_ptr, n_spans, SPAN, N_SPANS_P2, CHUNK, DTYPE, W, REVERSE)


@triton.jit(do_not_specialize=["V", "row0", "n_spans"])
def tie_pick_kernel(x_ptr, stride_xb, stride_xv, V, row0, thr_key_ptr, num_ties_ptr, cut_idx_ptr, tie_cnt_ptr,
                    n_spans, SPAN: tl.constexpr, N_SPANS_P2: tl.constexpr, CHUNK: tl.constexpr,
                    DTYPE: tl.constexpr, W: tl.constexpr, REVERSE: tl.constexpr = False, PDL: tl.constexpr = 0):
    """grid (rows,): the index of the ``num_ties``-th entry equal to the threshold, in index
    order: the span that holds it from the span counts (in span order), then a prefix
    sum over that span alone, CHUNK entries a step (also run by a program of
    :func:`tie_count_kernel` over ``(rows, spans)``: its row slot, from the end with ``REVERSE``)."""
    pdl_start(PDL)
    slot = grid_cell(REVERSE)[0]
    row = (row0 + slot).to(tl.int64)
    if tl.load(cut_idx_ptr + row) == TIE_PENDING:
        z32 = tl.load(thr_key_ptr + row).to(tl.uint32)
        nties = tl.load(num_ties_ptr + row).to(tl.int64)
        sidx = tl.arange(0, N_SPANS_P2)
        cnt = tl.load(tie_cnt_ptr + slot.to(tl.int64) * n_spans + sidx, mask=sidx < n_spans, other=0).to(tl.int64)
        incl = tl.cumsum(cnt, axis=0)
        s = tl.min(tl.where(incl >= nties, sidx, N_SPANS_P2), axis=0)  # the span holding it
        seen = tl.sum(tl.where(sidx < s, cnt, 0), axis=0)
        x_row = x_ptr + row * stride_xb
        cut_idx = tl.full((), -1, tl.int64)
        c = 0
        found = False
        while (found == 0) & (c < SPAN // CHUNK):
            offs = tl.cast(s, tl.int64) * SPAN + c * CHUNK + tl.arange(0, CHUNK).to(tl.int64)
            inb = offs < V
            raw = tl.load(x_row + offs * stride_xv, mask=inb, other=0.0)
            eq = (inb & (keys_of(raw, DTYPE, W) == z32)).to(tl.int64)
            n_eq = tl.sum(eq, axis=0)
            if seen + n_eq >= nties:
                run = seen + tl.cumsum(eq, axis=0)
                cut_idx = tl.max(tl.where((eq != 0) & (run == nties), offs, -1), axis=0)
                found = True
            seen += n_eq
            c += 1
        tl.store(cut_idx_ptr + row, cut_idx)


# Per-row state of the miss path (int64 [B, ST_I], float32 [B, ST_F]).
ST_I = tl.constexpr(16)  # stage, lo, hi, base_cnt, z_k, nties_k, above_k, n_k, kmax, nmax, inf_mode, n_keep,
#                          n_in (exact count of keys in (lo, hi], -1 unknown), n_ub (an upper bound of it,
#                          -1 unknown), spare x2
ST_F = tl.constexpr(4)  # base_mass, target_p, m, (spare)


@triton.jit
def span_masses(part_f_row, n_spans, m, N_SPANS_P2: tl.constexpr, LOW: tl.constexpr):
    """A row's softmax denominator, candidate mass and (``LOW``) mass above the low cut: the span
    partials rescaled to the row max ``m`` and added in span order, as one scalar chain that every
    thread of the program runs alike, so that every thread holds the same bits.

    Not ``tl.sum`` of the rescaled vector: the compiler contracts a product into the first step of
    a tree reduction (an FMA with the value shuffled in from another lane), so lanes round
    differently and end a last bit apart.  A top-p target that differs between threads sends them
    down different search paths, and the program's reductions then mix their states (on the H200:
    a NaN threshold, counts a few entries off; ``compile_check`` now rejects the pattern).
    """
    z = tl.zeros((), tl.float32)
    c = tl.zeros((), tl.float32)
    low = tl.zeros((), tl.float32)
    for s in tl.static_range(N_SPANS_P2):
        ok = s < n_spans
        pf = part_f_row + s * 4
        m_s = tl.load(pf + 0, mask=ok, other=float("-inf"))
        f = tl.where(m_s == float("-inf"), 0.0, exp_of(m_s - m))
        z += tl.load(pf + 1, mask=ok, other=0.0) * f
        c += tl.load(pf + 2, mask=ok, other=0.0) * f
        if LOW:
            low += tl.load(pf + 3, mask=ok, other=0.0) * f
    return z, c, low


@triton.jit(do_not_specialize=["V", "row0", "k_scalar", "p_scalar", "k_mode", "p_mode_arg", "ties_all",
                               "truncation", "n_spans"])
def finish_kernel(
    x_ptr, stride_xb, stride_xv, V, row0,
    k_ptr, k_scalar, p_ptr, p_scalar, k_mode, p_mode_arg, ties_all, truncation,
    cand_ptr, part_i_ptr, part_f_ptr, n_spans, ctr_ptr, state_i_ptr, state_f_ptr,
    thr_key_ptr, thr_bits_ptr, num_ties_ptr, count_ptr, hit_ptr, cut_idx_ptr, part_low_ptr, lanes_ptr,
    N_SPANS_P2: tl.constexpr, SPAN_CAP: tl.constexpr, CB: tl.constexpr,
    REG_CAP: tl.constexpr, REG_SMALL: tl.constexpr, REG_MID: tl.constexpr, NP: tl.constexpr,
    MAX_ROUNDS: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr, KEY_NEG_INF: tl.constexpr,
    TWO_CUTS: tl.constexpr = False, VALUE_LANES: tl.constexpr = False, NPM: tl.constexpr = 16,
    FUSED_ROUNDS: tl.constexpr = False, RADIX: tl.constexpr = False,
    PDL: tl.constexpr = 0, SAMPLE_LANES: tl.constexpr = 0,
):
    """One row after the span pass: combine partials, and on a hit search the candidates.

    A miss leaves the row to the parallel miss rounds (``round_kernel`` and
    ``update_kernel``) through its state; every other row is answered here.
    ``TWO_CUTS``: a miss also narrows the range with the low cut's exact count and
    mass (:func:`row_cut_key`).  ``SAMPLE_LANES`` (a sample size, with ``VALUE_LANES``): a top-p
    row's first round takes :func:`sample_taus` lanes.
    """
    pdl_start(PDL)
    slot = tl.program_id(0)  # also when a span or round program runs it (FOLD): its row slot
    row = (row0 + slot).to(tl.int64)
    x_row = x_ptr + row * stride_xb
    k_active, k, p_mode, p = row_params(row, k_ptr, k_scalar, p_ptr, p_scalar, V, k_mode, p_mode_arg)
    part_i_row = part_i_ptr + slot.to(tl.int64) * n_spans * 8
    part_f_row = part_f_ptr + slot.to(tl.int64) * n_spans * 4
    rowcap = n_spans * SPAN_CAP
    cand_row = cand_ptr + slot.to(tl.int64) * rowcap

    # --- combine span partials in span order -------------------------------------------
    sidx = tl.arange(0, N_SPANS_P2)
    sval = sidx < n_spans
    pi = part_i_row + sidx * 8
    n_cand_s = tl.load(pi + 0, mask=sval, other=0)
    n_cand = tl.sum(n_cand_s, axis=0)
    overflow = n_cand > rowcap
    n_keep = tl.sum(tl.load(pi + 1, mask=sval, other=0), axis=0)
    n_inf = tl.sum(tl.load(pi + 2, mask=sval, other=0), axis=0)
    kmin_s = tl.load(pi + 3, mask=sval, other=0xFFFFFFFF)
    kmin = tl.min(kmin_s, axis=0)
    nmin = tl.sum(tl.where(kmin_s == kmin, tl.load(pi + 4, mask=sval, other=0), 0), axis=0)
    kmax_s = tl.load(pi + 5, mask=sval, other=0)
    kmax = tl.max(kmax_s, axis=0)
    nmax = tl.sum(tl.where(kmax_s == kmax, tl.load(pi + 6, mask=sval, other=0), 0), axis=0)
    cut = tl.load(part_i_row + 7)
    m = tl.max(tl.load(part_f_row + sidx * 4, mask=sval, other=float("-inf")), axis=0)  # exact: one value
    z_all, cmass, lmass = span_masses(part_f_row, n_spans, m, N_SPANS_P2, TWO_CUTS)
    inf_mode = n_inf > 0
    z_all = tl.where(inf_mode, n_inf.to(tl.float32), z_all)
    cmass = tl.where(inf_mode, n_inf.to(tl.float32), cmass)
    # a top-k row weighs its top-p over its top-k survivors: the row max is the value
    # of kmax (the same float as the span max over finite entries; with +inf in the
    # row, inf_mode makes the weights ignore m), also when the span pass skipped the
    # softmax partials (ROW_Z off)
    m = tl.where(k_active & (kmax > KEY_NEG_INF), value_of_key(kmax, DTYPE, W), m)

    # --- hit or miss ------------------------------------------------------------------
    K = tl.minimum(k, n_keep)
    needs_search = (k_active | (p_mode == 2)) & (n_keep > 0)
    usable = (truncation != 0) & (cut > 0) & (overflow == 0)
    hit = tl.where(k_active, usable & (n_cand >= K), (p_mode == 2) & usable & (cmass >= p * z_all))
    hit = hit & needs_search
    stage = tl.where(k_active, 1, 2)
    target_p = p * z_all

    # rows that need no search: keep every keepable entry, or the best token (p <= 0)
    z = kmin
    nties = nmin
    count = n_keep
    n_total = nmin
    if (p_mode == 1) & (k_active == 0):
        z = kmax
        nties = tl.where(ties_all != 0, nmax, 1)
        count = nties
        n_total = nmax
    next_stage = stage * 0
    if hit:
        z, nties, count, n_total, next_stage = solve_slot(
            n_cand, cand_row, ctr_ptr + slot, rowcap // CB, x_row, stride_xv, V,
            stage, cut, kmax, 0, 0.0, K, p_mode, p, target_p, z, nties, count - nties, n_total,
            kmax, nmax, ties_all, m, inf_mode, NP, MAX_ROUNDS, SPAN_CAP, CB, DTYPE, W, REG_SMALL, REG_MID, REG_CAP,
            FUSED_ROUNDS, RADIX)
    si = state_i_ptr + row * ST_I
    sf = state_f_ptr + row * ST_F
    if needs_search & (hit == 0):
        # the miss path: C(kmin - 1) is everything, C(kmax) is nothing.  A usable cut
        # splits that range: the span pass counted (and weighed) every x > cut, also
        # past a full slot, so C(cut) is exact and says on which side the boundary is.
        lo_m = kmin - 1
        hi_m = kmax
        base_c = n_cand * 0
        base_m = cmass * 0.0
        n_in = n_keep  # exact count of keys in (lo_m, hi_m]
        above_m = z_all  # (top-p) the mass above lo_m
        if (truncation != 0) & (cut > 0) & (cut < kmax) & (cut > lo_m):
            if k_active:
                enough = n_cand >= K
            else:
                enough = cmass >= target_p
            if enough:
                lo_m = cut
                n_in = n_cand
                above_m = cmass
            else:
                hi_m = cut
                base_c = n_cand
                base_m = cmass
                n_in = n_keep - n_cand
        if TWO_CUTS:
            # the low cut below a gathering cut: its exact count and mass above split the range again
            pl = part_low_ptr + slot.to(tl.int64) * n_spans * 2 + sidx * 2
            n_low = tl.sum(tl.load(pl, mask=sval, other=0), axis=0)
            low = tl.load(part_low_ptr + slot.to(tl.int64) * n_spans * 2 + 1)
            lmass = tl.where(inf_mode, n_inf.to(tl.float32), lmass)
            if (truncation != 0) & (k_active == 0) & (low > 0) & (low > lo_m) & (low < hi_m):
                if lmass >= target_p:
                    lo_m = low
                    n_in = n_low - base_c
                    above_m = lmass
                else:
                    hi_m = low
                    base_c = n_low
                    base_m = lmass
                    n_in = n_keep - n_low
        tl.store(si + 0, stage.to(tl.int64))
        tl.store(si + 1, lo_m)
        tl.store(si + 2, hi_m)
        tl.store(si + 3, base_c)
        tl.store(si + 8, kmax)
        tl.store(si + 9, nmax)
        tl.store(si + 10, inf_mode.to(tl.int64))
        tl.store(si + 11, n_keep)
        tl.store(si + 12, n_in)
        tl.store(si + 13, n_in * 0 - 1)
        tl.store(sf + 0, base_m)
        tl.store(sf + 1, target_p)
        tl.store(sf + 2, m)
        tl.store(hit_ptr + row, hit.to(tl.int8))
        if VALUE_LANES:  # the first round's lanes
            taus = lane_taus(lo_m, hi_m, NPM, True, DTYPE, W)
            if SAMPLE_LANES:
                if (k_active == 0) & (inf_mode == 0):
                    frac = (target_p - base_m) / (above_m - base_m)
                    taus = sample_taus(x_row, stride_xv, V, lo_m, hi_m, frac, m, taus, NPM, SAMPLE_LANES, DTYPE, W)
            tl.store(lanes_ptr + row * NPM + tl.arange(0, NPM), taus)
    else:
        tl.store(si + 0, tl.zeros((), tl.int64))
        finalize(V, row, z, nties, count, n_total, n_keep == 0, hit,
                 thr_key_ptr, thr_bits_ptr, num_ties_ptr, count_ptr, hit_ptr, cut_idx_ptr, W, KEY_NEG_INF)
    # the span counters are spent (the partials hold the counts): zero them for the
    # miss rounds' gathers and the next wave
    tl.store(ctr_ptr + slot, tl.zeros((), tl.int32))


@triton.jit
def lane_taus(lo, hi, NPM: tl.constexpr, VALUE: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr):
    """The NPM lanes of a miss round over (lo, hi], int64, non-decreasing, lane 0 = lo.

    Without ``VALUE``: ``lo + (hi - lo) * j // NPM`` (4 bits of key a round).  With
    it: half of them evenly in key (NPM // 2 lanes: at least 3 bits a round) and half
    evenly in value between lo's and hi's values, merged in order.  Keys of floats
    are close to logarithmic in the value, so key lanes crowd near 0 while the
    boundary of a wide row sits where the values are dense; value lanes put lanes
    there.  Equal lanes are harmless: the update picks the last lane whose count or
    mass reaches the target, and equal lanes have equal counts and masses.
    """
    idx = tl.arange(0, NPM).to(tl.int64)
    if VALUE:
        HALF: tl.constexpr = NPM // 2
        j = idx % HALF
        by_key = lo + ((hi - lo) * j) // HALF
        vlo = value_of_key(lo, DTYPE, W)
        vhi = value_of_key(hi, DTYPE, W)
        d = vhi - vlo
        ok = (d == d) & (tl.abs(d) < float("inf")) & (tl.abs(vlo) < float("inf"))
        v = vlo + d * (j.to(tl.float32) * (1.0 / HALF))
        v = tl.where(ok, v, float("nan"))  # no usable value range: key 0, clamped to lo below
        by_value = cut_key_of(v, j >= 0, DTYPE, W)
        by_value = tl.maximum(tl.minimum(by_value, hi - 1), lo)  # lo also for an empty range
        taus = tl.sort(tl.where(idx < HALF, by_key, by_value))
    else:
        taus = pivot(lo, hi, idx, NPM - 1)
    return taus


@triton.jit
def sample_taus(x_row, stride_xv, V, lo, hi, frac, m, fallback, NPM: tl.constexpr, SAMPLES: tl.constexpr,
                DTYPE: tl.constexpr, W: tl.constexpr):
    """The first miss round's NPM lanes of a top-p row (option ``sample_lanes``): lane 0 is
    ``lo``, the others sit just below sample values around the sample's estimate of the boundary.

    The sample is every ``V // SAMPLES``-th entry.  Its keys in (lo, hi], ranked from the
    largest, carry their weights ``exp(x - m)``; the boundary's estimate is the first rank whose
    running weight reaches ``frac`` of theirs, ``frac`` being the share of the range's exact mass
    that the boundary needs.  Lane ``HALF + d`` sits below the rank
    ``i - sign(d) * 112 |d|(|d| + 1) // (A(A + 1))``, ``A = NPM // 2 - 1`` (NPM = 16: ranks i +- 4, 12,
    24, 40, 60, 84, 112; NPM = 8: i +- 18, 56, 112; NPM >= 4), so a lane near the estimate holds
    about ``V / SAMPLES`` entries a rank step and the update can gather it next.  Lanes only decide
    how fast a row narrows, never its answer.  ``fallback`` (the lanes otherwise) when no sample
    key is in the range."""
    j = tl.arange(0, SAMPLES)
    offs = j.to(tl.int64) * tl.maximum(V // SAMPLES, 1)
    raw = tl.load(x_row + offs * stride_xv, mask=offs < V, other=float("nan"))
    key = keys_of(raw, DTYPE, W)  # NaN (and past the row): 0, below every lo
    ks = tl.sort(tl.where((key > lo) & (key <= hi), key, 0), descending=True)
    live = ks > 0
    n_s = tl.sum(live.to(tl.int32), axis=0)
    cw = tl.cumsum(tl.where(live, exp_of(value_of_key(ks, DTYPE, W) - m), 0.0), axis=0)
    i = tl.sum((live & (cw < frac * tl.max(cw, axis=0))).to(tl.int32), axis=0)
    idx = tl.arange(0, NPM)
    HALF: tl.constexpr = NPM // 2
    A: tl.constexpr = HALF - 1  # the outermost lanes' |d| (NPM >= 4)
    a = tl.abs(idx - HALF)
    r = i - tl.where(idx < HALF, -1, 1) * ((112 * a * (a + 1)) // (A * (A + 1)))
    r = tl.minimum(tl.maximum(r, 0), n_s - 1)
    at = tl.max(tl.where(r[:, None] == j[None, :], ks[None, :], 0), axis=1).to(tl.int64)
    taus = tl.where(idx == 0, lo, tl.maximum(at - 1, lo))
    return tl.where(n_s > 0, taus, fallback)


@triton.jit
def round_lanes(lanes_ptr, row, lo, hi, NPM: tl.constexpr, VALUE: tl.constexpr):
    """The lanes of the current miss round: stored by the finish or the last update (``VALUE``,
    so that every kernel uses the same bits), or computed."""
    idx = tl.arange(0, NPM).to(tl.int64)
    if VALUE:
        taus = tl.load(lanes_ptr + row * NPM + idx)
    else:
        taus = pivot(lo, hi, idx, NPM - 1)
    return taus


@triton.jit
def gather_bound(stage, hi, p_mode):
    """Upper end of the keys a miss round gathers: ``hi``, or everything above ``lo``
    while top-k runs ahead of a top-p stage (which then needs all keys >= z_k)."""
    return tl.where((stage == 1) & (p_mode == 2), 0xFFFFFFFF, hi)


@triton.jit
def block_values(x_row, stride_xv, V, first, BLOCK: tl.constexpr, DTYPE: tl.constexpr):
    """Raw values and their float32 values (:func:`upcast`) of row entries [first, first + BLOCK);
    NaN past the row (it fails every comparison of :func:`above_value`)."""
    offs = first + tl.arange(0, BLOCK).to(tl.int64)
    raw = tl.load(x_row + offs * stride_xv, mask=offs < V, other=float("nan"))
    return raw, upcast(raw, DTYPE)


@triton.jit
def gather_now(stage, p_mode, n_in, base_cnt, n_spans, SPAN_CAP: tl.constexpr):
    """Whether a miss round gathers (lo, gather_bound] (and evaluates no lanes).

    ``n_in`` is the exact count of keys in (lo, hi] (-1: unknown).  A round gathers
    when what it would gather is known to fit the row's slot, so that the update
    can finish the row.
    """
    n_gb = tl.where((stage == 1) & (p_mode == 2), n_in + base_cnt, n_in)
    return (n_in >= 0) & (n_gb <= n_spans * SPAN_CAP)


@triton.jit
def round_span(
    slot, span, stage, x_ptr, stride_xb, stride_xv, V, row0,
    k_ptr, k_scalar, p_ptr, p_scalar, k_mode, p_mode_arg,
    cand_ptr, rpart_i_ptr, rpart_f_ptr, n_spans, ctr_ptr, state_i_ptr, state_f_ptr, lanes_ptr,
    SPAN: tl.constexpr, SPAN_CAP: tl.constexpr, BLOCK: tl.constexpr, UNROLL: tl.constexpr, NPM: tl.constexpr,
    DTYPE: tl.constexpr, W: tl.constexpr, KEY_NEG_INF: tl.constexpr, MASS_ONLY: tl.constexpr,
    VALUE_LANES: tl.constexpr,
):
    """One miss round over span ``span`` of the open row in slot ``slot`` (``stage != 0``).

    A round either *evaluates* NPM lanes over (lo, hi] (lane j is
    tau_j = lo + (hi - lo) * j // NPM, lane 0 is lo): the count and mass of the
    span's keys in (tau_j, hi]; or, once the range is known to be small
    (:func:`gather_now`), it *gathers* the keys in (lo, gather_bound] into the
    row's slot, so that the update can finish the row in one program.

    Lane partials are [NPM, BLOCK] per-thread accumulators (one column per
    entry of a block), reduced once after the loop; each iteration issues
    UNROLL block loads, so that enough bytes are in flight.

    ``MASS_ONLY`` (an option): a top-p round (stage 2) accumulates lane masses
    only, plus two counts, keys above hi and keys in (lo, hi]; the update then
    knows the count above the *current* hi exactly and bounds the count of the
    next range by its mass.  Gathering rounds count the keys above hi too.
    """
    row = (row0 + slot).to(tl.int64)
    si = state_i_ptr + row * ST_I
    sf = state_f_ptr + row * ST_F
    _k_active, _k, p_mode, _p = row_params(row, k_ptr, k_scalar, p_ptr, p_scalar, V, k_mode, p_mode_arg)
    lo = tl.load(si + 1)
    hi = tl.load(si + 2)
    base_cnt = tl.load(si + 3)
    n_in = tl.load(si + 12)
    n_est = tl.where(n_in >= 0, n_in, tl.load(si + 13))
    inf_mode = tl.load(si + 10) != 0
    m = tl.load(sf + 2)
    x_row = x_ptr + row * stride_xb
    base = (slot.to(tl.int64) * n_spans + span)
    start = tl.cast(span, tl.int64) * SPAN
    c_hi_v = tl.zeros((BLOCK,), tl.int32)  # keys above hi (MASS_ONLY)
    # lo >= KEY_NEG_INF (the finish starts from kmin - 1, lanes only narrow), so every key
    # above a lane is keepable and float compares decide it (above_value: x >= c is
    # key(x) > tau; NaN, -inf and entries past the row fail them all)
    KEY_POS_INF: tl.constexpr = KEY_NEG_INF ^ ((1 << W) - 1)  # the key of +inf
    c_lo = above_value(lo, DTYPE, W, KEY_NEG_INF, KEY_POS_INF)
    c_hi = above_value(hi, DTYPE, W, KEY_NEG_INF, KEY_POS_INF)
    if gather_now(stage, p_mode, n_est, base_cnt, n_spans, SPAN_CAP):
        c_gb = above_value(gather_bound(stage, hi, p_mode), DTYPE, W, KEY_NEG_INF, KEY_POS_INF)
        rowcap = n_spans * SPAN_CAP
        cand_base = cand_ptr + slot.to(tl.int64) * rowcap
        for i in range(0, SPAN, BLOCK * UNROLL):
            for u in tl.static_range(UNROLL):
                raw, xf = block_values(x_row, stride_xv, V, start + i + u * BLOCK, BLOCK, DTYPE)
                g = (xf >= c_lo) & ~(xf >= c_gb)  # lo < key <= gather bound (NaN c_gb: no bound)
                append_keys(cand_base, ctr_ptr + slot, slot_value(raw, DTYPE), g, rowcap, False)
                if MASS_ONLY:
                    c_hi_v += (xf >= c_hi).to(tl.int32)
        if MASS_ONLY:
            tl.store(rpart_i_ptr + base * NPM, tl.sum(c_hi_v, axis=0))
    elif MASS_ONLY & (stage == 2):
        lanes = tl.arange(0, NPM)
        c_tau = above_value(round_lanes(lanes_ptr, row, lo, hi, NPM, VALUE_LANES), DTYPE, W, KEY_NEG_INF,
                            KEY_POS_INF)[:, None]
        mass2 = tl.zeros((NPM, BLOCK), tl.float32)
        c_in_v = tl.zeros((BLOCK,), tl.int32)
        for i in range(0, SPAN, BLOCK * UNROLL):
            for u in tl.static_range(UNROLL):
                xf = block_values(x_row, stride_xv, V, start + i + u * BLOCK, BLOCK, DTYPE)[1]
                above = xf >= c_hi  # key above hi (NaN c_hi: hi is the key of +inf)
                c_hi_v += above.to(tl.int32)
                xin = tl.where(above, float("-inf"), xf)
                inl = xin >= c_lo  # lo < key <= hi
                c_in_v += inl.to(tl.int32)
                w = tl.where(inl, weight_of(xin, m, inf_mode), 0.0)
                # a lane adds w times 1.0 or 0.0: one compare to a float and one FMA, whose
                # sum is the plain sum's bits (w * 1.0 + s rounds once, as w + s; w * 0.0 is +0.0)
                mass2 += w[None, :] * (xin[None, :] >= c_tau).to(tl.float32)
        tl.store(rpart_i_ptr + base * NPM, tl.sum(c_hi_v, axis=0))
        tl.store(rpart_i_ptr + base * NPM + 1, tl.sum(c_in_v, axis=0))
        tl.store(rpart_f_ptr + base * NPM + lanes, tl.sum(mass2, axis=1))
    else:
        lanes = tl.arange(0, NPM)
        c_tau = above_value(round_lanes(lanes_ptr, row, lo, hi, NPM, VALUE_LANES), DTYPE, W, KEY_NEG_INF,
                            KEY_POS_INF)[:, None]
        # per-thread partials, reduced once after the loop; counts as floats (a column counts at
        # most SPAN // BLOCK entries, a span at most SPAN: exact, and one add a lane like the masses)
        cnt2 = tl.zeros((NPM, BLOCK), tl.float32)
        mass2 = tl.zeros((NPM, BLOCK), tl.float32)
        if stage == 1:  # a top-k stage: counts only
            for i in range(0, SPAN, BLOCK * UNROLL):
                for u in tl.static_range(UNROLL):
                    xf = block_values(x_row, stride_xv, V, start + i + u * BLOCK, BLOCK, DTYPE)[1]
                    # values above hi become -inf, which no lane counts
                    xin = tl.where(xf >= c_hi, float("-inf"), xf)
                    cnt2 += (xin[None, :] >= c_tau).to(tl.float32)
        else:
            for i in range(0, SPAN, BLOCK * UNROLL):
                for u in tl.static_range(UNROLL):
                    xf = block_values(x_row, stride_xv, V, start + i + u * BLOCK, BLOCK, DTYPE)[1]
                    xin = tl.where(xf >= c_hi, float("-inf"), xf)
                    w = tl.where(xin >= c_lo, weight_of(xin, m, inf_mode), 0.0)
                    gt = (xin[None, :] >= c_tau).to(tl.float32)
                    cnt2 += gt
                    mass2 += w[None, :] * gt  # the plain sum's bits (see the MASS_ONLY loop)
        tl.store(rpart_i_ptr + base * NPM + lanes, tl.sum(cnt2, axis=1).to(tl.int32))
        tl.store(rpart_f_ptr + base * NPM + lanes, tl.sum(mass2, axis=1))


@triton.jit(do_not_specialize=["V", "row0", "k_scalar", "p_scalar", "k_mode", "p_mode_arg", "n_spans", "ties_all",
                               "last", "n_loop"])
def round_kernel(
    x_ptr, stride_xb, stride_xv, V, row0,
    k_ptr, k_scalar, p_ptr, p_scalar, k_mode, p_mode_arg,
    cand_ptr, rpart_i_ptr, rpart_f_ptr, n_spans, ctr_ptr, state_i_ptr, state_f_ptr, lanes_ptr,
    ticket_ptr, ties_all, last, thr_key_ptr, thr_bits_ptr, num_ties_ptr, count_ptr, hit_ptr, cut_idx_ptr, n_loop,
    chain_ptr, done_ptr, n_rows,
    SPAN: tl.constexpr, SPAN_CAP: tl.constexpr, BLOCK: tl.constexpr, UNROLL: tl.constexpr, NPM: tl.constexpr,
    DTYPE: tl.constexpr, W: tl.constexpr, KEY_NEG_INF: tl.constexpr,
    FOLD: tl.constexpr, N_SPANS_P2: tl.constexpr, CB: tl.constexpr, REG_CAP: tl.constexpr, REG_SMALL: tl.constexpr,
    REG_MID: tl.constexpr, NP: tl.constexpr, MAX_ROUNDS: tl.constexpr,
    MASS_ONLY: tl.constexpr = False, VALUE_LANES: tl.constexpr = False, FUSED_ROUNDS: tl.constexpr = False,
    RADIX: tl.constexpr = False, ROW_MODE: tl.constexpr = False, REVERSE: tl.constexpr = False,
    CHAIN: tl.constexpr = False, PDL: tl.constexpr = 0,
):
    """One miss round: :func:`round_span` over one span of an open row, grid ``(rows, n_spans)``.

    ``REVERSE`` (span grid only): the grid from its end (:func:`grid_cell`), so that a
    round reads first what the pass before it read last.

    ``FOLD``: the row's last program to finish its span (:func:`last_of_row`) runs
    :func:`update_kernel`, so that a round is one launch.  The update's bits do not
    depend on which program runs it.

    ``ROW_MODE`` (grid ``(G, 1)``, ``G <= n_rows``): a program runs the round over a row's
    spans in span order, then the row's update; the same bits.  For requests whose rows
    rarely miss (the top-k geometry), a round of rows that hit then costs a load a row
    and no update launch, where it cost ``n_spans`` programs a row and a launch of the
    updates.  It runs ``n_loop`` such rounds one after the other
    (the option ``row_loop``: all of a wave's rounds in one launch), ``last`` applying
    to the last of them.  Program ``g`` takes the rows ``g, g + G, ...`` of the wave's
    ``n_rows`` (the option ``row_programs``): a wave of rows that hit then costs one
    load a row in G programs, not a program a row.

    ``CHAIN`` (with ``FOLD``; grid ``(rows, n_spans * n_loop)``, the option ``chain_rounds``):
    ``n_loop`` span-grid rounds in one launch.  A program takes its (round, span) from its row's
    ticket ``chain[slot]`` (an atomic taken first, so ticket order is start order), and a program of
    round ``r > 0`` of an open row waits until the update of round ``r - 1`` has set ``done[slot]``
    to ``r`` (or the row has closed).  A program only ever waits on programs that took a lower
    ticket, which have started, so no grid-wide residency is needed (the order of tickets that a
    single-pass scan's decoupled look-back relies on).  A row that hit (stage 0 from the finish) costs
    one ticket and one load a program, in one launch instead of ``n_loop``.  Both counters are zero
    on entry and left at zero (the last ticket resets ``chain``; the update that closes the row, or the
    last round's, resets ``done``).  The same bits as one launch a round: the same programs run the
    same round and the same update, in the same order of rounds.
    """
    pdl_start(PDL)
    slot, span_of_grid = grid_cell(REVERSE and not ROW_MODE)
    if ROW_MODE:
        # the wave's rows slot, slot + G, ...; for each, n_loop rounds in this one program (ROW_LOOP; else one):
        # the update's state is read back by the next round after a barrier, and only the last of them may
        # finish a row that is still open over the row
        for i in range(slot, n_rows, tl.num_programs(0)):
            row_slot = slot * 0 + i  # a tensor also under the interpreter, whose loop counters are ints
            for r in range(n_loop):
                stage = tl.load(state_i_ptr + (row0 + row_slot).to(tl.int64) * ST_I)
                if stage != 0:
                    for span in range(n_spans):
                        round_span(row_slot, span, stage, x_ptr, stride_xb, stride_xv, V, row0, k_ptr, k_scalar,
                                   p_ptr, p_scalar, k_mode, p_mode_arg, cand_ptr, rpart_i_ptr, rpart_f_ptr, n_spans,
                                   ctr_ptr, state_i_ptr, state_f_ptr, lanes_ptr, SPAN, SPAN_CAP, BLOCK, UNROLL, NPM,
                                   DTYPE, W, KEY_NEG_INF, MASS_ONLY, VALUE_LANES)
                    tl.debug_barrier()  # every span's partials and gathered keys, for every thread of the update
                    update_kernel(
                        x_ptr, stride_xb, stride_xv, V, row0, k_ptr, k_scalar, p_ptr, p_scalar, k_mode,
                        p_mode_arg, ties_all, cand_ptr, rpart_i_ptr, rpart_f_ptr, n_spans, ctr_ptr, state_i_ptr,
                        state_f_ptr, tl.where(r == n_loop - 1, last, 0), thr_key_ptr, thr_bits_ptr, num_ties_ptr,
                        count_ptr, hit_ptr, cut_idx_ptr, lanes_ptr, row_slot, N_SPANS_P2, SPAN_CAP, CB, REG_CAP,
                        REG_SMALL, REG_MID, NP, NPM, MAX_ROUNDS, DTYPE, W, KEY_NEG_INF, MASS_ONLY, VALUE_LANES,
                        FUSED_ROUNDS, RADIX,
                    )
                    tl.debug_barrier()  # the update's state, lanes and counters, for the next round's threads
    elif CHAIN:
        si0 = state_i_ptr + (row0 + slot).to(tl.int64) * ST_I
        t = tl.atomic_add(chain_ptr + slot, 1, sem="relaxed")
        if t == n_spans * n_loop - 1:  # every program of the row has its ticket: zero for the next wave
            tl.store(chain_ptr + slot, tl.zeros((), tl.int32))
        r = t // n_spans
        span = t - r * n_spans
        # the finish wrote the stage before this launch; a row's stage only goes from open to 0 in it
        stage = tl.load(si0, volatile=True)
        done = tl.where(stage != 0, 0, r)
        while (stage != 0) & (done < r):  # round r - 1's update (acquire: its state, lanes and counters)
            done = tl.atomic_add(done_ptr + slot, 0, sem="acquire")
            stage = tl.load(si0, volatile=True)
        if stage != 0:
            round_span(slot, span, stage, x_ptr, stride_xb, stride_xv, V, row0, k_ptr, k_scalar, p_ptr, p_scalar,
                       k_mode, p_mode_arg, cand_ptr, rpart_i_ptr, rpart_f_ptr, n_spans, ctr_ptr, state_i_ptr,
                       state_f_ptr, lanes_ptr, SPAN, SPAN_CAP, BLOCK, UNROLL, NPM, DTYPE, W, KEY_NEG_INF, MASS_ONLY,
                       VALUE_LANES)
            if last_of_row(ticket_ptr + slot, n_spans):
                update_kernel(
                    x_ptr, stride_xb, stride_xv, V, row0, k_ptr, k_scalar, p_ptr, p_scalar, k_mode,
                    p_mode_arg, ties_all, cand_ptr, rpart_i_ptr, rpart_f_ptr, n_spans, ctr_ptr, state_i_ptr,
                    state_f_ptr, tl.where(r == n_loop - 1, last, 0), thr_key_ptr, thr_bits_ptr, num_ties_ptr,
                    count_ptr, hit_ptr, cut_idx_ptr, lanes_ptr, slot, N_SPANS_P2, SPAN_CAP, CB, REG_CAP, REG_SMALL,
                    REG_MID, NP, NPM, MAX_ROUNDS, DTYPE, W, KEY_NEG_INF, MASS_ONLY, VALUE_LANES, FUSED_ROUNDS, RADIX,
                )
                tl.debug_barrier()  # every thread's state, lane and counter stores before the release
                closed = (r == n_loop - 1) | (tl.load(si0, volatile=True) == 0)
                tl.atomic_xchg(done_ptr + slot, tl.where(closed, 0, r + 1), sem="release")
    else:
        stage = tl.load(state_i_ptr + (row0 + slot).to(tl.int64) * ST_I)
        if stage != 0:
            round_span(slot, span_of_grid, stage, x_ptr, stride_xb, stride_xv, V, row0, k_ptr, k_scalar,
                       p_ptr, p_scalar, k_mode, p_mode_arg, cand_ptr, rpart_i_ptr, rpart_f_ptr, n_spans, ctr_ptr,
                       state_i_ptr, state_f_ptr, lanes_ptr, SPAN, SPAN_CAP, BLOCK, UNROLL, NPM, DTYPE, W,
                       KEY_NEG_INF, MASS_ONLY, VALUE_LANES)
        if FOLD:
            if stage != 0:
                if last_of_row(ticket_ptr + slot, n_spans):
                    update_kernel(
                        x_ptr, stride_xb, stride_xv, V, row0, k_ptr, k_scalar, p_ptr, p_scalar, k_mode,
                        p_mode_arg, ties_all, cand_ptr, rpart_i_ptr, rpart_f_ptr, n_spans, ctr_ptr, state_i_ptr,
                        state_f_ptr, last, thr_key_ptr, thr_bits_ptr, num_ties_ptr, count_ptr, hit_ptr, cut_idx_ptr,
                        lanes_ptr, slot, N_SPANS_P2, SPAN_CAP, CB, REG_CAP, REG_SMALL, REG_MID, NP, NPM, MAX_ROUNDS,
                        DTYPE, W, KEY_NEG_INF, MASS_ONLY, VALUE_LANES, FUSED_ROUNDS, RADIX, REVERSE,
                    )


@triton.jit(do_not_specialize=["V", "row0", "k_scalar", "p_scalar", "k_mode", "p_mode_arg", "ties_all",
                               "n_spans", "last"])
def update_kernel(
    x_ptr, stride_xb, stride_xv, V, row0,
    k_ptr, k_scalar, p_ptr, p_scalar, k_mode, p_mode_arg, ties_all,
    cand_ptr, rpart_i_ptr, rpart_f_ptr, n_spans, ctr_ptr, state_i_ptr, state_f_ptr, last,
    thr_key_ptr, thr_bits_ptr, num_ties_ptr, count_ptr, hit_ptr, cut_idx_ptr, lanes_ptr, row_slot,
    N_SPANS_P2: tl.constexpr, SPAN_CAP: tl.constexpr, CB: tl.constexpr, REG_CAP: tl.constexpr,
    REG_SMALL: tl.constexpr, REG_MID: tl.constexpr,
    NP: tl.constexpr, NPM: tl.constexpr, MAX_ROUNDS: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr,
    KEY_NEG_INF: tl.constexpr, MASS_ONLY: tl.constexpr = False, VALUE_LANES: tl.constexpr = False,
    FUSED_ROUNDS: tl.constexpr = False, RADIX: tl.constexpr = False, REVERSE: tl.constexpr = False,
    PDL: tl.constexpr = 0,
):
    """After a miss round.  A gathering round: finish the row over the gathered keys
    (they fit), or fall back to evaluating.  An evaluating round: combine the span
    lanes in span order and narrow (lo, hi] to one lane (recording the exact count
    left in it), or, when the range is a single key, settle the stage.  On the
    ``last`` round a row that is still open finishes with a search over the row
    itself (exact, slower).  The row's gather counters are left at zero.

    ``MASS_ONLY`` top-p rounds (see :func:`round_kernel`) bring the exact count
    above the round's hi, not lane counts: after narrowing, the count above the
    new hi is unknown (-1) until the next round counts it, and the count in the
    new range is bounded by its mass over its smallest weight (``n_ub``), which
    decides whether the next round gathers.  A single-key range settles in the
    round after it appears."""
    pdl_start(PDL)
    # the row's slot: given by a round program that runs the update (FOLD, ROW_MODE), else (-1) the grid's
    slot = tl.where(row_slot >= 0, row_slot, grid_cell(REVERSE)[0])
    row = (row0 + slot).to(tl.int64)
    si = state_i_ptr + row * ST_I
    stage = tl.load(si + 0)
    if stage != 0:
        sf = state_f_ptr + row * ST_F
        x_row = x_ptr + row * stride_xb
        k_active, k, p_mode, p = row_params(row, k_ptr, k_scalar, p_ptr, p_scalar, V, k_mode, p_mode_arg)
        lo = tl.load(si + 1)
        hi = tl.load(si + 2)
        base_cnt = tl.load(si + 3)
        z_k = tl.load(si + 4)
        nties_k = tl.load(si + 5)
        above_k = tl.load(si + 6)
        n_k = tl.load(si + 7)
        kmax = tl.load(si + 8)
        nmax = tl.load(si + 9)
        inf_mode = tl.load(si + 10) != 0
        base_mass = tl.load(sf + 0)
        target_p = tl.load(sf + 1)
        m = tl.load(sf + 2)
        K = tl.minimum(k, tl.load(si + 11))
        n_in = tl.load(si + 12)
        n_ub = tl.load(si + 13)
        gathered = gather_now(stage, p_mode, tl.where(n_in >= 0, n_in, n_ub), base_cnt, n_spans, SPAN_CAP)
        mass_round = MASS_ONLY & (stage == 2) & (gathered == 0)
        idx = tl.arange(0, NPM)
        rbase = slot.to(tl.int64) * n_spans
        cnt = tl.zeros((NPM,), tl.int64)
        mass = tl.zeros((NPM,), tl.float32)
        if (gathered == 0) | MASS_ONLY:
            for s in range(n_spans):
                cnt += tl.load(rpart_i_ptr + (rbase + s) * NPM + idx).to(tl.int64)
                mass += tl.load(rpart_f_ptr + (rbase + s) * NPM + idx)
        if MASS_ONLY & (stage == 2):
            base_cnt = pick(cnt, idx, 0)  # this round counted the keys above hi
        c_in = pick(cnt, idx, 1)  # (MASS_ONLY rounds) keys in (lo, hi]
        rowcap = n_spans * SPAN_CAP
        cand_row = cand_ptr + slot.to(tl.int64) * rowcap
        n_g = tl.load(ctr_ptr + slot)
        fits = gathered & (n_g <= rowcap)
        resolved = stage < 0  # False
        z = z_k
        nties = nties_k
        count = above_k + nties_k
        n_total = n_k
        if (stage == 3) & (gathered == 0):  # top-p over the top-k survivors: lane 0 is z_k, base 0
            mass_zk = pick(mass, idx, 0)
            w_zk = weight_of(value_of_key(z_k, DTYPE, W), m, inf_mode)
            target_p = p * (mass_zk + nties_k.to(tl.float32) * w_zk)
            if mass_zk < target_p:
                nties = topp_ties(target_p, mass_zk, w_zk, nties_k, ties_all)
                count = above_k + nties
                resolved = stage > 0
            else:
                stage = stage * 0 + 2
        if resolved == 0:
            if fits:
                gb = gather_bound(stage, hi, p_mode)
                whole = gb > hi  # gathered everything above lo
                hi_s = tl.where(whole, kmax, hi)
                base_cnt_s = tl.where(whole, 0, base_cnt)
                base_mass_s = tl.where(whole, 0.0, base_mass)
                z, nties, count, n_total, nxt = solve_slot(
                    n_g, cand_row, ctr_ptr + slot, rowcap // CB, x_row, stride_xv, V,
                    stage, lo, hi_s, base_cnt_s, base_mass_s, K, p_mode, p, target_p, z_k, nties_k, above_k, n_k,
                    kmax, nmax, ties_all, m, inf_mode, NP, MAX_ROUNDS, SPAN_CAP, CB, DTYPE, W, REG_SMALL, REG_MID,
                    REG_CAP, FUSED_ROUNDS, RADIX)
                if nxt == 3:
                    stage = stage * 0 + 3
                    z_k = z
                    nties_k = nties
                    above_k = count - nties
                    n_k = n_total
                    lo = z_k
                    hi = kmax
                    base_cnt = base_cnt * 0
                    base_mass = tl.zeros((), tl.float32)
                    n_in = above_k
                    n_ub = n_ub * 0 - 1
                else:
                    resolved = stage > 0
            elif gathered:  # the gathered keys did not fit: evaluate lanes next round
                n_in = n_in * 0 - 1
                n_ub = n_ub * 0 - 1
            elif mass_round:
                if hi - lo <= 1:  # the round's range was one key: z* = hi, its copies are c_in
                    w_z = weight_of(value_of_key(hi, DTYPE, W), m, inf_mode)
                    nties = topp_ties(target_p, base_mass, w_z, c_in, ties_all)
                    z = hi
                    count = base_cnt + nties
                    n_total = c_in
                    resolved = stage > 0
                else:
                    ok = (base_mass + mass) >= target_p
                    a = tl.max(tl.where(ok, idx, 0), axis=0)
                    has_next = a + 1 < NPM
                    taus = round_lanes(lanes_ptr, row, lo, hi, NPM, VALUE_LANES)
                    new_lo = pick(taus, idx, a)
                    mass_next = tl.where(has_next, pick(mass, idx, a + 1), 0.0)
                    mass_in = pick(mass, idx, a) - mass_next
                    hi = tl.where(has_next, pick(taus, idx, a + 1), hi)
                    lo = new_lo
                    base_mass += mass_next
                    base_cnt = tl.where(has_next, base_cnt * 0 - 1, base_cnt)  # known only if hi stayed
                    n_in = n_in * 0 - 1
                    # every key in (lo, hi] weighs at least w(lo + 1): count <= mass / that weight
                    w_min = weight_of(value_of_key(lo + 1, DTYPE, W), m, inf_mode)
                    est = tl.where(w_min > 0, mass_in / tl.maximum(w_min, 1e-38), 2.0**40)
                    n_ub = tl.where(est < 2.0**30, (est * (1.0 + 2.0**-8)).to(tl.int64) + 1, n_ub * 0 - 1)
            else:
                # narrow to the lane that holds the boundary
                if stage == 1:
                    ok = (base_cnt + cnt) >= K
                else:
                    ok = (base_mass + mass) >= target_p
                a = tl.max(tl.where(ok, idx, 0), axis=0)
                has_next = a + 1 < NPM
                taus = round_lanes(lanes_ptr, row, lo, hi, NPM, VALUE_LANES)
                new_lo = pick(taus, idx, a)
                new_hi = tl.where(has_next, pick(taus, idx, a + 1), hi)
                cnt_next = tl.where(has_next, pick(cnt, idx, a + 1), 0)
                mass_next = tl.where(has_next, pick(mass, idx, a + 1), 0.0)
                n_eq = pick(cnt, idx, a) - cnt_next
                lo = new_lo
                hi = new_hi
                base_cnt += cnt_next
                base_mass += mass_next
                n_in = n_eq
                n_ub = n_ub * 0 - 1
                if hi - lo <= 1:  # a single key left: z* = hi
                    if stage == 1:
                        z_k = hi
                        above_k = base_cnt
                        n_k = n_eq
                        nties_k = topk_num_ties(K, above_k, n_eq, ties_all)
                        z = z_k
                        nties = nties_k
                        count = above_k + nties_k
                        n_total = n_k
                        if p_mode == 2:
                            stage = stage * 0 + 3
                            lo = z_k
                            hi = kmax
                            base_cnt = base_cnt * 0
                            base_mass = tl.zeros((), tl.float32)
                            n_in = above_k
                            n_ub = n_ub * 0 - 1
                        else:
                            if p_mode == 1:
                                n_best = tl.where(kmax == z_k, nties_k, nmax)
                                z = kmax
                                nties = tl.where(ties_all != 0, n_best, 1)
                                count = nties
                                n_total = nmax
                            resolved = stage > 0
                    else:
                        w_z = weight_of(value_of_key(hi, DTYPE, W), m, inf_mode)
                        nties = topp_ties(target_p, base_mass, w_z, n_eq, ties_all)
                        z = hi
                        count = base_cnt + nties
                        n_total = n_eq
                        resolved = stage > 0
            if (resolved == 0) & (last != 0):
                # out of rounds: finish over the row itself (exact, one program); the row
                # holds every key above lo, so the range is (lo, kmax] with no base
                no_keys = tl.zeros((CB,), tl.uint32)
                z, nties, count, n_total, _nxt = solve(
                    2, no_keys, no_keys > 0, x_row, stride_xv, V, cand_row, ctr_ptr + slot, tl.cdiv(V, CB),
                    stage, lo, kmax, 0, 0.0, K, p_mode, p, target_p, z_k, nties_k, above_k, n_k,
                    kmax, nmax, ties_all, m, inf_mode, NP, MAX_ROUNDS, SPAN_CAP, CB, DTYPE, W)
                resolved = stage > 0
        if resolved:
            tl.store(si + 0, tl.zeros((), tl.int64))
            finalize(V, row, z, nties, count, n_total, resolved == 0, resolved == 0,
                     thr_key_ptr, thr_bits_ptr, num_ties_ptr, count_ptr, hit_ptr, cut_idx_ptr, W, KEY_NEG_INF)
        else:
            tl.store(si + 0, stage)
            tl.store(si + 1, lo)
            tl.store(si + 2, hi)
            tl.store(si + 3, base_cnt)
            tl.store(si + 4, z_k)
            tl.store(si + 5, nties_k)
            tl.store(si + 6, above_k)
            tl.store(si + 7, n_k)
            tl.store(si + 12, n_in)
            tl.store(si + 13, n_ub)
            tl.store(sf + 0, base_mass)
            tl.store(sf + 1, target_p)
            if VALUE_LANES:  # the next round's lanes
                tl.store(lanes_ptr + row * NPM + tl.arange(0, NPM), lane_taus(lo, hi, NPM, True, DTYPE, W))
        tl.store(ctr_ptr + slot, tl.zeros((), tl.int32))


@triton.jit
def slot_count(part_i_ptr, slot, n_spans, N_SPANS_P2: tl.constexpr):
    """The candidates a row's span pass counted; on a hit all of them are in its slot."""
    sidx = tl.arange(0, N_SPANS_P2)
    return tl.sum(tl.load(part_i_ptr + (slot.to(tl.int64) * n_spans + sidx) * 8, mask=sidx < n_spans, other=0),
                  axis=0)


@triton.jit
def scatters(hit, thr, W: tl.constexpr):
    """Whether a row's masked output is a fill plus a scatter of its kept candidates.

    On a hit every kept entry is in the row's slot, key and token index.  A
    threshold above the key of +0.0 keeps only positive values, whose bits their
    keys give back exactly; a row that may keep a zero (the key of -0.0 is that
    of +0.0) reads its row instead."""
    zero_key: tl.constexpr = 1 << (W - 1)
    return (hit != 0) & (thr > zero_key)


@triton.jit(do_not_specialize=["row0", "n_spans"])
def slot_ties_kernel(cand_ptr, idx_ptr, part_i_ptr, n_spans, ctr_ptr, row0, thr_key_ptr, num_ties_ptr, cut_idx_ptr,
                     hit_ptr, state_ptr, out_ptr, drawn_ptr, SPAN_CAP: tl.constexpr, N_SPANS_P2: tl.constexpr,
                     CHUNK: tl.constexpr, TILE: tl.constexpr, IDX_BITS: tl.constexpr, W: tl.constexpr,
                     DRAW: tl.constexpr = False, DRAW_CHUNK: tl.constexpr = 512, DTYPE: tl.constexpr = 0,
                     KEY_POS_INF: tl.constexpr = 0, PDL: tl.constexpr = 0):
    """grid (rows,): the index of the last kept tie of a row that hit, from its slot alone.

    On a hit the whole tie group is in the slot.  Its token indices are appended
    to the free end of the slot (atomic positions, as in the span pass); when
    there is room and at most TILE of them, the ``num_ties``-th smallest is found
    in a register tile, 4 bits of index a round.  Other rows stay TIE_PENDING for
    ``tie_count_kernel`` and ``tie_pick_kernel``.

    ``DRAW`` (sampling): the program then draws the row's token from its slot
    (:func:`slot_draw`, the draw of :func:`sample_slot_kernel`) when the row hit
    and its last kept tie is known, and sets ``drawn`` (int8) to 1 for it, 0 for
    every other row, which the draw from the row (``sample_kernel``) then takes.
    """
    pdl_start(PDL)
    slot = tl.program_id(0)
    row = (row0 + slot).to(tl.int64)
    hit = tl.load(hit_ptr + row) != 0
    cut_idx = tl.load(cut_idx_ptr + row)
    n = tl.zeros((), tl.int64)
    if DRAW:
        if hit:
            n = slot_count(part_i_ptr, slot, n_spans, N_SPANS_P2)
    if hit & (cut_idx == TIE_PENDING):
        if not DRAW:  # without the draw only these rows read their count, as before the option
            n = slot_count(part_i_ptr, slot, n_spans, N_SPANS_P2)
        rowcap = n_spans * SPAN_CAP
        base = slot.to(tl.int64) * rowcap
        z32 = tl.load(thr_key_ptr + row).to(tl.uint32)
        room = tl.minimum(rowcap - n, TILE)
        ctr = ctr_ptr + slot
        n_eq = tl.zeros((CHUNK,), tl.int32)
        for c0 in range(0, n, CHUNK):
            j = c0 + tl.arange(0, CHUNK)
            ok = j < n
            eq = ok & (slot_keys(tl.load(cand_ptr + base + j, mask=ok, other=0), W) == z32)
            offs = tl.load(idx_ptr + base + j, mask=eq, other=0)
            n_eq += eq.to(tl.int32)
            pos = tl.atomic_add(ctr + tl.zeros((CHUNK,), tl.int32), tl.full((CHUNK,), 1, tl.int32), mask=eq,
                                sem="relaxed")
            tl.store(idx_ptr + base + n + pos, offs, mask=eq & (pos < room))
        t = tl.sum(n_eq, axis=0)
        tl.debug_barrier()  # the appended indices, stored by other threads of this program
        if t <= room:
            e = tl.arange(0, TILE)
            tie_idx = tl.load(idx_ptr + base + n + e, mask=e < t, other=0).to(tl.int64)
            valid = e < t
            nties = tl.load(num_ties_ptr + row).to(tl.int64)
            rank = nties  # 1-based, among the tie group in index order
            lo = tl.zeros((), tl.int64)
            bins = tl.arange(0, 16)
            for r in tl.static_range(IDX_BITS // 4):
                shift = IDX_BITS - 4 * (r + 1)
                d = (tie_idx - lo) >> shift
                inside = valid & (tie_idx >= lo) & (d < 16)
                hits = inside[:, None] & (d[:, None] == bins[None, :])
                cnt = tl.sum(hits.to(tl.int64), axis=0)
                incl = tl.cumsum(cnt, axis=0)
                b = tl.min(tl.where(incl >= rank, bins, 16), axis=0)
                rank -= tl.sum(tl.where(bins < b, cnt, 0), axis=0)
                lo += b.to(tl.int64) << shift
            cut_idx = tl.where(nties > 0, lo, -1)
            tl.store(cut_idx_ptr + row, cut_idx)
        tl.store(ctr, tl.zeros((), tl.int32))
    if DRAW:
        drawn = hit & (cut_idx != TIE_PENDING)
        if drawn:
            # the appended tie indices lie past the row's n candidates: the draw reads [0, n) only
            slot_draw(cand_ptr, idx_ptr, slot.to(tl.int64) * (n_spans * SPAN_CAP), n, row, thr_key_ptr, cut_idx,
                      state_ptr, out_ptr, DRAW_CHUNK, DTYPE, W, KEY_POS_INF)
        tl.store(drawn_ptr + row, drawn.to(tl.int8))


@triton.jit
def kept_of(key, offs, thr, cut_idx):
    """Whether entries (keys, indices) are kept by a row's (threshold key, index of the last kept tie)."""
    keep = (key > thr) | ((key == thr) & (offs <= cut_idx))
    return keep & (key != 0)  # NaN (key 0) is never kept


@triton.jit
def equal_value(thr, DTYPE: tl.constexpr, W: tl.constexpr, KEY_NEG_INF: tl.constexpr, KEY_POS_INF: tl.constexpr):
    """The float32 ``e`` with ``x == e`` exactly when ``key(x) == thr``, for every non-NaN value ``x`` of
    the dtype (upcast): the value of ``thr``, or NaN (nothing equal) where ``thr`` is no value's key
    (NaN keys, and the key below +0.0's that -0.0 would have: the two share +0.0's)."""
    sign: tl.constexpr = 1 << (W - 1)
    real = (thr >= KEY_NEG_INF) & (thr <= KEY_POS_INF) & (thr != sign - 1)
    e = value_of_key(tl.where(real, thr, KEY_NEG_INF).to(tl.uint32), DTYPE, W)
    return tl.where(real, e, float("nan"))


@triton.jit
def kept_values(thr, DTYPE: tl.constexpr, W: tl.constexpr, KEY_NEG_INF: tl.constexpr, KEY_POS_INF: tl.constexpr):
    """A row's threshold key as float32 scalars ``(c_gt, c_eq)``: ``x >= c_gt`` exactly when ``key(x) > thr``
    and ``x == c_eq`` exactly when ``key(x) == thr``, for every value ``x`` (NaN fails both, as its key 0
    is never kept).  ``thr`` below the key of -inf keeps every non-NaN value, -inf too
    (:func:`above_value` alone would leave -inf out)."""
    c_gt = above_value(thr, DTYPE, W, KEY_NEG_INF, KEY_POS_INF)
    c_gt = tl.where(thr < KEY_NEG_INF, float("-inf"), c_gt)
    return c_gt, equal_value(thr, DTYPE, W, KEY_NEG_INF, KEY_POS_INF)


@triton.jit
def kept_block(raw, offs, blk, thr, cut_idx_at, BLOCK: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr,
               VALUE_CMP: tl.constexpr, KEY_NEG_INF: tl.constexpr, KEY_POS_INF: tl.constexpr):
    """:func:`kept_of` of a mask program's entries (block ``blk`` of a row, indices ``offs``; the row's cut
    index at ``cut_idx_at``): on keys, or (``VALUE_CMP``) on float32 values, with the tie rule ``offs <=
    cut_idx`` as a 32-bit compare of the lanes against the cut's place in the block (clamped to
    ``[-1, BLOCK]``)."""
    if VALUE_CMP:
        c_gt, c_eq = kept_values(thr, DTYPE, W, KEY_NEG_INF, KEY_POS_INF)
        last = tl.minimum(tl.maximum(tl.load(cut_idx_at) - blk * BLOCK, -1), BLOCK).to(tl.int32)
        x = upcast(raw, DTYPE)
        keep = (x >= c_gt) | ((x == c_eq) & (tl.arange(0, BLOCK) <= last))
    else:
        key = keys_of(raw, DTYPE, W).to(tl.int64)
        keep = kept_of(key, offs, thr, tl.load(cut_idx_at))
    return keep


@triton.jit
def slot_entries(cand_ptr, idx_ptr, base, c0, n, thr, cut_idx, CHUNK: tl.constexpr, W: tl.constexpr):
    """Slot entries ``[c0, c0 + CHUNK)`` of a row (``n`` in all, from ``base``): keys (0 past
    ``n``), token indices (int64) and whether each is kept."""
    j = c0 + tl.arange(0, CHUNK)
    ok = j < n
    key = tl.where(ok, slot_keys(tl.load(cand_ptr + base + j, mask=ok, other=0), W), 0).to(tl.int64)
    offs = tl.load(idx_ptr + base + j, mask=ok, other=0).to(tl.int64)
    return key, offs, kept_of(key, offs, thr, cut_idx) & ok


@triton.jit(do_not_specialize=["V", "row0"])
def mask_kernel(x_ptr, stride_xb, stride_xv, out_ptr, stride_ob, stride_ov, V, row0, thr_key_ptr, cut_idx_ptr,
                hit_ptr, mask_value, BLOCK: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr,
                SCATTER: tl.constexpr = False, REVERSE: tl.constexpr = False, PDL: tl.constexpr = 0,
                VALUE_CMP: tl.constexpr = False, KEY_NEG_INF: tl.constexpr = 0, KEY_POS_INF: tl.constexpr = 0):
    """grid (rows, blocks): mask_value wherever an entry is not kept; kept entries keep their bits.

    ``out`` may be ``x`` itself (in place): each entry is read before it is
    written, by the same program.  Kept entries are written back too, since whole
    vectors store faster than per-entry predicated stores (16-bit rows most of all).

    ``SCATTER``: a row that :func:`scatters` is only filled (no read);
    :func:`scatter_kernel` then writes its kept entries back from the slot.

    ``REVERSE``: programs take the grid's rows and blocks from the end, so that the
    first ones dispatched read what the previous pass over the wave read last (still
    in L2); each program writes what it would write in grid order.

    ``VALUE_CMP``: entries are compared as float32 values against the row's two
    scalars from :func:`kept_values` (no key an entry, no 64-bit compare); the same
    set as :func:`kept_of` on keys.
    """
    pdl_start(PDL)
    row, blk = grid_cell(REVERSE)
    row = row0 + row.to(tl.int64)
    blk = blk.to(tl.int64)
    offs = blk * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    inb = offs < V
    thr = tl.load(thr_key_ptr + row)
    # 1.0 * v is v for every v, -0.0 too: 0.0 + v made a mask value of -0.0 +0.0 (and -0.0 + v on the GPU:
    # Triton 3.6 compiles the constant -0.0 as +0.0, session 36 call 6); this compiles to the value itself
    fill = (tl.full((BLOCK,), 1.0, tl.float32) * mask_value).to(out_ptr.dtype.element_ty)
    fill_only = False
    if SCATTER:
        fill_only = scatters(tl.load(hit_ptr + row), thr, W)
    if fill_only:
        tl.store(out_ptr + row * stride_ob + offs * stride_ov, fill, mask=inb)
    elif (blk + 1) * BLOCK <= V:
        # a whole block (every program but a row's last): no mask, so that the loads and stores of a
        # contiguous row are vectors (V is not specialized: a mask of unknown constancy keeps them scalar)
        raw = tl.load(x_ptr + row * stride_xb + offs * stride_xv)
        keep = kept_block(raw, offs, blk, thr, cut_idx_ptr + row, BLOCK, DTYPE, W, VALUE_CMP, KEY_NEG_INF, KEY_POS_INF)
        tl.store(out_ptr + row * stride_ob + offs * stride_ov, tl.where(keep, raw, fill))
    else:
        raw = tl.load(x_ptr + row * stride_xb + offs * stride_xv, mask=inb, other=0.0)
        keep = kept_block(raw, offs, blk, thr, cut_idx_ptr + row, BLOCK, DTYPE, W, VALUE_CMP, KEY_NEG_INF, KEY_POS_INF)
        tl.store(out_ptr + row * stride_ob + offs * stride_ov, tl.where(keep, raw, fill), mask=inb)


@triton.jit(do_not_specialize=["row0", "n_spans"])
def scatter_kernel(cand_ptr, idx_ptr, part_i_ptr, n_spans, row0, thr_key_ptr, cut_idx_ptr, hit_ptr, out_ptr,
                   stride_ob, stride_ov, SPAN_CAP: tl.constexpr, N_SPANS_P2: tl.constexpr, CHUNK: tl.constexpr,
                   DTYPE: tl.constexpr, W: tl.constexpr, PDL: tl.constexpr = 0):
    """grid (rows,): after the fill of :func:`mask_kernel`, the kept entries of a row that
    :func:`scatters`, written back from its slot (bits from keys)."""
    pdl_start(PDL)
    slot = tl.program_id(0)
    row = (row0 + slot).to(tl.int64)
    thr = tl.load(thr_key_ptr + row)
    if scatters(tl.load(hit_ptr + row), thr, W):
        n = slot_count(part_i_ptr, slot, n_spans, N_SPANS_P2)
        base = slot.to(tl.int64) * (n_spans * SPAN_CAP)
        cut_idx = tl.load(cut_idx_ptr + row)
        for c0 in range(0, n, CHUNK):
            key, offs, keep = slot_entries(cand_ptr, idx_ptr, base, c0, n, thr, cut_idx, CHUNK, W)
            value = value_of_key(key, DTYPE, W).to(out_ptr.dtype.element_ty)
            tl.store(out_ptr + row * stride_ob + offs * stride_ov, value, mask=keep)


# --- sampling (qrita.sample): a Gumbel-max race over the kept entries --------------------------

stream_bits = _portable(core_rng.stream_bits)
mix64 = _portable(core_rng.mix64)

UNIFORM_SHIFT = tl.constexpr(64 - core_rng.UNIFORM_BITS)
UNIFORM_SCALE = tl.constexpr(2.0**-core_rng.UNIFORM_BITS)


@triton.jit
def mix_states_kernel(z_ptr, n, BLOCK: tl.constexpr):
    """``z = mix64(z)`` in place on int64 ``z[:n]`` (the stream states of raw seeds, one launch)."""
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inb = offs < n
    z = tl.load(z_ptr + offs, mask=inb, other=0).to(tl.uint64, bitcast=True)
    tl.store(z_ptr + offs, mix64(z).to(tl.int64, bitcast=True), mask=inb)


@triton.jit
def gumbel_of(state, offs):
    """float64 Gumbel noise of token indices ``offs`` in the stream ``state`` (``qrita.core.rng``)."""
    bits = stream_bits(state, offs.to(tl.uint64))
    u = ((bits >> UNIFORM_SHIFT) + 1).to(tl.float64) * UNIFORM_SCALE
    return -tl.log(-tl.log(u))


# The float32 pre-race: within FILTER_TOL of the block's best approximate key is
# where the exact winner can be (the approximate noise is within ~1e-5 of the
# exact one; see gumbel_f32_of), and keys stay exact to 2**-32 in float64
# below FILTER_MAX_ABS.
FILTER_TOL = tl.constexpr(2.0**-8)
FILTER_MAX_ABS = tl.constexpr(2.0**20)
SERIES_BELOW = tl.constexpr(2.0**-7)


@triton.jit
def gumbel_f32_of(bits):
    """float32 approximation of the Gumbel noise of ``bits``, absolute error far below FILTER_TOL / 2.

    ``E = -log(u)`` loses every digit near ``u = 1`` in float32, where the noise is
    largest; there ``E`` comes from ``y = 1 - u`` (exact as an integer) by its
    series ``y + y^2/2 + y^3/3 + y^4/4`` (truncation ``< y^5/4``, relative
    ``2^-30``).  Elsewhere ``E >= 2^-7`` and ``-log(u)`` in float32 is within
    ``2^-15`` relative even with an approximate ``log``.  Then ``g = -log(E)``.
    """
    m = bits >> UNIFORM_SHIFT
    y = ((2**53 - 1) - m).to(tl.float32) * UNIFORM_SCALE  # 1 - u
    u = (m + 1).to(tl.float32) * UNIFORM_SCALE
    series = y * (1.0 + y * (0.5 + y * (0.3333333333333333 + y * 0.25)))
    e = tl.where(y < SERIES_BELOW, series, -tl.log(u))
    return -tl.log(e)


@triton.jit(do_not_specialize=["V", "row0", "n_parts"])
def sample_kernel(x_ptr, stride_xb, stride_xv, V, row0, thr_key_ptr, cut_idx_ptr, state_ptr, part_v_ptr, part_i_ptr,
                  n_parts, done_ptr, ticket_ptr, count_ptr, out_ptr, PART: tl.constexpr, BLOCK: tl.constexpr,
                  DTYPE: tl.constexpr, W: tl.constexpr, KEY_POS_INF: tl.constexpr, FOLD: tl.constexpr = False,
                  NP2: tl.constexpr = 2):
    """grid (rows, parts): the part's Gumbel-max winner among kept finite-class and +inf entries.

    Per part: (best x + g, its index) and (best g among kept +inf, its index), the
    lowest index on equal keys, as ``argmax`` does.  Blocks that keep nothing skip
    the noise (the common case for top-k).  The part's first index stands for a
    part with no finite winner, so that a row whose kept keys are all ``-inf``
    answers index 0, like the array path.  Rows with ``done`` set were drawn from
    their candidate slot (``sample_slot_kernel``) and are skipped.

    ``FOLD``: the row's last part program (:func:`last_of_row`, on the row's
    ``ticket``) picks its token (:func:`pick_token`, the body of
    :func:`sample_pick_kernel`), so that the draw from the row is one launch.
    """
    r = tl.program_id(0).to(tl.int64)
    part = tl.program_id(1).to(tl.int64)
    row = row0 + r
    if tl.load(done_ptr + row) == 0:
        sample_part(x_ptr, stride_xb, stride_xv, V, row, r, part, thr_key_ptr, cut_idx_ptr, state_ptr, part_v_ptr,
                    part_i_ptr, n_parts, PART, BLOCK, DTYPE, W, KEY_POS_INF)
        if FOLD:
            if last_of_row(ticket_ptr + r, n_parts):
                pick_token(part_v_ptr, part_i_ptr, count_ptr, out_ptr, row0, r, n_parts, NP2)


@triton.jit
def sample_part(x_ptr, stride_xb, stride_xv, V, row, r, part, thr_key_ptr, cut_idx_ptr, state_ptr, part_v_ptr,
                part_i_ptr, n_parts, PART: tl.constexpr, BLOCK: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr,
                KEY_POS_INF: tl.constexpr):
    """The body of :func:`sample_kernel` for one part of one row."""
    thr = tl.load(thr_key_ptr + row)
    cut_idx = tl.load(cut_idx_ptr + row)
    state = tl.load(state_ptr + row).to(tl.uint64, bitcast=True)
    start = part * PART
    neg_inf = float("-inf")
    best_v = tl.full((), neg_inf, tl.float64)
    best_i = start
    inf_v = tl.full((), neg_inf, tl.float64)
    inf_i = start
    base = x_ptr + row * stride_xb
    for b0 in range(0, PART, BLOCK):
        offs = start + b0 + tl.arange(0, BLOCK).to(tl.int64)
        inb = offs < V
        raw = tl.load(base + offs * stride_xv, mask=inb, other=0.0)
        key = keys_of(raw, DTYPE, W).to(tl.int64)
        keep = kept_of(key, offs, thr, cut_idx) & inb
        if tl.max(keep.to(tl.int32), axis=0) > 0:
            xf = upcast(raw, DTYPE)
            x64 = xf.to(tl.float64)
            # float32 pre-race: when one kept entry is the only one near the best
            # approximate key, it is the block's winner; the exact key is then
            # computed for it alone (the float64 logs are the cost of this pass)
            approx = tl.where(keep, x64 + gumbel_f32_of(stream_bits(state, offs.to(tl.uint64))).to(tl.float64),
                              neg_inf)
            near = keep & (approx >= tl.max(approx, axis=0) - FILTER_TOL)
            wild = tl.max(tl.where(keep, tl.abs(xf), 0.0), axis=0) >= FILTER_MAX_ABS  # also +-inf
            if (tl.sum(near.to(tl.int32), axis=0) == 1) & (wild == 0):
                w = tl.min(tl.where(near, offs, V), axis=0)
                vw = upcast(tl.load(base + w * stride_xv), DTYPE).to(tl.float64) + gumbel_of(state, w)
                if vw > best_v:
                    best_v = vw
                    best_i = w
            else:
                g = gumbel_of(state, offs)
                v = tl.where(keep, x64 + g, neg_inf)
                m = tl.max(v, axis=0)
                if m > best_v:
                    best_v = m
                    best_i = tl.min(tl.where(v == m, offs, V), axis=0)
                vi = tl.where(keep & (key == KEY_POS_INF), g, neg_inf)
                mi = tl.max(vi, axis=0)
                if mi > inf_v:
                    inf_v = mi
                    inf_i = tl.min(tl.where(vi == mi, offs, V), axis=0)
    slot = (r * n_parts + part) * 2
    tl.store(part_v_ptr + slot, best_v)
    tl.store(part_i_ptr + slot, best_i)
    tl.store(part_v_ptr + slot + 1, inf_v)
    tl.store(part_i_ptr + slot + 1, inf_i)


@triton.jit(do_not_specialize=["row0", "n_parts"])
def sample_pick_kernel(part_v_ptr, part_i_ptr, count_ptr, out_ptr, row0, n_parts, done_ptr, NP2: tl.constexpr):
    """grid (rows,): the row's token from its parts (in part order); -1 where it keeps nothing.

    Kept ``+inf`` entries take all of the mass: when there are any, the race is
    among them alone, on the noise.  Rows with ``done`` set are left alone.
    """
    r = tl.program_id(0).to(tl.int64)
    if tl.load(done_ptr + row0 + r) == 0:
        pick_token(part_v_ptr, part_i_ptr, count_ptr, out_ptr, row0, r, n_parts, NP2)


@triton.jit
def pick_token(part_v_ptr, part_i_ptr, count_ptr, out_ptr, row0, r, n_parts, NP2: tl.constexpr):
    """The body of :func:`sample_pick_kernel` for one row."""
    j = tl.arange(0, NP2)
    ok = j < n_parts
    slot = (r * n_parts + j) * 2
    big = tl.full((NP2,), 2**62, tl.int64)
    fv = tl.load(part_v_ptr + slot, mask=ok, other=float("-inf"))
    fi = tl.load(part_i_ptr + slot, mask=ok, other=2**62)
    iv = tl.load(part_v_ptr + slot + 1, mask=ok, other=float("-inf"))
    ii = tl.load(part_i_ptr + slot + 1, mask=ok, other=2**62)
    fm = tl.max(fv, axis=0)
    f_idx = tl.min(tl.where(ok & (fv == fm), fi, big), axis=0)
    im = tl.max(iv, axis=0)
    i_idx = tl.min(tl.where(ok & (iv == im), ii, big), axis=0)
    token = tl.where(im > float("-inf"), i_idx, f_idx)
    count = tl.load(count_ptr + row0 + r)
    tl.store(out_ptr + row0 + r, tl.where(count > 0, token, -1))


@triton.jit(do_not_specialize=["row0", "n_spans"])
def sample_slot_kernel(cand_ptr, idx_ptr, part_i_ptr, n_spans, row0, thr_key_ptr, cut_idx_ptr, hit_ptr, state_ptr,
                       out_ptr, SPAN_CAP: tl.constexpr, N_SPANS_P2: tl.constexpr, CHUNK: tl.constexpr,
                       DTYPE: tl.constexpr, W: tl.constexpr, KEY_POS_INF: tl.constexpr, PDL: tl.constexpr = 0):
    """grid (rows,): the Gumbel-max token of a row that hit, from its candidate slot alone.

    On a hit every kept entry is a candidate (the threshold is above the cut and
    the slot did not overflow), and the slot holds each candidate's key and token
    index: the race runs over the slot, with the noise of ``qrita.core.rng`` at
    the token index, and gives the token of :func:`sample_kernel` (float64 keys
    ``x + g``, the lowest index on equal keys, kept ``+inf`` entries racing on the
    noise alone).  Rows that missed are left to ``sample_kernel``.
    """
    pdl_start(PDL)
    slot = tl.program_id(0)
    row = (row0 + slot).to(tl.int64)
    if tl.load(hit_ptr + row) != 0:
        n = slot_count(part_i_ptr, slot, n_spans, N_SPANS_P2)
        slot_draw(cand_ptr, idx_ptr, slot.to(tl.int64) * (n_spans * SPAN_CAP), n, row, thr_key_ptr,
                  tl.load(cut_idx_ptr + row), state_ptr, out_ptr, CHUNK, DTYPE, W, KEY_POS_INF)


@triton.jit
def slot_draw(cand_ptr, idx_ptr, base, n, row, thr_key_ptr, cut_idx, state_ptr, out_ptr, CHUNK: tl.constexpr,
              DTYPE: tl.constexpr, W: tl.constexpr, KEY_POS_INF: tl.constexpr):
    """The token of a row that hit, from the ``n`` candidates of its slot at ``base`` (see
    :func:`sample_slot_kernel`), stored at ``out[row]``."""
    thr = tl.load(thr_key_ptr + row)
    state = tl.load(state_ptr + row).to(tl.uint64, bitcast=True)
    neg_inf = float("-inf")
    big = tl.full((), 2**62, tl.int64)
    best_v = tl.full((), neg_inf, tl.float64)
    best_i = big
    inf_v = tl.full((), neg_inf, tl.float64)
    inf_i = big
    for c0 in range(0, n, CHUNK):
        key, offs, keep = slot_entries(cand_ptr, idx_ptr, base, c0, n, thr, cut_idx, CHUNK, W)
        g = gumbel_of(state, offs)
        v = tl.where(keep, value_of_key(key, DTYPE, W).to(tl.float64) + g, neg_inf)
        m = tl.max(v, axis=0)
        i_m = tl.min(tl.where(keep & (v == m), offs, big), axis=0)
        if (m > best_v) | ((m == best_v) & (i_m < best_i)):
            best_v = m
            best_i = i_m
        vi = tl.where(keep & (key == KEY_POS_INF), g, neg_inf)
        mi = tl.max(vi, axis=0)
        i_mi = tl.min(tl.where(keep & (key == KEY_POS_INF) & (vi == mi), offs, big), axis=0)
        if (mi > inf_v) | ((mi == inf_v) & (i_mi < inf_i)):
            inf_v = mi
            inf_i = i_mi
    tl.store(out_ptr + row, tl.where(inf_i < big, inf_i, best_i))
