"""Lookup tables for Gaussian sigma-truncation.

A row is modelled as ``N(mu, sigma**2)`` from its first ``SAMPLE_SIZE``
entries, and the cut is ``t = mu + delta * sigma``.  Candidates are the entries
``x > t``.  ``delta`` comes from the tables below; every backend receives these
exact float32 arrays (their checksum is pinned in the tests).

Top-k
    ``delta ~ Phi^-1(1 - K/V)``, indexed by ``i = floor(log2(V/K) * 8)``
    clamped to ``[0, 255]``.  Entry ``i`` uses the bin's largest fraction
    ``2**(-i/8)``, so the cut is never above the Gaussian estimate, and is then
    lowered by ``TOPK_RELAX``.

Top-p
    Under the Gaussian model, the softmax mass above ``mu + d*sigma`` is
    ``1 - Phi(d - sigma)`` (exponential tilting shifts the mean by
    ``sigma**2``).  So the cut that keeps mass ``p`` is
    ``delta = sigma + Phi^-1(1 - p)``.  The table holds ``Phi^-1(1 - p)``
    indexed by ``i = ceil(p * 255)``, using ``p_i = i / 255 >= p`` (a lower
    cut), minus ``TOPP_RELAX``; the backend adds ``sigma``.

A truncation miss (too few candidates, or more than the buffer holds) is only
slower, never wrong.
"""

from __future__ import annotations

import hashlib
import math
from statistics import NormalDist

import numpy as np

from .spec import (
    LUT_DELTA_MAX,
    LUT_DELTA_MIN,
    TOPK_LUT_SIZE,
    TOPK_LUT_STEPS_PER_OCTAVE,
    TOPK_RELAX,
    TOPP_LUT_SIZE,
    TOPP_RELAX,
)

_NORMAL = NormalDist()


def _inverse_upper_tail(fraction: float) -> float:
    """``Phi^-1(1 - fraction)`` clamped to the table range."""
    if fraction <= 0.0:
        return LUT_DELTA_MAX
    if fraction >= 1.0:
        return LUT_DELTA_MIN
    return min(max(_NORMAL.inv_cdf(1.0 - fraction), LUT_DELTA_MIN), LUT_DELTA_MAX)


def _build_topk() -> np.ndarray:
    table = [
        _inverse_upper_tail(2.0 ** (-i / TOPK_LUT_STEPS_PER_OCTAVE)) - TOPK_RELAX
        for i in range(TOPK_LUT_SIZE)
    ]
    return np.asarray(table, dtype=np.float32)


def _build_topp() -> np.ndarray:
    table = [_inverse_upper_tail(i / (TOPP_LUT_SIZE - 1)) - TOPP_RELAX for i in range(TOPP_LUT_SIZE)]
    return np.asarray(table, dtype=np.float32)


TOPK_DELTA = _build_topk()
TOPK_DELTA.setflags(write=False)
TOPP_DELTA = _build_topp()
TOPP_DELTA.setflags(write=False)


def topk_lut_index(k: int, vocab: int) -> int:
    """Row of :data:`TOPK_DELTA` for ``0 < k < vocab``."""
    i = int(math.floor(math.log2(vocab / k) * TOPK_LUT_STEPS_PER_OCTAVE))
    return min(max(i, 0), TOPK_LUT_SIZE - 1)


def topp_lut_index(p: float) -> int:
    """Row of :data:`TOPP_DELTA` for ``0 < p < 1``."""
    i = int(math.ceil(p * (TOPP_LUT_SIZE - 1)))
    return min(max(i, 0), TOPP_LUT_SIZE - 1)


def topk_lut_indices(k: np.ndarray, vocab: int) -> np.ndarray:
    """Vectorised :func:`topk_lut_index` (``k`` clipped into ``[1, vocab]``)."""
    kk = np.clip(np.asarray(k, dtype=np.float64), 1.0, float(vocab))
    i = np.floor(np.log2(vocab / kk) * TOPK_LUT_STEPS_PER_OCTAVE)
    return np.clip(i, 0, TOPK_LUT_SIZE - 1).astype(np.int64)


def topp_lut_indices(p: np.ndarray) -> np.ndarray:
    """Vectorised :func:`topp_lut_index`."""
    pp = np.nan_to_num(np.asarray(p, dtype=np.float64), nan=1.0)
    i = np.ceil(pp * (TOPP_LUT_SIZE - 1))
    return np.clip(i, 0, TOPP_LUT_SIZE - 1).astype(np.int64)


def lut_checksum() -> str:
    """sha256 of both tables' float32 bytes; pinned in ``tests/test_core.py``."""
    h = hashlib.sha256()
    h.update(TOPK_DELTA.tobytes())
    h.update(TOPP_DELTA.tobytes())
    return h.hexdigest()
