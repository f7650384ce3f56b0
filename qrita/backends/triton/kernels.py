"""Triton kernels of the Qrita method.

Three launches per wave of rows (see ``docs/triton.md``):

``span_kernel``    grid (rows, spans). A row is cut into fixed spans of SPAN
                   entries. Each program reads one span once: row max, online
                   softmax denominator, keepable/+inf counts, smallest and
                   largest key with their multiplicities, and the candidates
                   ``x > t`` gathered, in index order, into the span's slot of
                   the candidate buffer.
``finish_kernel``  grid (rows,). Combines the span partials in span order (so
                   one span per program or many gives the same bits), decides
                   hit or miss, runs the pivot search of ``qrita.core.search``
                   over the candidates (the whole row on a miss), applies the
                   tie rules and writes (threshold, num_ties, count, hit) and
                   the index of the last kept tie.
``mask_kernel``    grid (rows, blocks). Writes mask_value wherever an entry is
                   not kept, in place or into ``out``.

The state-machine steps are the portable functions of ``qrita.core.search``
compiled by ``triton.jit``; key constants and LUTs come from ``qrita.core``.
All addressing is int64.
"""

from __future__ import annotations

import types

import triton
import triton.language as tl

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
def keys_of(raw, DTYPE: tl.constexpr, W: tl.constexpr):
    """Order-preserving keys (uint32, zero-extended for 16-bit) of raw values; NaN -> 0."""
    if DTYPE == F32:
        bits = raw.to(tl.uint32, bitcast=True)
    elif DTYPE == F16:
        bits = raw.to(tl.uint16, bitcast=True).to(tl.uint32)
    else:
        bits = raw.to(tl.uint16, bitcast=True).to(tl.uint32)
    sign: tl.constexpr = 1 << (W - 1)
    mask: tl.constexpr = (1 << W) - 1
    negative = (bits >> (W - 1)) != 0
    key = tl.where(negative, (~bits) & mask, bits | sign)
    key = tl.where(key == sign - 1, sign, key)  # -0.0 -> +0.0
    if DTYPE == F32:
        exp_mask: tl.constexpr = 0x7F800000
    elif DTYPE == F16:
        exp_mask: tl.constexpr = 0x7C00
    else:
        exp_mask: tl.constexpr = 0x7F80
    is_nan = (bits & (mask ^ sign)) > exp_mask
    return tl.where(is_nan, 0, key)


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


@triton.jit
def weight_of(value, m, INF_MODE):
    """Top-p weight of a float32 value: exp(x - m), or [x == +inf] when the row holds +inf."""
    w = tl.exp(value - m)
    return tl.where(INF_MODE, tl.where(value == float("inf"), 1.0, 0.0), w)


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
def row_cut_key(x_row, stride_xv, V, k_active, k, p_mode, p, topk_lut_ptr, topp_lut_ptr,
                DTYPE: tl.constexpr, W: tl.constexpr, SAMPLE: tl.constexpr, LUT_STEPS: tl.constexpr,
                TOPK_LUT_N: tl.constexpr, TOPP_LUT_N: tl.constexpr):
    """Key of the sigma-truncation cut (0 = no usable cut: every keepable entry is a candidate)."""
    offs = tl.arange(0, SAMPLE)
    inb = offs < V
    raw = tl.load(x_row + offs.to(tl.int64) * stride_xv, mask=inb, other=0.0)
    xf = raw.to(tl.float32)
    finite = inb & (xf == xf) & (tl.abs(xf) < float("inf"))
    n = tl.sum(finite.to(tl.float32), axis=0)
    mu = tl.sum(tl.where(finite, xf, 0.0), axis=0) / tl.maximum(n, 1.0)
    d = tl.where(finite, xf - mu, 0.0)
    sigma = tl.sqrt(tl.sum(d * d, axis=0) / tl.maximum(n, 1.0))
    kk = tl.minimum(tl.maximum(k, 1), V).to(tl.float32)
    ik = tl.floor(tl.log2(tl.cast(V, tl.float32) / kk) * LUT_STEPS).to(tl.int32)
    ik = tl.minimum(tl.maximum(ik, 0), TOPK_LUT_N - 1)
    ip = tl.ceil(p * (TOPP_LUT_N - 1)).to(tl.int32)
    ip = tl.minimum(tl.maximum(ip, 0), TOPP_LUT_N - 1)
    delta_k = tl.load(topk_lut_ptr + ik)
    delta_p = tl.load(topp_lut_ptr + ip) + sigma
    delta = tl.where(k_active, delta_k, delta_p)
    t = mu + delta * sigma
    usable = (n >= 2.0) & (k_active | (p_mode == 2)) & (t == t) & (tl.abs(t) < float("inf"))
    # round the cut to the data's dtype: any representable value is a valid cut
    if DTYPE == F32:
        t_raw = t
    elif DTYPE == F16:
        t_raw = tl.minimum(tl.maximum(t, -65504.0), 65504.0).to(tl.float16)
    else:
        t_raw = ((t.to(tl.uint32, bitcast=True) >> 16).to(tl.uint16)).to(tl.bfloat16, bitcast=True)
    key = keys_of(t_raw, DTYPE, W)
    return tl.where(usable, key, 0).to(tl.int64)


