"""The counter-based random numbers of ``qrita.sample``: the RNG spec.

Every random number qrita draws is a pure function of ``(seed, counter)``, with
the counter being the token index.  A row's draw therefore depends only on its
seed and its own logits, never on the batch, on ``B``, on the backend or on how
a kernel splits the work.  This module is the single statement of the recipe;
the array paths in :mod:`qrita.sampling` and any future kernel (Triton, Numba,
CuPy) reproduce it bit for bit, and the tests compare them with the scalar
functions below.

Recipe
------
All integer arithmetic is on unsigned 64-bit integers and wraps modulo
``2**64``; ``>>`` is a logical shift::

    mix64(z):                                   # splitmix64's finaliser
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) * 0x94D049BB133111EB
        return z ^ (z >> 31)

    stream_state(seed) = mix64(seed mod 2**64)
    random_bits(seed, i) = mix64(stream_state(seed) + (i + 1) * 0x9E3779B97F4A7C15)

    uniform(bits) = ((bits >> 11) + 1) * 2**-53          # float64 in (0, 1]
    gumbel(bits)  = -log(-log(uniform(bits)))            # float64

``random_bits(seed, i)`` is the ``(i + 1)``-th output of the textbook splitmix64
generator started from ``stream_state(seed)`` (so seed 0, whose state is 0,
gives the published splitmix64(0) sequence ``0xE220A8397B1DCDAF,
0x6E789E6AA1B965F4, ...``).  Hashing the seed first keeps nearby seeds
(0, 1, 2, ...) from giving shifted copies of one stream.

Signed 64-bit implementations (torch has no full uint64 arithmetic) give the
same bits: two's-complement multiplication and addition wrap identically,
a logical shift is ``(z >> s) & ((1 << (64 - s)) - 1)`` on the arithmetic one,
and each multiplier is written as ``C - 2**64``.  A seed is any integer; it is
reduced modulo ``2**64``, so ``-1`` and ``2**64 - 1`` are the same seed, and an
int64 array holds every seed.

Uniforms keep 53 random bits so that ``-log(u)`` resolves the small
exponentials that decide whether a low-probability token wins the race; with
24 bits (a float32 uniform) a token of probability ``1e-6`` would already be
drawn with a visibly wrong frequency.  ``u`` is never 0, so ``gumbel`` is
finite except for ``u == 1`` (probability ``2**-53``), where it is ``+inf``
and that token wins.  ``log`` differs by an ulp between math libraries, so
two backends agree on the token except when two keys fall within an ulp of
each other (probability about ``1e-15`` per draw).

Counters
--------
Counters ``0 <= i < 2**62`` are token indices.  Counters from ``2**63`` up are
reserved for :func:`fold_in`, which derives a new seed (for the next decoding
step, say) from a seed and a value: ``fold_in(seed, v) = random_bits(seed,
2**63 + v)``.  Passing the *same* seed at every decoding step reuses the same
noise for every token index, which correlates the steps; derive per-step seeds
instead.

Portability
-----------
The functions marked *portable* use only integer arithmetic, shifts, masks
and literals, no calls and no globals, so the same source can become a Numba
device function or a Triton function on uint64 scalars.  As plain Python ints
they need the ``& 0xFFFFFFFFFFFFFFFF`` after each multiplication and addition;
on uint64 the mask is a no-op.
"""

from __future__ import annotations

import math

MASK64 = 0xFFFFFFFFFFFFFFFF
GOLDEN_GAMMA = 0x9E3779B97F4A7C15  # splitmix64's increment: 2**64 / golden ratio, odd
MIX_MULTIPLIER_1 = 0xBF58476D1CE4E5B9
MIX_MULTIPLIER_2 = 0x94D049BB133111EB
MIX_SHIFTS = (30, 27, 31)
UNIFORM_BITS = 53  # random bits in a uniform: bits >> (64 - UNIFORM_BITS)
FOLD_COUNTER_BASE = 1 << 63  # counters reserved for fold_in
MAX_TOKEN_COUNTER = 1 << 62


def mix64(z):
    """Portable. splitmix64's finaliser: a bijection of 64-bit integers."""
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def stream_bits(state, counter):
    """Portable. The 64 random bits of ``counter`` in the stream whose state is
    ``state`` (``= stream_state(seed)``): ``mix64(state + (counter + 1) * GOLDEN_GAMMA)``."""
    z = (state + ((counter + 1) * 0x9E3779B97F4A7C15)) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return z ^ (z >> 31)


def stream_state(seed: int) -> int:
    """The stream state of an integer seed (any Python int; reduced modulo 2**64)."""
    return mix64(int(seed) & MASK64)


def random_bits(seed: int, counter: int) -> int:
    """The 64 random bits of ``(seed, counter)`` as a Python int in ``[0, 2**64)``."""
    return stream_bits(stream_state(seed), int(counter) & MASK64)


def uniform_from_bits(bits: int) -> float:
    """``((bits >> 11) + 1) * 2**-53``: a float64 in ``(0, 1]`` (exact)."""
    return float((int(bits) >> (64 - UNIFORM_BITS)) + 1) * 2.0**-UNIFORM_BITS


def gumbel_from_bits(bits: int) -> float:
    """``-log(-log(u))`` of :func:`uniform_from_bits` (``+inf`` when ``u == 1``)."""
    e = -math.log(uniform_from_bits(bits))
    return math.inf if e == 0.0 else -math.log(e)


def fold_in(seed: int, value: int) -> int:
    """A new seed derived from ``seed`` and ``value`` (``0 <= value < 2**63``).

    Use it to give each decoding step its own noise: ``fold_in(request_seed, step)``.
    """
    if not 0 <= int(value) < FOLD_COUNTER_BASE:
        raise ValueError(f"value must be in [0, 2**63), got {value}")
    return random_bits(seed, FOLD_COUNTER_BASE + int(value))


def as_signed64(u: int) -> int:
    """The int64 (two's complement) holding the 64-bit pattern ``u``."""
    u &= MASK64
    return u - (1 << 64) if u >> 63 else u
