"""The qrita contract in executable form: constants every backend consumes.

This module is the single home of the semantic decisions of ``shared/SPEC.md``
and of the tunables of the Qrita method (``shared/ALGORITHM.md``).  Backends
import these names; they never restate them.  Changing a value here changes the
spec fingerprint (:mod:`qrita.core.fingerprint`), which keys kernel caches and
is stamped into benchmark records.

Semantics (short form; SPEC.md is authoritative)
------------------------------------------------
* Ranking: value descending, then index ascending (a stable descending sort).
* ``k``: ``k <= 0`` or ``k >= V`` disables top-k on that row (covers both the
  Hugging Face ``top_k=0`` and the vLLM ``k == V`` conventions).
* ``p``: ``p >= 1`` or NaN disables top-p; ``p <= 0`` keeps the single best
  token (all best tokens under ``ties="all"``).
* Top-k first; top-p then works on probabilities renormalised over the top-k
  survivors.  ``-inf`` and NaN are never kept.  ``+inf`` ranks above every
  finite value and, for top-p, the ``+inf`` entries of a row share its mass.
* Equality is equality of values: ``-0.0 == +0.0``.
* Top-p boundary: ``j* = min{j : S_j >= p}`` with ``S`` the float64 prefix
  mass in ranking order; a backend may return any ``j`` with
  ``S_{j-1} < p + TOPP_EPS`` and ``S_j >= p - TOPP_EPS``.

Decisions where SPEC.md is silent (also listed in the README)
--------------------------------------------------------------
* ``ties="all"`` with ``p <= 0`` keeps every entry equal to the row maximum.
* A per-row ``p`` that is NaN means "no top-p" (SPEC.md), a scalar NaN ``p``
  is an argument error.
* The threshold of a kept ``0.0`` boundary is ``+0.0`` whatever mix of signed
  zeros the row holds (values, not bits, are compared).
* ``Selection.probs`` is computed in float32 for 16/32-bit inputs and float64
  for float64 inputs.
"""

from __future__ import annotations

# --- tie rules ---------------------------------------------------------------
TIES_LOWEST_INDEX = 0
TIES_ALL = 1
TIES = {"lowest_index": TIES_LOWEST_INDEX, "all": TIES_ALL}

# --- top-p ambiguity window (SPEC.md "Top-p precision") ---------------------
TOPP_EPS = 1e-5

# --- supported dtypes ----------------------------------------------------------
# name -> (bits, exponent bits, mantissa bits)
DTYPE_BITS = {
    "float16": (16, 5, 10),
    "bfloat16": (16, 8, 7),
    "float32": (32, 8, 23),
    "float64": (64, 11, 52),
}
GPU_DTYPES = ("float32", "float16", "bfloat16")
CPU_DTYPES = ("float32", "float16", "bfloat16", "float64")

# --- Gaussian sigma-truncation --------------------------------------------------
# mean/std come from the first SAMPLE_SIZE entries of a row (the same block
# every time: batch invariance); non-finite entries are ignored.
SAMPLE_SIZE = 1024
# LUT geometry (see qrita.core.lut): top-k is indexed by log2(V/K), top-p by p.
TOPK_LUT_SIZE = 256
TOPK_LUT_STEPS_PER_OCTAVE = 8
TOPP_LUT_SIZE = 256
# The cut is moved down by this many sigmas so that it undershoots.
TOPK_RELAX = 0.25
TOPP_RELAX = 0.25
# Clamp of every table entry, in sigmas.
LUT_DELTA_MIN = -8.0
LUT_DELTA_MAX = 8.0

# --- pivot search ----------------------------------------------------------------
# The paper's quaternary search evaluates 3 pivots a round.
NUM_PIVOTS = 3
# Upper bound of rounds for a key width of W bits and P pivots a round is
# ceil(W / log2(P + 1)) + 1 (see qrita.core.search.max_rounds).

# --- candidate buffer ----------------------------------------------------------
# Default capacity (entries) of the per-row candidate buffer used by the
# truncation; backends may choose a smaller or larger one, the result is exact
# either way (an overflow is a truncation miss).
CANDIDATE_CAPACITY = 4096