@triton.jit(do_not_specialize=["V", "row0", "k_scalar", "p_scalar", "k_mode", "p_mode", "n_spans"])
def span_kernel(
    x_ptr, stride_xb, stride_xv, V, row0,
    k_ptr, k_scalar, p_ptr, p_scalar, k_mode, p_mode,
    topk_lut_ptr, topp_lut_ptr,
    cand_ptr, part_i_ptr, part_f_ptr, n_spans,
    SPAN: tl.constexpr, SPAN_CAP: tl.constexpr, BLOCK: tl.constexpr,
    DTYPE: tl.constexpr, W: tl.constexpr, KEY_NEG_INF: tl.constexpr, KEY_POS_INF: tl.constexpr,
    SAMPLE: tl.constexpr, LUT_STEPS: tl.constexpr, TOPK_LUT_N: tl.constexpr, TOPP_LUT_N: tl.constexpr,
):
    """Partials of one span of one row; candidates go to ``cand[slot, span, :SPAN_CAP]``."""
    slot = tl.program_id(0)
    span = tl.program_id(1)
    row = (row0 + slot).to(tl.int64)
    x_row = x_ptr + row * stride_xb
    k_active, k, row_p_mode, p = row_params(row, k_ptr, k_scalar, p_ptr, p_scalar, V, k_mode, p_mode)
    cut = row_cut_key(x_row, stride_xv, V, k_active, k, row_p_mode, p, topk_lut_ptr, topp_lut_ptr,
                      DTYPE, W, SAMPLE, LUT_STEPS, TOPK_LUT_N, TOPP_LUT_N)
    cand_base = cand_ptr + (slot.to(tl.int64) * n_spans + span) * SPAN_CAP

    m = tl.full((), float("-inf"), tl.float32)  # max over finite entries
    z = tl.zeros((), tl.float32)  # sum exp(x - m), finite entries
    cmass = tl.zeros((), tl.float32)  # the same over finite candidates
    n_cand = tl.zeros((), tl.int32)
    n_keep = tl.zeros((), tl.int32)
    n_inf = tl.zeros((), tl.int32)
    kmin = tl.full((), 0xFFFFFFFF, tl.int64)
    nmin = tl.zeros((), tl.int32)
    kmax = tl.zeros((), tl.int64)
    nmax = tl.zeros((), tl.int32)
    start = tl.cast(span, tl.int64) * SPAN
    for i in range(0, SPAN, BLOCK):
        offs = start + i + tl.arange(0, BLOCK).to(tl.int64)
        inb = offs < V
        raw = tl.load(x_row + offs * stride_xv, mask=inb, other=0.0)
        key = tl.where(inb, keys_of(raw, DTYPE, W), 0).to(tl.int64)
        xf = raw.to(tl.float32)
        keep = key > KEY_NEG_INF
        pinf = key == KEY_POS_INF
        finite = keep & (key != KEY_POS_INF)
        cand = keep & (key > cut)  # cut == 0 (no usable cut): every keepable entry
        # online softmax denominator over finite entries (max rescaling)
        m_new = tl.maximum(m, tl.max(tl.where(finite, xf, float("-inf")), axis=0))
        scale = tl.where(m_new == float("-inf"), 1.0, tl.exp(m - m_new))
        e = tl.where(finite, tl.exp(xf - m_new), 0.0)
        z = z * scale + tl.sum(e, axis=0)
        cmass = cmass * scale + tl.sum(tl.where(cand, e, 0.0), axis=0)
        m = m_new
        n_keep += tl.sum(keep.to(tl.int32), axis=0)
        n_inf += tl.sum(pinf.to(tl.int32), axis=0)
        bmin = tl.min(tl.where(keep, key, 0xFFFFFFFF), axis=0)
        bmin_n = tl.sum((keep & (key == bmin)).to(tl.int32), axis=0)
        nmin = tl.where(bmin < kmin, bmin_n, tl.where(bmin == kmin, nmin + bmin_n, nmin))
        kmin = tl.minimum(kmin, bmin)
        bmax = tl.max(tl.where(keep, key, 0), axis=0)
        bmax_n = tl.sum((keep & (key == bmax)).to(tl.int32), axis=0)
        nmax = tl.where(bmax > kmax, bmax_n, tl.where(bmax == kmax, nmax + bmax_n, nmax))
        kmax = tl.maximum(kmax, bmax)
        # gather candidates in index order (prefix sum, no atomics: deterministic)
        c = cand.to(tl.int32)
        pos = n_cand + tl.cumsum(c, axis=0) - 1
        tl.store(cand_base + pos, key.to(tl.uint32).to(tl.int32, bitcast=True), mask=cand & (pos < SPAN_CAP))
        n_cand += tl.sum(c, axis=0)
    pi = part_i_ptr + (slot.to(tl.int64) * n_spans + span) * 8
    tl.store(pi + 0, n_cand.to(tl.int64))
    tl.store(pi + 1, n_keep.to(tl.int64))
    tl.store(pi + 2, n_inf.to(tl.int64))
    tl.store(pi + 3, kmin)
    tl.store(pi + 4, nmin.to(tl.int64))
    tl.store(pi + 5, kmax)
    tl.store(pi + 6, nmax.to(tl.int64))
    tl.store(pi + 7, cut)
    pf = part_f_ptr + (slot.to(tl.int64) * n_spans + span) * 4
    tl.store(pf + 0, m)
    tl.store(pf + 1, z)
    tl.store(pf + 2, cmass)


