"""The truth qrita is judged by: a sort-based NumPy oracle of ``shared/SPEC.md``.

Imports nothing from the rest of qrita (only NumPy), so that it stays an
independent judge of the pivot-search backends.

* :func:`oracle_select` computes the exact kept set (``OracleResult``).
* :func:`check_selection` / :func:`check_mask` accept a backend's answer or
  raise :class:`OracleMismatch` (an ``AssertionError``) naming the rows.
* :func:`mask_from_selection` turns ``(threshold, num_ties)`` into a mask.
"""

from .checker import OracleMismatch, check_mask, check_selection, mask_from_selection
from .oracle import (
    TIES_CHOICES,
    TOPP_EPS,
    OracleResult,
    TopPRow,
    oracle_select,
    prefix_mass,
    ranking,
)

__all__ = [
    "TIES_CHOICES",
    "TOPP_EPS",
    "OracleMismatch",
    "OracleResult",
    "TopPRow",
    "check_mask",
    "check_selection",
    "mask_from_selection",
    "oracle_select",
    "prefix_mass",
    "ranking",
]
