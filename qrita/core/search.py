"""The pivot-search state machine on order-preserving keys.

Problem.  Over a multiset of keys (the candidates of a row), each key ``x``
with a non-negative weight ``w(x)`` (1 for top-k, ``exp(x - max)`` for top-p),
let ``C(tau) = sum of w(x) over x > tau``.  ``C`` is non-increasing.  For a
target ``T > 0`` with ``C(lo0) >= T``, the boundary is

    z* = min { tau : C(tau) < T }

which is the key of the entry at which the ranked prefix first reaches ``T``.

State.  ``(lo, hi)`` with the invariant ``C(lo) >= T > C(hi)``, so
``lo < z* <= hi``.  Start: ``lo`` = the truncation cut's key on a hit (or the
key of ``-inf`` on a miss), ``hi`` = key of the row maximum.

Round.  Evaluate ``P`` pivots ``tau_j = pivot(lo, hi, j, P)``, ``j = 1..P``
(``P = 3`` is the paper's quaternary search) in one pass, each giving
``c = C(tau)``, ``zmn`` = the smallest key ``> tau`` and ``n`` = how many
entries equal ``zmn`` (so ``w = n * w(zmn)``).  Then visit the pivots in
increasing order with :func:`classify_pivot`:

* ``STOP`` (``c >= T`` and ``c - w < T``): ``z* = zmn``; done.
* ``BELOW`` (``c < T``): ``hi = tau``; the rest of the round is skipped.
* ``ABOVE`` (``c - w >= T``): ``lo = zmn`` (valid because ``C(zmn) = c - w``).

A backend may also track ``zmx``, the largest key ``<= tau``, and after a BELOW
pivot lower ``hi`` to it (:func:`snap_hi`); any valid ``(lo, hi)`` keeps the
answer exact, tighter ones only save rounds.

When ``hi - lo == 1`` the single pivot is ``hi - 1`` and it is a forced stop
(:func:`classify_pivot` with ``forced=True``): in exact arithmetic that pivot
always satisfies the stop rule; with float masses it bounds the search.  The
width shrinks to at most ``ceil(width / (P + 1))`` each round, so a W-bit key
needs at most :func:`max_rounds` rounds: exact by construction, no iteration
cap that could change the answer.

Duplicates.  With ``z*``, ``above = c - w`` (count or mass strictly above) and
``n`` known, :func:`topk_num_ties` / :func:`topp_num_ties` say how many of the
``n`` boundary entries are kept: the first ones in index order under
``ties="lowest_index"``, all of them under ``ties="all"``.

Portability.  The functions marked *portable* use only integer/float
arithmetic, comparisons and ``if`` on scalars, no calls and no globals, so the
same source runs as plain Python (NumPy backend), as a Numba-CUDA device
function (``cuda.jit(device=True)(fn)``) and as a Triton function
(``triton.jit(fn)``).  CuPy receives them through the generated C preamble in
:mod:`qrita.core.cgen`.
"""

from __future__ import annotations

import math

# classify_pivot results
BELOW = 0
STOP = 1
ABOVE = 2


def pivot(lo, hi, j, num_pivots):
    """Portable. The j-th (1-based) of ``num_pivots`` pivots in ``[lo, hi)``.

    For ``hi - lo == 1`` every pivot is ``lo == hi - 1``.
    """
    return lo + ((hi - lo) * j) // (num_pivots + 1)


def classify_pivot(c, w, target, forced):
    """Portable. BELOW (0), STOP (1) or ABOVE (2) for a pivot with ``C = c``.

    ``w`` is the weight of the entries equal to ``zmn`` (their count for
    top-k); ``forced`` is true for the last pivot ``hi - 1`` of a width-1 range.
    """
    state = 2
    if c < target:
        state = 0
    if c - w < target:
        if c >= target:
            state = 1
    if forced:
        state = 1
    return state


def narrow_lo(lo, state, zmn):
    """Portable. New ``lo`` after a pivot classified ``state``."""
    new_lo = lo
    if state == 2:
        new_lo = zmn
    return new_lo


def narrow_hi(hi, state, tau):
    """Portable. New ``hi`` after a pivot classified ``state``."""
    new_hi = hi
    if state == 0:
        new_hi = tau
    return new_hi


def snap_hi(hi, lo, zmx):
    """Portable. Optional tightening after a BELOW pivot: ``hi`` may drop to
    ``zmx``, the largest key ``<= hi``, because ``C(zmx) = C(hi)``.

    With ``lo`` snapped up to ``zmn`` and ``hi`` down to ``zmx``, both ends sit
    on keys that are present, so the rounds follow the data rather than the
    empty stretches of key space.  ``zmx <= lo`` (no key between) leaves
    ``hi`` unchanged.
    """
    new_hi = hi
    if zmx > lo:
        if zmx < hi:
            new_hi = zmx
    return new_hi


def topk_num_ties(k, count_above, n_eq, ties_all):
    """Portable. Kept entries of the boundary group for top-k (``1 <= k``)."""
    kept = k - count_above
    if ties_all != 0:
        kept = n_eq
    return kept


def topp_num_ties(target, mass_above, weight, n_eq, ties_all):
    """Kept entries of the boundary group for top-p.

    The smallest ``n`` in ``[1, n_eq]`` with ``mass_above + n * weight >= target``
    under ``lowest_index`` (every tie has the same weight), ``n_eq`` under
    ``all``.  Backends without ``math.ceil`` compute the same formula with
    their own ceil.
    """
    if ties_all != 0:
        return n_eq
    need = (target - mass_above) / weight if weight > 0 else float(n_eq)
    n = int(math.ceil(need)) if need == need else n_eq
    if n < 1:
        n = 1
    if n > n_eq:
        n = n_eq
    return n


def max_rounds(key_bits: int, num_pivots: int) -> int:
    """Rounds that always suffice for ``key_bits``-bit keys and ``num_pivots`` pivots."""
    return int(math.ceil(key_bits / math.log2(num_pivots + 1))) + 2


def search(stats, lo, hi, target, num_pivots, key_bits):
    """Run the state machine with a callback; the executable definition.

    ``stats(taus) -> list of (c, zmn, w, n)`` evaluates pivots.  Returns
    ``(z_star, above, n_eq, rounds)`` where ``above = C(z*)`` and ``n_eq`` is
    the number of entries equal to ``z*``.  Backends follow this loop; the NumPy
    backend calls it directly.
    """
    for rounds in range(1, max_rounds(key_bits, num_pivots) + 1):
        forced = hi - lo <= 1  # decided once per round, before lo moves
        if forced:
            taus = [hi - 1]
        else:
            taus = [pivot(lo, hi, j, num_pivots) for j in range(1, num_pivots + 1)]
        results = stats(taus)
        for tau, (c, zmn, w, n) in zip(taus, results, strict=True):
            state = classify_pivot(c, w, target, forced)
            if state == STOP:
                return zmn, c - w, n, rounds
            lo = narrow_lo(lo, state, zmn)
            hi = narrow_hi(hi, state, tau)
            if state == BELOW:
                break
        if lo >= hi:
            lo = hi - 1
    raise AssertionError("pivot search did not converge (violated invariant)")  # pragma: no cover