@triton.jit
def load_source(x_row, stride_xv, V, cand_row, part_i_row, c, FROM_BUF, lo,
                SPAN_CAP: tl.constexpr, CB: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr):
    """Chunk ``c`` of a search source in memory: keys (int64) and validity (dead keys <= lo are invalid).

    From the candidate buffer, chunk c covers span c // (SPAN_CAP // CB);
    from the row, chunk c covers entries [c * CB, (c + 1) * CB).
    """
    if FROM_BUF:
        per_span = SPAN_CAP // CB
        span = c // per_span
        j = (c % per_span) * CB + tl.arange(0, CB)
        n = tl.load(part_i_row + span * 8).to(tl.int32)
        valid = j < n
        key = tl.load(cand_row + tl.cast(span, tl.int64) * SPAN_CAP + j, mask=valid, other=0)
        key = key.to(tl.uint32, bitcast=True).to(tl.int64)
    else:
        offs = tl.cast(c, tl.int64) * CB + tl.arange(0, CB).to(tl.int64)
        valid = offs < V
        raw = tl.load(x_row + offs * stride_xv, mask=valid, other=0.0)
        key = tl.where(valid, keys_of(raw, DTYPE, W), 0).to(tl.int64)
    valid = valid & (key > lo)
    return key, valid


@triton.jit
def lane_stats(key, valid, w, taus, COUNT: tl.constexpr):
    """Per pivot lane: mass and count above tau, zmn, n(zmn), zmx (largest key <= tau)."""
    k2 = key[:, None]
    gt = valid[:, None] & (k2 > taus[None, :])
    cnt = tl.sum(gt.to(tl.int64), axis=0)
    if COUNT:
        mass = cnt.to(tl.float32)
    else:
        mass = tl.sum(tl.where(gt, w[:, None], 0.0), axis=0)
    zmn = tl.min(tl.where(gt, k2, 0xFFFFFFFFF), axis=0)
    n = tl.sum((gt & (k2 == zmn[None, :])).to(tl.int64), axis=0)
    zmx = tl.max(tl.where(valid[:, None] & (gt == 0), k2, 0), axis=0)
    return mass, cnt, zmn, n, zmx


