"""The Qrita method on the CPU, in NumPy: the executable form of the spec.

Phases (``shared/ALGORITHM.md``):

1. sigma-truncation, vectorised over the batch: sample stats, the cut ``t``
   from the LUT, one pass for the candidates ``x > t`` (and, for top-p-only
   rows, the row max and softmax denominator);
2. per row, the pivot search of :mod:`qrita.core.search` on the candidates'
   keys (the whole row on a miss), keeping only the entries of the live range
   ``(lo, hi]`` between rounds;
3. duplicate handling with the core tie rules.

Only ``(threshold, num_ties, count)`` comes out; masks and index lists are
derived from it.
"""

from __future__ import annotations

import numpy as np

from ...core import search as sm
from ...core.keys import KEY_CONSTANTS, bits_from_keys, bits_of_values, float_from_bits, keys_from_bits
from ...core.lut import TOPK_DELTA, TOPP_DELTA, topk_lut_indices, topp_lut_indices
from ...core.spec import NUM_PIVOTS, SAMPLE_SIZE, TIES_ALL


def _row_params(k, p, B: int, V: int):
    """Per-row (k_active, K, p_mode, P): p_mode 0 = off, 1 = top-1 (p <= 0), 2 = top-p."""
    ks = np.zeros(B, np.int64) if k is None else np.broadcast_to(np.asarray(k, np.int64), (B,))
    k_active = (ks > 0) & (ks < V)
    ps = np.ones(B, np.float64) if p is None else np.broadcast_to(np.asarray(p, np.float64), (B,))
    ps = np.where(np.isnan(ps), 1.0, ps)
    p_mode = np.where(ps >= 1.0, 0, np.where(ps <= 0.0, 1, 2))
    return k_active, ks, p_mode, ps


def _cuts(vals: np.ndarray, V: int, k_active, ks, p_mode, ps, dtype: str) -> np.ndarray:
    """Per-row cut ``t`` rounded to the data's dtype (float array ``[B]``; -inf = no cut)."""
    sample = vals[:, : min(V, SAMPLE_SIZE)].astype(np.float64)
    finite = np.isfinite(sample)
    n = finite.sum(axis=1)
    s = np.where(finite, sample, 0.0)
    mu = s.sum(axis=1) / np.maximum(n, 1)
    var = (np.where(finite, sample - mu[:, None], 0.0) ** 2).sum(axis=1) / np.maximum(n, 1)
    sigma = np.sqrt(var)
    delta_k = TOPK_DELTA[topk_lut_indices(np.where(k_active, ks, 1), V)].astype(np.float64)
    delta_p = TOPP_DELTA[topp_lut_indices(ps)].astype(np.float64) + sigma
    delta = np.where(k_active, delta_k, delta_p)
    usable = (n >= 2) & (k_active | (p_mode == 2))
    with np.errstate(over="ignore", invalid="ignore"):
        t = np.where(usable, mu + delta * sigma, -np.inf)
    return _round_to_dtype(t, dtype)


def _round_to_dtype(t: np.ndarray, dtype: str) -> np.ndarray:
    """Cuts as exactly representable values of ``dtype`` (as float32/float64)."""
    with np.errstate(over="ignore", invalid="ignore"):
        if dtype == "float64":
            return t
        if dtype == "float16":
            return t.astype(np.float16).astype(np.float32)
        t32 = t.astype(np.float32)
        if dtype == "bfloat16":  # truncate the mantissa: still a valid cut
            return float_from_bits(bits_of_values(t32, "bfloat16"), "bfloat16")
        return t32


