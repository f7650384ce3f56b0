"""Sort-based ground truth for Top-k / Top-p selection (``shared/SPEC.md``).

This module is the executable reading of SPEC.md that every backend is judged
against.  It is deliberately plain: one stable ``argsort`` per row, then
prefix arithmetic in float64.  It imports nothing from the rest of qrita (it
judges the algorithm, so it must not share code with it), only NumPy.

Per row, with ``x`` the float64 values of the row:

1. **Keepable entries.**  NaN and ``-inf`` are never kept and are left out of
   the ranking entirely.  ``-0.0`` is replaced by ``+0.0`` first, so the two
   zeros are one value (and a zero threshold comes out as ``+0.0``).
2. **Ranking.**  Value descending, then index ascending (a stable descending
   sort).  ``+inf`` ranks above every finite value.
3. **Top-k** (active when ``0 < k < V``).  ``ties="lowest_index"`` keeps the
   first ``min(k, n)`` entries of the ranking (``n`` keepable entries);
   ``ties="all"`` keeps every keepable entry ``>=`` the k-th ranked value.
   The kept entries are the *survivors*; with top-k off, every keepable entry
   survives.  Either way the survivors are a prefix of the ranking.
4. **Top-p** (active when ``p < 1`` and ``p`` is not NaN), on the survivors.
   ``q_i = exp(x_i - m) / sum_{survivors} exp(x_j - m)``; ``S_j`` is the mass
   of the first ``j`` survivors, summed in float64 in ranking order, and
   ``j* = min{j : S_j >= p}``.  If the survivors hold ``+inf`` entries, those
   share all of the mass equally (``S_j = min(j, n_inf) / n_inf``).  ``p <= 0``
   means ``j* = 1`` (the single best token).  ``ties="lowest_index"`` keeps the
   first ``j*`` survivors; ``ties="all"`` also adds every other survivor equal
   to the ``j*``-th one (so ``p <= 0`` keeps the whole tie group of the max).

Outputs follow SPEC.md "Outputs": ``threshold`` is the smallest kept value
(``-inf`` for an empty row), ``num_ties`` how many kept entries equal it and
``count`` how many entries are kept.  Because every kept set is a prefix of the
ranking (a tie-group-closed one under ``ties="all"``), ``(threshold,
num_ties)`` describe it completely: every entry ``> threshold`` plus the
``num_ties`` lowest-index entries ``== threshold``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

# Restated from SPEC.md on purpose: this package must not import qrita.core.
TIES_CHOICES = ("lowest_index", "all")
TOPP_EPS = 1e-5  # SPEC.md "Top-p precision"

__all__ = [
    "TIES_CHOICES",
    "TOPP_EPS",
    "OracleResult",
    "TopPRow",
    "as_numpy",
    "as_values",
    "normalize_k",
    "normalize_p",
    "oracle_select",
    "prefix_mass",
    "ranking",
]


# --------------------------------------------------------------------------------------------
# Input plumbing
# --------------------------------------------------------------------------------------------


def as_numpy(x: Any) -> np.ndarray:
    """Any array (numpy, torch CPU/GPU, cupy, nested lists) as a host numpy array.

    torch and cupy are recognised by duck typing so that this package never
    imports them.  torch floating tensors are widened to float64 on the way
    (numpy has no bfloat16); that widening is exact for bf16/fp16/fp32.
    """
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "detach") and hasattr(x, "cpu") and hasattr(x, "is_floating_point"):
        t = x.detach().cpu()
        if t.is_floating_point():
            t = t.double()
        return t.numpy()
    if hasattr(x, "__cuda_array_interface__") and hasattr(x, "get"):  # cupy
        return x.get()
    return np.asarray(x)


def as_values(values: Any) -> np.ndarray:
    """Logits as a float64 ``[B, V]`` array; a 1-D ``[V]`` input becomes one row.

    ``-0.0`` is mapped to ``+0.0`` (adding ``+0.0`` does exactly that and
    leaves every other value, NaN and infinities included, unchanged), so the
    ranking and the thresholds see one zero.  Returns a new array.
    """
    arr = np.asarray(as_numpy(values), dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(
            f"values must be 2-D [B, V] (or 1-D [V]), got shape {arr.shape}"
        )
    return arr + 0.0


def normalize_k(k: Any, B: int, V: int) -> np.ndarray:
    """Per-row top-k as int64 ``[B]``; ``0`` means top-k is off on that row.

    ``k`` is None, an int, or an integer array ``[B]``.  Values ``<= 0`` or
    ``>= V`` switch top-k off (SPEC.md "Inputs").
    """
    if k is None:
        return np.zeros(B, dtype=np.int64)
    if isinstance(k, (bool, np.bool_)):
        raise TypeError(f"k must be an integer or an integer array, got {k!r}")
    if isinstance(k, (int, np.integer)):
        kk = int(k)  # Python ints may exceed int64; decide before converting
        return np.full(B, kk if 0 < kk < V else 0, dtype=np.int64)
    arr = as_numpy(k)
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.integer):
        raise TypeError(f"k must be an integer array, got dtype {arr.dtype}")
    if arr.ndim == 0:
        arr = np.full(B, arr.item())
    if arr.shape != (B,):
        raise ValueError(f"k must have shape [B]=[{B}], got {arr.shape}")
    arr = arr.astype(np.int64)
    return np.where((arr > 0) & (arr < V), arr, 0)


def normalize_p(p: Any, B: int) -> np.ndarray:
    """Per-row top-p as float64 ``[B]``; NaN means top-p is off on that row.

    ``p`` is None, a float, or a float array ``[B]``.  Values ``>= 1`` and NaN
    switch top-p off; values ``<= 0`` are kept as they are (the top-1 rule).
    """
    if p is None:
        return np.full(B, np.nan)
    arr = np.asarray(as_numpy(p), dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(B, float(arr))
    if arr.shape != (B,):
        raise ValueError(f"p must have shape [B]=[{B}], got {arr.shape}")
    return np.where(arr >= 1.0, np.nan, arr)


# --------------------------------------------------------------------------------------------
# Per-row building blocks
# --------------------------------------------------------------------------------------------


def ranking(row: np.ndarray) -> np.ndarray:
    """Indices of the keepable entries of one row in ranking order.

    row: float64 ``[V]`` with ``-0.0`` already mapped to ``+0.0``.
    Returns int64 ``[n]``: value descending, index ascending; NaN and ``-inf``
    are absent.  ``-row`` keeps ties tied (no signed zeros left), and a stable
    ascending sort of ``-row`` is exactly the stable descending order.
    """
    keepable = np.flatnonzero(~np.isnan(row) & (row != -np.inf))
    return keepable[np.argsort(-row[keepable], kind="stable")]


def prefix_mass(sorted_values: np.ndarray) -> np.ndarray:
    """Top-p prefix masses ``S`` over values already in ranking order.

    sorted_values: float64 ``[n]`` (descending, no NaN / ``-inf``), ``n >= 1``.
    Returns float64 ``[n]`` with ``S[j - 1]`` the mass of the first ``j``
    entries; ``S[-1] == 1.0`` exactly and ``S`` is non-decreasing.
    """
    n = sorted_values.shape[0]
    n_inf = int(np.count_nonzero(sorted_values == np.inf))
    if n_inf:
        # The +inf entries share all of the mass; they come first in the ranking.
        return np.minimum(np.arange(1, n + 1), n_inf) / n_inf
    # Sequential cumsum in ranking order, normalised by its own last element so
    # that S_n is exactly 1 (any p < 1 is reached) and S stays monotone.
    weights = np.exp(sorted_values - sorted_values[0])
    cumulative = np.cumsum(weights)
    return cumulative / cumulative[-1]


@dataclass(frozen=True)
class TopPRow:
    """Top-p data of one row, for the ambiguity-window check (SPEC.md "Top-p precision").

    Attributes:
        p: the row's target, ``p < 1`` (after the disabling rules; may be ``<= 0``).
        S: float64 ``[n]``, prefix masses over the top-k survivors in ranking
            order: ``S[j - 1]`` is the mass of the first ``j`` survivors
            (``S_0 = 0`` is implicit).  Empty when the row has no survivors.
        j_star: ``min{j : S_j >= p}`` (``1`` when ``p <= 0``, ``0`` when there
            are no survivors).  Under ``ties="all"`` the kept count can be larger
            (the tie group of the ``j_star``-th survivor is added).
        windowed: True when a backend may pick another ``j`` inside the
            ambiguity window: ``0 < p < 1`` and at least one survivor.  The
            ``p <= 0`` top-1 rule is categorical, so it is matched exactly.
    """

    p: float
    S: np.ndarray
    j_star: int
    windowed: bool

    def accepts(self, j: int, eps: float = TOPP_EPS) -> bool:
        """Whether a prefix of length ``j`` is allowed: ``S_{j-1} < p + eps`` and ``S_j >= p - eps``."""
        if not self.windowed:
            return j == self.j_star
        n = self.S.shape[0]
        if not 1 <= j <= n:
            return False
        s_prev = 0.0 if j == 1 else float(self.S[j - 2])
        return s_prev < self.p + eps and float(self.S[j - 1]) >= self.p - eps

    def window(self, eps: float = TOPP_EPS) -> tuple[int, int]:
        """The inclusive range ``(lo, hi)`` of prefix lengths that :meth:`accepts`.

        ``S`` is non-decreasing, so the accepted lengths are contiguous:
        ``lo`` is the first ``j`` with ``S_j >= p - eps`` and ``hi`` the last
        with ``S_{j-1} < p + eps``.
        """
        if not self.windowed:
            return (self.j_star, self.j_star)
        lo = int(np.searchsorted(self.S, self.p - eps, side="left")) + 1
        s_prev = np.concatenate(([0.0], self.S[:-1]))
        hi = int(np.count_nonzero(s_prev < self.p + eps))
        return (lo, hi)


@dataclass(frozen=True)
class OracleResult:
    """The oracle's answer for a batch.

    Attributes:
        threshold: float64 ``[B]``, smallest kept value (``-inf`` if the row keeps
            nothing; ``+0.0``, never ``-0.0``, for a zero boundary).
        num_ties: int32 ``[B]``, kept entries equal to ``threshold`` (the lowest
            indices under ``ties="lowest_index"``); 0 for an empty row.
        count: int32 ``[B]``, kept entries.
        mask: bool ``[B, V]``, the kept set.
        order: ``B`` int64 arrays ``[count[b]]``, kept indices in ranking order.
        survivors: ``B`` int64 arrays, the top-k survivors in ranking order
            (every keepable entry when top-k is off on the row).
        topp: ``B`` entries, a :class:`TopPRow` where top-p is active, else None.
        k: int64 ``[B]``, effective top-k (0 = off).
        p: float64 ``[B]``, effective top-p (NaN = off).
        ties: the tie rule used.
    """

    threshold: np.ndarray
    num_ties: np.ndarray
    count: np.ndarray
    mask: np.ndarray
    order: list[np.ndarray]
    survivors: list[np.ndarray]
    topp: list[TopPRow | None]
    k: np.ndarray
    p: np.ndarray
    ties: str

    def indices(self) -> np.ndarray:
        """int64 ``[B, max(count)]``: kept indices in ranking order, padded with -1."""
        B = len(self.order)
        width = int(self.count.max()) if B else 0
        out = np.full((B, width), -1, dtype=np.int64)
        for b, kept in enumerate(self.order):
            out[b, : kept.shape[0]] = kept
        return out


def _select_row(row: np.ndarray, k: int, p: float, all_ties: bool):
    """One row of :func:`oracle_select`.

    row: float64 ``[V]`` (signed zeros normalised); k: effective top-k (0 = off);
    p: effective top-p (NaN = off).  Returns ``(kept, survivors, topp)``:
    int64 index arrays in ranking order and a :class:`TopPRow` or None.
    """
    ranked = ranking(row)
    ranked_values = row[ranked]
    n = ranked.shape[0]

    # Top-k.  k >= n (possible since k < V only) keeps everything keepable.
    n_survivors = n
    if 0 < k < n:
        if all_ties:
            # ranked_values is descending, so the entries >= the k-th form a prefix.
            n_survivors = int(np.count_nonzero(ranked_values >= ranked_values[k - 1]))
        else:
            n_survivors = k
    survivors = ranked[:n_survivors]
    survivor_values = ranked_values[:n_survivors]

    # Top-p on the survivors.
    topp = None
    n_kept = n_survivors
    if not math.isnan(p):
        if n_survivors == 0:
            S = np.zeros(0, dtype=np.float64)
            j_star = 0
        else:
            S = prefix_mass(survivor_values)
            if p <= 0:
                j_star = 1
            else:
                # First index with S >= p; exists because S[-1] == 1 > p.
                j_star = int(np.searchsorted(S, p, side="left")) + 1
        topp = TopPRow(
            p=float(p), S=S, j_star=j_star, windowed=bool(p > 0 and n_survivors > 0)
        )
        n_kept = j_star
        if all_ties and j_star > 0:
            # Add the rest of the tie group of the last entry taken (again a prefix).
            n_kept = int(
                np.count_nonzero(survivor_values >= survivor_values[j_star - 1])
            )

    return survivors[:n_kept], survivors, topp


# --------------------------------------------------------------------------------------------
# Public entry point
# --------------------------------------------------------------------------------------------


def oracle_select(
    values: Any, k: Any = None, p: Any = None, ties: str = "lowest_index"
) -> OracleResult:
    """Exact Top-k then Top-p selection by a stable sort (the SPEC.md ground truth).

    Args:
        values: ``[B, V]`` (or ``[V]``, one row) logits; any float dtype, taken
            as exact float64 values (bf16/fp16/fp32 are exactly representable).
            May hold ``+inf``, ``-inf``, NaN and ``-0.0``.  numpy, torch or cupy.
        k: None, an int, or an integer array ``[B]``; ``<= 0`` or ``>= V``: no
            top-k on that row.
        p: None, a float, or a float array ``[B]``; ``>= 1`` or NaN: no top-p on
            that row; ``<= 0``: the single best token (its whole tie group under
            ``ties="all"``).
        ties: ``"lowest_index"`` or ``"all"`` (SPEC.md "Ties at the boundary").

    Returns:
        :class:`OracleResult`.  Cost: one stable argsort per row.
    """
    if ties not in TIES_CHOICES:
        raise ValueError(f"ties must be one of {TIES_CHOICES}, got {ties!r}")
    x = as_values(values)
    B, V = x.shape
    k_rows = normalize_k(k, B, V)
    p_rows = normalize_p(p, B)
    all_ties = ties == "all"

    threshold = np.full(B, -np.inf, dtype=np.float64)
    num_ties = np.zeros(B, dtype=np.int32)
    count = np.zeros(B, dtype=np.int32)
    mask = np.zeros((B, V), dtype=bool)
    order: list[np.ndarray] = []
    survivors: list[np.ndarray] = []
    topp: list[TopPRow | None] = []

    for b in range(B):
        kept, surv, row_topp = _select_row(
            x[b], int(k_rows[b]), float(p_rows[b]), all_ties
        )
        order.append(kept)
        survivors.append(surv)
        topp.append(row_topp)
        mask[b, kept] = True
        count[b] = kept.shape[0]
        if kept.shape[0]:
            kept_values = x[b, kept]
            # ranking order: the last kept entry is the smallest
            threshold[b] = kept_values[-1]
            num_ties[b] = np.count_nonzero(kept_values == threshold[b])

    return OracleResult(
        threshold=threshold,
        num_ties=num_ties,
        count=count,
        mask=mask,
        order=order,
        survivors=survivors,
        topp=topp,
        k=k_rows,
        p=p_rows,
        ties=ties,
    )