@triton.jit
def round_stats(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, cand_row, part_i_row, n_chunks, lo, taus,
                m, inf_mode, COUNT: tl.constexpr, NP: tl.constexpr, SPAN_CAP: tl.constexpr, CB: tl.constexpr,
                DTYPE: tl.constexpr, W: tl.constexpr):
    """Lane stats of every pivot over the source: 0 = registers, 1 = candidate buffer, 2 = row.

    Chunks are merged in chunk order, so sums are deterministic.
    """
    if src == 0:
        mass, cnt, zmn, nmn, zmx = lane_stats(keys_reg, valid_reg & (keys_reg > lo), w_reg, taus, COUNT)
    else:
        mass = tl.zeros((NP,), tl.float32)
        cnt = tl.zeros((NP,), tl.int64)
        zmn = tl.full((NP,), 0xFFFFFFFFF, tl.int64)
        nmn = tl.zeros((NP,), tl.int64)
        zmx = tl.zeros((NP,), tl.int64)
        for c in range(n_chunks):
            key, valid = load_source(x_row, stride_xv, V, cand_row, part_i_row, c, src == 1, lo, SPAN_CAP, CB,
                                     DTYPE, W)
            if COUNT:
                w = tl.zeros((CB,), tl.float32)
            else:
                w = weight_of(value_of_key(key, DTYPE, W), m, inf_mode)
            b_mass, b_cnt, b_zmn, b_n, b_zmx = lane_stats(key, valid, w, taus, COUNT)
            mass += b_mass
            cnt += b_cnt
            nmn = tl.where(b_zmn < zmn, b_n, tl.where(b_zmn == zmn, nmn + b_n, nmn))
            zmn = tl.minimum(zmn, b_zmn)
            zmx = tl.maximum(zmx, b_zmx)
    return mass, cnt, zmn, nmn, zmx


@triton.jit
def pick(vec, idx, j):
    """vec[j] for a small vector (Triton has no scalar indexing)."""
    return tl.sum(tl.where(idx == j, vec, 0), axis=0)


@triton.jit
def search(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, cand_row, part_i_row, n_chunks, lo, hi, target,
           m, inf_mode, COUNT: tl.constexpr, NP: tl.constexpr, MAX_ROUNDS: tl.constexpr, SPAN_CAP: tl.constexpr,
           CB: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr):
    """The pivot search of qrita.core.search: returns (z_star, mass above, count above, n_eq).

    NP lanes evaluate pivots lo + (hi - lo) * j // NP, j = 0..NP-1 (lane 0 is
    ``lo`` itself; NP = 4 is the paper's three interior pivots).  Visiting the
    pivots in increasing order ends at the largest one with C >= T, so only
    that one is classified (the argument is in the numpy backend), then lo/hi
    are narrowed and snapped to present keys.
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
        taus = tl.where(forced, hi - 1, pivot(lo, hi, idx.to(tl.int64), NP - 1))
        mass, cnt, zmn, nmn, zmx = round_stats(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, cand_row,
                                               part_i_row, n_chunks, lo, taus, m, inf_mode, COUNT, NP, SPAN_CAP,
                                               CB, DTYPE, W)
        if COUNT:
            ok = cnt >= target.to(tl.int64)
        else:
            ok = mass >= target
        a = tl.max(tl.where(ok, idx, 0), axis=0)
        zmn_a = pick(zmn, idx, a)
        n_a = pick(nmn, idx, a)
        cnt_a = pick(cnt, idx, a)
        if COUNT:
            state = classify_pivot(cnt_a, n_a, target.to(tl.int64), forced)
            mass_a = cnt_a.to(tl.float32)
            w_a = n_a.to(tl.float32)
        else:
            mass_a = pick(mass, idx, a)
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
            tau_next = pick(taus, idx, a + 1)
            zmx_next = pick(zmx, idx, a + 1)
            new_hi = tl.where(has_next, snap_hi(narrow_hi(hi, 0, tau_next), new_lo, zmx_next), hi)
            lo = new_lo
            hi = new_hi
            lo = tl.where(lo >= hi, hi - 1, lo)
        rounds += 1
    return z_star, above, above_n, n_eq


@triton.jit
def stats_above(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, cand_row, part_i_row, n_chunks, lo, tau, m,
                inf_mode, SPAN_CAP: tl.constexpr, CB: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr):
    """(mass above tau, count above tau) over the source."""
    taus = tl.full((2,), 0, tl.int64) + tau
    mass, cnt, _zmn, _n, _zmx = round_stats(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, cand_row,
                                            part_i_row, n_chunks, lo, taus, m, inf_mode, False, 2, SPAN_CAP, CB,
                                            DTYPE, W)
    idx = tl.arange(0, 2)
    return pick(mass, idx, 0), pick(cnt, idx, 0)


@triton.jit
def topp_ties(target, mass_above, weight, n_eq, ties_all):
    """qrita.core.search.topp_num_ties with Triton's ceil."""
    need = tl.where(weight > 0, (target - mass_above) / weight, n_eq.to(tl.float32))
    n = tl.ceil(need).to(tl.int64)
    n = tl.where(need == need, n, n_eq)
    n = tl.minimum(tl.maximum(n, 1), n_eq)
    return tl.where(ties_all != 0, n_eq, n)