def _weights(vals: np.ndarray, m: float) -> np.ndarray:
    """Top-p weights ``exp(x - m)`` (in the values' float type); with ``m = +inf``
    the ``+inf`` entries share the mass."""
    if m == np.inf:
        return (vals == np.inf).astype(vals.dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        return np.exp(vals - vals.dtype.type(m))


# The pivots a round evaluates, by the number of live keys: on the CPU a round
# costs a few array passes plus fixed call overhead whatever P is, so large live
# sets take many pivots (one bincount resolves up to 12 key bits instead of 2)
# and small ones the paper's 3.  ``options={"num_pivots": P}`` fixes P for every
# round (ablations, tests).
ROUND_PIVOTS = ((8, 4095), (0, NUM_PIVOTS))


def _round_pivots(n_live: int, key_bytes: int) -> int:
    for threshold, pivots in ROUND_PIVOTS:
        if n_live > threshold:
            return min(pivots, 255) if key_bytes == 8 else pivots
    return NUM_PIVOTS


def _buckets(keys: np.ndarray, lo: int, hi: int, num_pivots: int) -> np.ndarray:
    """``bucket[i] = #{j : tau_j < keys[i]}`` for the pivots ``tau_j`` of ``(lo, hi)``.

    For keys of at most 32 bits the evenly spaced pivots of
    :func:`qrita.core.search.pivot` give it in closed form,
    ``clip(ceil((key - lo) * (P + 1) / (hi - lo)) - 1, 0, P)``, at a cost that
    does not grow with ``P``.  It is evaluated in float64, which is exact here:
    every operand is an integer below 2**53, and a quotient that is not an
    integer lies at least ``1 / (hi - lo) >= 2**-32`` from one, far more than
    the rounding error of one division.  64-bit keys use a binary search.
    """
    if keys.dtype.itemsize == 8 or hi - lo <= 1:
        taus = [sm.pivot(lo, hi, j, num_pivots) for j in range(1, num_pivots + 1)] if hi - lo > 1 else [hi - 1]
        return np.searchsorted(np.asarray(taus, dtype=keys.dtype), keys, side="left").astype(np.intp)
    d = keys.astype(np.float64)
    d -= lo
    d *= num_pivots + 1
    d += hi - lo - 1
    d /= hi - lo
    np.floor(d, out=d)
    d -= 1
    np.clip(d, 0, num_pivots, out=d)
    return d.astype(np.intp)


def _search(keys: np.ndarray, weights, lo: int, hi: int, target, key_bits: int, num_pivots: int):
    """The pivot search over ``keys`` (``weights=None`` counts entries).

    Returns ``(z_star, above, n_eq)`` with ``above = C(z_star)``.

    One round buckets the live keys ``(lo, hi]`` by the pivots and takes every
    pivot's ``C`` from one ``bincount``.  Visiting the pivots in increasing
    order (the core loop) ends at the largest pivot with ``C >= T``: earlier
    ABOVE pivots only set ``lo`` before it overwrites it, and an earlier STOP
    pivot would make that one a STOP with the same ``zmn``.  So only that
    pivot needs ``zmn`` and ``n``.  Entries leaving above ``hi`` are
    accumulated in ``base``; entries at or below ``lo`` are dropped.
    """
    k_live, w_live = keys, weights
    base = 0 if weights is None else 0.0
    for _ in range(sm.max_rounds(key_bits, num_pivots if 0 < num_pivots < NUM_PIVOTS else NUM_PIVOTS)):
        forced = hi - lo <= 1
        p_round = 1 if forced else (num_pivots or _round_pivots(k_live.size, k_live.dtype.itemsize))
        bucket = _buckets(k_live, lo, hi, p_round)
        counts = np.bincount(bucket, minlength=p_round + 1) if weights is None else None
        mass = counts if weights is None else np.bincount(bucket, weights=w_live, minlength=p_round + 1)
        suffix = np.cumsum(mass[::-1])[::-1] + base  # suffix[j] = C(tau_j), j >= 1
        above_target = np.flatnonzero(suffix[1:] >= target)
        a = int(above_target[-1]) + 1 if above_target.size else 0
        if forced:
            a = 1

        # the live range of the next round is bucket a: gather it alone
        in_a = np.flatnonzero(bucket == a)
        k_next = k_live[in_a]
        w_next = None if w_live is None else w_live[in_a]
        if a == 0:  # BELOW at the first pivot
            new_lo, new_hi = lo, hi - 1 if forced else sm.pivot(lo, hi, 1, p_round)
        else:
            c = suffix[a].item()
            # zmn is the smallest key of the first non-empty bucket >= a (bucket a
            # is usually non-empty; count the others only when it is not)
            if k_next.size:
                first = a
            else:
                counts = np.bincount(bucket, minlength=p_round + 1) if counts is None else counts
                first = a + int(np.flatnonzero(counts[a:])[0]) if counts[a:].any() else -1
            if first == a:
                k_up, w_up = k_next, w_next
            elif first > a:
                sel = np.flatnonzero(bucket == first)
                k_up, w_up = k_live[sel], None if w_live is None else w_live[sel]
            else:
                k_up = w_up = None
            if k_up is None:
                zmn, n, w = hi + 1, 0, 0
            else:
                zmn = int(k_up.min())
                eq = k_up == zmn
                n = int(np.count_nonzero(eq))
                w = n if weights is None else n * float(w_up[eq][0])
            state = sm.classify_pivot(c, w, target, forced)
            if state == sm.STOP:
                return zmn, c - w, n
            new_lo = sm.narrow_lo(lo, state, zmn)
            new_hi = sm.pivot(lo, hi, a + 1, p_round) if a < p_round else hi
        base = base + mass[a + 1 :].sum().item()
        keep = k_next > new_lo
        k_live = k_next[keep]
        w_live = None if w_next is None else w_next[keep]
        lo, hi = new_lo, new_hi
        if lo >= hi:
            lo = hi - 1
    raise AssertionError("pivot search did not converge")  # pragma: no cover


def select_rows(bits: np.ndarray, vals: np.ndarray, dtype: str, k, p, ties: int, options: dict):
    """Selection of every row.

    bits: ``[B, V]`` raw unsigned bits; vals: ``[B, V]`` exact float values
    (float32, or float64 for float64 input).  Returns numpy
    ``(threshold_bits [B], num_ties [B] int32, count [B] int32, hit [B] bool)``.

    A top-k row whose cut holds at least ``k`` candidates searches only the
    gathered candidates.  Every other row searches its whole row with the
    "dead at or below ``lo``" convention of :func:`_search` (``lo`` = the cut's
    key on a top-p hit, the key of ``-inf`` otherwise), which spares the
    gather of a large candidate set.
    """
    B, V = vals.shape
    kc = KEY_CONSTANTS[dtype]
    num_pivots = int(options.get("num_pivots") or 0)  # 0: adaptive
    truncation = bool(options.get("truncation", True))
    ties_all = 1 if ties == TIES_ALL else 0
    k_active, ks, p_mode, ps = _row_params(k, p, B, V)

    thr_bits = np.full(B, kc.neg_inf_bits, dtype=kc.uint)
    num_ties = np.zeros(B, np.int32)
    count = np.zeros(B, np.int32)
    hit = np.zeros(B, bool)
    if B == 0:
        return thr_bits, num_ties, count, hit

    cuts = _cuts(vals, V, k_active, ks, p_mode, ps, dtype) if truncation else np.full(B, -np.inf)
    cut_keys = keys_from_bits(bits_of_values(cuts, dtype), dtype)
    with np.errstate(invalid="ignore"):
        cand_mask = vals > cuts[:, None].astype(vals.dtype)
    has_nan = np.isnan(vals).any(axis=1) if (p_mode == 2).any() else np.zeros(B, bool)

    for b in range(B):
        row_vals, row_bits = vals[b], bits[b]
        K = int(ks[b]) if k_active[b] else 0
        weights = z_total = None
        lo = kc.key_neg_inf
        if K:
            cand = np.flatnonzero(cand_mask[b]) if np.isfinite(cuts[b]) else None
            if cand is not None and cand.size >= K:  # truncation hit: gather the candidates
                lo, hit[b] = int(cut_keys[b]), True
                row_vals, row_bits = row_vals[cand], row_bits[cand]
        elif p_mode[b] == 2:
            # top-p alone is renormalised over the whole row: weigh it once
            weights = _weights(row_vals, float(np.fmax.reduce(row_vals))).astype(np.float64)
            if has_nan[b]:
                weights[np.isnan(row_vals)] = 0.0
            z_total = float(weights.sum())
            if np.isfinite(cuts[b]) and float(np.dot(weights, cand_mask[b])) >= ps[b] * z_total:
                lo, hit[b] = int(cut_keys[b]), True
                cand = np.flatnonzero(cand_mask[b])
                if cand.size * 8 < V:  # few candidates: search them alone
                    row_vals, row_bits, weights = row_vals[cand], row_bits[cand], weights[cand]
        keys = keys_from_bits(row_bits, dtype)
        hi = int(keys.max())
        if hi <= kc.key_neg_inf:
            continue  # nothing keepable: threshold -inf, count 0
        z, nties, cnt = _select_one(
            keys, row_vals, weights, lo, hi, K, int(p_mode[b]), float(ps[b]), z_total, ties_all, kc.width, num_pivots
        )
        thr_bits[b] = bits_from_keys(np.asarray([z], dtype=kc.uint), dtype)[0]
        num_ties[b] = nties
        count[b] = cnt
    return thr_bits, num_ties, count, hit


def _select_one(keys, vals, weights, lo, hi, K, p_mode, p, z_total, ties_all, key_bits, num_pivots):
    """``(z_key, num_ties, count)`` of one row.

    keys/vals: the row or its gathered candidates; only ``keys > lo`` are live
    (``lo`` is the cut's key on a hit, the key of ``-inf`` otherwise) and they
    hold the answer.  ``hi`` is the largest key.  K: top-k target (0 = none).
    p_mode: 0 no top-p, 1 top-1 (``p <= 0``), 2 top-p with ``p``.  For top-p
    without top-k, ``weights`` are the float64 weights of ``keys`` and
    ``z_total`` the softmax denominator of the whole row; otherwise the top-k
    survivors define both.
    """
    if K == 0 and p_mode == 2:  # top-p alone: straight to the mass search
        target = p * z_total
        z, mass_above, n = _search(keys, weights, lo, hi, target, key_bits, num_pivots)
        nt = sm.topp_num_ties(target, mass_above, float(weights[keys == z][0]), n, ties_all)
        return z, nt, int(np.count_nonzero(keys > z)) + nt
    live = keys > lo
    if K > 0:
        K = min(K, int(np.count_nonzero(live)))
        z_k, above_k, n_k = _search(keys, None, lo, hi, K, key_bits, num_pivots)
        nties_k = sm.topk_num_ties(K, above_k, n_k, ties_all)
    else:  # every live entry survives the top-k stage
        z_k = int(keys[live].min())
        n_k = int(np.count_nonzero(keys == z_k))
        above_k, nties_k = int(np.count_nonzero(live)) - n_k, n_k
    if p_mode == 0:
        return z_k, nties_k, above_k + nties_k
    if p_mode == 1:  # p <= 0: the single best token (or the whole top tie group)
        n_max = nties_k if hi == z_k else int(np.count_nonzero(keys == hi))
        kept = n_max if ties_all else 1
        return hi, kept, kept
    if K > 0:
        # top-p works on the top-k survivors only: continue on them alone
        survivors = keys >= z_k
        keys, vals = keys[survivors], vals[survivors]
        w = _weights(vals.astype(np.float64), float(vals[keys == hi][0]))
        mass_above_zk = float(w[keys > z_k].sum())
        w_zk = float(w[keys == z_k][0])
        target = p * (mass_above_zk + nties_k * w_zk)
        if mass_above_zk < target:  # the boundary is the top-k boundary group itself
            nt = sm.topp_num_ties(target, mass_above_zk, w_zk, nties_k, ties_all)
            return z_k, nt, above_k + nt
        lo = z_k
    else:
        w, target = weights, p * z_total
    z, mass_above, n = _search(keys, w, lo, hi, target, key_bits, num_pivots)
    nt = sm.topp_num_ties(target, mass_above, float(w[keys == z][0]), n, ties_all)
    return z, nt, int(np.count_nonzero(keys > z)) + nt
