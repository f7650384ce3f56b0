"""Judge a backend's selection against the oracle (SPEC.md "Top-p precision").

A backend answers with ``(threshold, num_ties, count)`` per row.  That triple
describes a set: every keepable entry ``> threshold`` plus the ``num_ties``
lowest-index entries ``== threshold`` (see :func:`mask_from_selection`).  The
checker accepts a row when

* the triple equals the oracle's exactly (thresholds compared by value, so
  ``-0.0 == +0.0``), or
* the row is a top-p row with ``0 < p < 1`` (the ambiguity window applies) and
  the backend's set is a prefix of the ranking of the top-k survivors, of a
  length ``j`` with ``S_{j-1} < p + eps`` and ``S_j >= p - eps``.  Under
  ``ties="all"`` the set must also be tie-group closed and the window must hold
  at some ``j`` inside its last tie group.

Top-k-only rows, rows without top-p and ``p <= 0`` rows must match exactly.
Failures raise :class:`OracleMismatch` naming every failing row, the field, the
expected and the received values.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .oracle import (
    TIES_CHOICES,
    TOPP_EPS,
    OracleResult,
    TopPRow,
    as_numpy,
    as_values,
    oracle_select,
)

__all__ = ["OracleMismatch", "check_mask", "check_selection", "mask_from_selection"]

# Rows listed in full in a failure message; the rest are only counted.
_MAX_REPORTED_ROWS = 20


class OracleMismatch(AssertionError):
    """A selection disagrees with the oracle.

    Attributes:
        rows: the failing row indices, ascending.
        details: one human-readable line per failing row (``"row 3: count ..."``).
    """

    def __init__(self, rows: list[int], details: list[str]):
        self.rows = rows
        self.details = details
        shown = details[:_MAX_REPORTED_ROWS]
        more = len(details) - len(shown)
        lines = [
            f"selection differs from the oracle in {len(rows)} row(s) {rows[:_MAX_REPORTED_ROWS]}:"
        ]
        lines += [f"  {line}" for line in shown]
        if more:
            lines.append(f"  ... and {more} more row(s)")
        super().__init__("\n".join(lines))


def _as_row_vector(name: str, x: Any, B: int, dtype) -> np.ndarray:
    arr = np.asarray(as_numpy(x)).reshape(-1)
    if arr.shape != (B,):
        raise AssertionError(f"{name} must have shape [B]=[{B}], got {arr.shape}")
    return arr.astype(dtype)


def mask_from_selection(values: Any, threshold: Any, num_ties: Any) -> np.ndarray:
    """The kept set a selection describes, as a bool mask.

    Args:
        values: ``[B, V]`` (or ``[V]``) logits, any float dtype.
        threshold: ``[B]`` smallest kept value per row (``-inf``: row keeps nothing).
        num_ties: ``[B]`` how many entries equal to ``threshold`` are kept.

    Returns:
        bool ``[B, V]``: ``x > threshold`` plus the first ``num_ties`` entries
        ``== threshold`` in index order.  NaN and ``-inf`` are never kept; a
        ``-inf`` or NaN threshold gives an empty row.
    """
    x = as_values(values)
    B, V = x.shape
    thr = _as_row_vector("threshold", threshold, B, np.float64)
    ties = _as_row_vector("num_ties", num_ties, B, np.int64)
    mask = np.zeros((B, V), dtype=bool)
    for b in range(B):
        if np.isnan(thr[b]) or thr[b] == -np.inf:
            continue  # -inf is never kept, so this threshold means "nothing kept"
        row = x[b]
        mask[b] = row > thr[b]  # NaN compares False
        equal = np.flatnonzero(row == thr[b])
        mask[b, equal[: max(int(ties[b]), 0)]] = True
    return mask


def _window_error(
    row: np.ndarray,
    n_survivors: int,
    topp: TopPRow,
    all_ties: bool,
    thr: float,
    nt: int,
    c: int,
    eps: float,
) -> str | None:
    """Why a windowed top-p row's ``(thr, nt, c)`` is rejected, or None if it is accepted.

    row: float64 ``[V]`` (signed zeros normalised); n_survivors: how many top-k
    survivors the row has (they are the first ones of the ranking).
    """
    lo, hi = topp.window(eps)
    window = (
        f"oracle j*={topp.j_star}, window j in [{lo}, {hi}] (p={topp.p!r}, eps={eps:g})"
    )
    if np.isnan(thr):
        return f"threshold is NaN; {window}"
    if thr == -np.inf:
        return f"keeps nothing (threshold -inf, count {c}); {window}"
    keepable = ~np.isnan(row) & (row != -np.inf)
    n_greater = int(np.count_nonzero(keepable & (row > thr)))
    n_equal = int(np.count_nonzero(keepable & (row == thr)))
    if n_equal == 0:
        return f"threshold {thr!r} is not a keepable value of the row; {window}"
    if all_ties:
        if nt != n_equal:
            return f"num_ties expected {n_equal} (whole tie group of {thr!r} under ties='all'), got {nt}"
        first_j, last_j = n_greater + 1, n_greater + n_equal
    else:
        if not 1 <= nt <= n_equal:
            return f"num_ties {nt} out of range [1, {n_equal}] for threshold {thr!r}"
        first_j = last_j = n_greater + nt
    if c != last_j:
        return f"count expected {last_j} (implied by threshold {thr!r}, num_ties {nt}), got {c}"
    if last_j > n_survivors:
        return f"count {c} keeps entries beyond the {n_survivors} top-k survivors; {window}"
    if not any(topp.accepts(j, eps) for j in range(first_j, last_j + 1)):
        S = np.concatenate(([0.0], topp.S))
        return (
            f"count {c} is outside the top-p ambiguity window: {window}; "
            f"S[{first_j - 1}]={S[first_j - 1]!r}, S[{last_j}]={S[last_j]!r}"
        )
    return None


def check_selection(
    values: Any,
    k: Any,
    p: Any,
    ties: str,
    threshold: Any,
    num_ties: Any,
    count: Any,
    *,
    eps: float = TOPP_EPS,
    expected: OracleResult | None = None,
) -> None:
    """Raise :class:`OracleMismatch` unless a backend's selection is acceptable.

    Args:
        values: ``[B, V]`` (or ``[V]``) logits the backend saw (any float dtype).
        k, p, ties: the request, as for :func:`~qrita.reference.oracle.oracle_select`.
        threshold: ``[B]`` the backend's thresholds (any float dtype; compared by value).
        num_ties: ``[B]`` integer.
        count: ``[B]`` integer.
        eps: the top-p ambiguity tolerance (SPEC.md: 1e-5).
        expected: the oracle's answer if already computed (skips recomputing it).
    """
    if ties not in TIES_CHOICES:
        raise ValueError(f"ties must be one of {TIES_CHOICES}, got {ties!r}")
    x = as_values(values)
    B = x.shape[0]
    oracle = expected if expected is not None else oracle_select(x, k, p, ties)
    thr = _as_row_vector("threshold", threshold, B, np.float64)
    nts = _as_row_vector("num_ties", num_ties, B, np.int64)
    counts = _as_row_vector("count", count, B, np.int64)

    rows: list[int] = []
    details: list[str] = []
    for b in range(B):
        exp_thr, exp_nt, exp_c = (
            float(oracle.threshold[b]),
            int(oracle.num_ties[b]),
            int(oracle.count[b]),
        )
        got_thr, got_nt, got_c = float(thr[b]), int(nts[b]), int(counts[b])
        # by value: -0.0 == +0.0, and a NaN threshold never matches
        if got_thr == exp_thr and got_nt == exp_nt and got_c == exp_c:
            continue
        topp = oracle.topp[b]
        if topp is not None and topp.windowed:
            error = _window_error(
                x[b],
                oracle.survivors[b].shape[0],
                topp,
                ties == "all",
                got_thr,
                got_nt,
                got_c,
                eps,
            )
            if error is None:
                continue
            kind = "top-p"
        else:
            kind = "top-k only" if topp is None else "top-p with p <= 0 or no survivors"
            diffs = [
                f"{name} expected {exp!r}, got {got!r}"
                for name, exp, got in (
                    ("threshold", exp_thr, got_thr),
                    ("num_ties", exp_nt, got_nt),
                    ("count", exp_c, got_c),
                )
                if exp != got
            ]
            error = "; ".join(diffs) + " (must match exactly)"
        rows.append(b)
        details.append(
            f"row {b} ({kind}, k={int(oracle.k[b])}, p={float(oracle.p[b])!r}): {error}"
        )
    if rows:
        raise OracleMismatch(rows, details)


def check_mask(
    values: Any,
    k: Any,
    p: Any,
    ties: str,
    mask: Any,
    *,
    eps: float = TOPP_EPS,
    expected: OracleResult | None = None,
) -> None:
    """Raise :class:`OracleMismatch` unless a ``[B, V]`` bool mask is an acceptable kept set.

    The mask must be describable by a selection (:func:`mask_from_selection` of
    its own ``(threshold, num_ties)``: a prefix of the ranking, no NaN/``-inf``
    kept); then its ``(threshold, num_ties, count)`` go through
    :func:`check_selection`.
    """
    x = as_values(values)
    B, V = x.shape
    m = np.asarray(as_numpy(mask))
    if m.ndim == 1:
        m = m[None, :]
    if m.shape != (B, V):
        raise AssertionError(f"mask must have shape [B, V]=[{B}, {V}], got {m.shape}")
    m = m.astype(bool)

    thr = np.full(B, -np.inf)
    nts = np.zeros(B, dtype=np.int64)
    counts = m.sum(axis=1).astype(np.int64)
    for b in range(B):
        kept = x[b, m[b]]
        if kept.size:
            thr[b] = np.min(kept)  # NaN kept -> NaN threshold, caught below
            nts[b] = np.count_nonzero(kept == thr[b])

    described = mask_from_selection(x, thr, nts)
    rows: list[int] = []
    details: list[str] = []
    for b in range(B):
        if not np.array_equal(described[b], m[b]):
            bad = np.flatnonzero(described[b] != m[b])
            rows.append(b)
            details.append(
                f"row {b}: mask is not a ranking prefix (or keeps NaN/-inf); "
                f"first differing index {int(bad[0])} (value {x[b, bad[0]]!r}, kept={bool(m[b, bad[0]])})"
            )
    if rows:
        raise OracleMismatch(rows, details)
    check_selection(x, k, p, ties, thr, nts, counts, eps=eps, expected=expected)