@triton.jit
def gather_registers(cand_row, n_cand_s, n_cand, N_SPANS_P2: tl.constexpr, SPAN_CAP: tl.constexpr,
                     REG_CAP: tl.constexpr):
    """The candidates of all spans, in span then index order, as one register block [REG_CAP]."""
    i = tl.arange(0, REG_CAP).to(tl.int64)
    ends = tl.cumsum(n_cand_s, axis=0)  # [N_SPANS_P2]
    starts = ends - n_cand_s
    span = tl.sum((i[:, None] >= ends[None, :]).to(tl.int64), axis=1)
    sidx = tl.arange(0, N_SPANS_P2).to(tl.int64)
    start = tl.sum(tl.where(sidx[None, :] == span[:, None], starts[None, :], 0), axis=1)
    valid = i < n_cand
    key = tl.load(cand_row + span * SPAN_CAP + (i - start), mask=valid, other=0)
    return key.to(tl.uint32, bitcast=True).to(tl.int64), valid


@triton.jit(do_not_specialize=["V", "row0", "k_scalar", "p_scalar", "k_mode", "p_mode_arg", "ties_all",
                               "truncation", "n_spans"])
def finish_kernel(
    x_ptr, stride_xb, stride_xv, V, row0,
    k_ptr, k_scalar, p_ptr, p_scalar, k_mode, p_mode_arg, ties_all, truncation,
    cand_ptr, part_i_ptr, part_f_ptr, n_spans,
    thr_key_ptr, thr_bits_ptr, num_ties_ptr, count_ptr, hit_ptr, cut_idx_ptr,
    N_SPANS_P2: tl.constexpr, SPAN_CAP: tl.constexpr, CB: tl.constexpr,
    REG_CAP: tl.constexpr, NP: tl.constexpr,
    MAX_ROUNDS: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr, KEY_NEG_INF: tl.constexpr,
):
    """One row: combine span partials, search, tie rules, outputs.

    The request's modes are runtime arguments, so one compiled kernel per
    (dtype, vocabulary geometry) serves every request.
    """
    slot = tl.program_id(0)
    row = (row0 + slot).to(tl.int64)
    x_row = x_ptr + row * stride_xb
    k_active, k, p_mode, p = row_params(row, k_ptr, k_scalar, p_ptr, p_scalar, V, k_mode, p_mode_arg)
    part_i_row = part_i_ptr + slot.to(tl.int64) * n_spans * 8
    part_f_row = part_f_ptr + slot.to(tl.int64) * n_spans * 4
    cand_row = cand_ptr + slot.to(tl.int64) * n_spans * SPAN_CAP

    # --- combine span partials in span order ---------------------------------------
    sidx = tl.arange(0, N_SPANS_P2)
    sval = sidx < n_spans
    pi = part_i_row + sidx * 8
    n_cand_s = tl.load(pi + 0, mask=sval, other=0)
    n_cand = tl.sum(n_cand_s, axis=0)
    overflow = tl.max(n_cand_s, axis=0) > SPAN_CAP
    n_keep = tl.sum(tl.load(pi + 1, mask=sval, other=0), axis=0)
    n_inf = tl.sum(tl.load(pi + 2, mask=sval, other=0), axis=0)
    kmin_s = tl.load(pi + 3, mask=sval, other=0xFFFFFFFF)
    kmin = tl.min(kmin_s, axis=0)
    nmin = tl.sum(tl.where(kmin_s == kmin, tl.load(pi + 4, mask=sval, other=0), 0), axis=0)
    kmax_s = tl.load(pi + 5, mask=sval, other=0)
    kmax = tl.max(kmax_s, axis=0)
    nmax = tl.sum(tl.where(kmax_s == kmax, tl.load(pi + 6, mask=sval, other=0), 0), axis=0)
    cut = tl.load(part_i_row + 7)
    pf = part_f_row + sidx * 4
    m_s = tl.load(pf + 0, mask=sval, other=float("-inf"))
    m = tl.max(m_s, axis=0)
    scale = tl.where(m_s == float("-inf"), 0.0, tl.exp(m_s - m))
    z_all = tl.sum(tl.load(pf + 1, mask=sval, other=0.0) * scale, axis=0)
    cmass = tl.sum(tl.load(pf + 2, mask=sval, other=0.0) * scale, axis=0)
    inf_mode = n_inf > 0
    z_all = tl.where(inf_mode, n_inf.to(tl.float32), z_all)
    cmass = tl.where(inf_mode, n_inf.to(tl.float32), cmass)

    # --- hit or miss, and where the search reads from ------------------------------------
    K = tl.minimum(k, n_keep)
    usable = (truncation != 0) & (cut > 0) & (overflow == 0)
    hit = tl.where(k_active, usable & (n_cand >= K), (p_mode == 2) & usable & (cmass >= p * z_all))
    lo0 = tl.where(hit, cut, KEY_NEG_INF).to(tl.int64)
    src = tl.where(hit, tl.where(n_cand <= REG_CAP, 0, 1), 2)
    n_chunks = tl.where(src == 1, n_spans * (SPAN_CAP // CB), tl.cdiv(V, CB))
    keys_reg, valid_reg = gather_registers(cand_row, n_cand_s, tl.where(src == 0, n_cand, 0), N_SPANS_P2,
                                           SPAN_CAP, REG_CAP)
    w_reg = weight_of(value_of_key(keys_reg, DTYPE, W), m, inf_mode)

    # --- top-k stage -----------------------------------------------------------------
    z_k = kmin
    nties_k = nmin
    above_k = n_keep - nmin
    n_total = nmin  # entries of the row equal to the final threshold
    if True:
        if k_active & (n_keep > 0):
            zk, _mass, above_n, n_k = search(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, cand_row,
                                             part_i_row, n_chunks, lo0, kmax, K.to(tl.float32), m, inf_mode, True,
                                             NP, MAX_ROUNDS, SPAN_CAP, CB, DTYPE, W)
            z_k = zk
            above_k = above_n
            n_total = n_k
            nties_k = topk_num_ties(K, above_n, n_k, ties_all)
    z = z_k
    nties = nties_k
    count = above_k + nties_k

    # --- top-p stage -------------------------------------------------------------------
    if p_mode_arg != 0:
        if (p_mode == 1) & (n_keep > 0):  # p <= 0: the best token (or its tie group)
            n_best = tl.where(kmax == z_k, nties_k, nmax)
            z = kmax
            nties = tl.where(ties_all != 0, n_best, 1)
            count = nties
            n_total = nmax
        if (p_mode == 2) & (n_keep > 0):
            lo_p = lo0
            target = p * z_all
            boundary_at_zk = False
            if k_active:
                mass_above_zk, _c = stats_above(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V, cand_row,
                                                part_i_row, n_chunks, lo0, z_k, m, inf_mode, SPAN_CAP, CB, DTYPE, W)
                w_zk = weight_of(value_of_key(z_k, DTYPE, W), m, inf_mode)
                target = p * (mass_above_zk + nties_k.to(tl.float32) * w_zk)
                lo_p = z_k
                if mass_above_zk < target:  # the boundary is the top-k boundary group itself
                    boundary_at_zk = True
                    nties = topp_ties(target, mass_above_zk, w_zk, nties_k, ties_all)
                    z = z_k
                    count = above_k + nties
            if boundary_at_zk == 0:
                zp, mass_above, cnt_above, n_p = search(src, keys_reg, valid_reg, w_reg, x_row, stride_xv, V,
                                                        cand_row, part_i_row, n_chunks, lo_p, kmax, target, m,
                                                        inf_mode, False, NP, MAX_ROUNDS, SPAN_CAP, CB, DTYPE, W)
                w_z = weight_of(value_of_key(zp, DTYPE, W), m, inf_mode)
                nties = topp_ties(target, mass_above, w_z, n_p, ties_all)
                z = zp
                count = cnt_above + nties
                n_total = n_p
    empty = n_keep == 0
    z = tl.where(empty, KEY_NEG_INF, z)
    nties = tl.where(empty, 0, nties)
    count = tl.where(empty, 0, count)

    # --- index of the last kept entry equal to z: only when a tie group is cut ---------
    cut_idx = tl.where(empty, -1, tl.cast(V, tl.int64))
    if (nties < n_total) & (empty == 0):
        seen = tl.zeros((), tl.int64)
        c = 0
        found = False
        while (found == 0) & (c < tl.cdiv(V, CB)):
            offs = tl.cast(c, tl.int64) * CB + tl.arange(0, CB).to(tl.int64)
            inb = offs < V
            raw = tl.load(x_row + offs * stride_xv, mask=inb, other=0.0)
            key = tl.where(inb, keys_of(raw, DTYPE, W), 0).to(tl.int64)
            eq = (key == z).to(tl.int64)
            run = seen + tl.cumsum(eq, axis=0)
            pos = tl.max(tl.where((eq != 0) & (run == nties), offs, -1), axis=0)
            if pos >= 0:
                cut_idx = pos
                found = True
            seen += tl.sum(eq, axis=0)
            c += 1

    tl.store(thr_key_ptr + row, z)
    tl.store(thr_bits_ptr + row, bits_of_key(z, W).to(tl.int32))
    tl.store(num_ties_ptr + row, nties.to(tl.int32))
    tl.store(count_ptr + row, count.to(tl.int32))
    tl.store(hit_ptr + row, hit.to(tl.int8))
    tl.store(cut_idx_ptr + row, cut_idx)


@triton.jit
def mask_kernel(x_ptr, stride_xb, stride_xv, out_ptr, stride_ob, stride_ov, V, thr_key_ptr, cut_idx_ptr, mask_value,
                INPLACE: tl.constexpr, BLOCK: tl.constexpr, DTYPE: tl.constexpr, W: tl.constexpr):
    """mask_value wherever an entry is not kept; kept entries keep their bits."""
    row = tl.program_id(0).to(tl.int64)
    blk = tl.program_id(1).to(tl.int64)
    offs = blk * BLOCK + tl.arange(0, BLOCK).to(tl.int64)
    inb = offs < V
    raw = tl.load(x_ptr + row * stride_xb + offs * stride_xv, mask=inb, other=0.0)
    key = keys_of(raw, DTYPE, W).to(tl.int64)
    thr = tl.load(thr_key_ptr + row)
    cut_idx = tl.load(cut_idx_ptr + row)
    keep = (key > thr) | ((key == thr) & (offs <= cut_idx))
    keep = keep & (key != 0)
    fill = tl.full((BLOCK,), 0.0, tl.float32) + mask_value
    fill = fill.to(raw.dtype)
    if INPLACE:
        tl.store(x_ptr + row * stride_xb + offs * stride_xv, fill, mask=inb & (keep == 0))
    else:
        tl.store(out_ptr + row * stride_ob + offs * stride_ov, tl.where(keep, raw, fill), mask=inb)
