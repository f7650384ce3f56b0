"""Order-preserving unsigned integer keys for IEEE floats.

``key(a) < key(b)  <=>  a < b`` for all non-NaN ``a, b``, with ``-0.0`` and
``+0.0`` mapped to the same key (values, not bits, are compared).  NaN maps to
``KEY_NAN = 0``, below every other key, and ``-inf`` to the next lowest key of
its dtype.  An entry is *keepable* exactly when ``key > key_neg_inf``.

Mapping of raw bits ``u`` of width ``W`` (``SIGN = 1 << (W-1)``,
``MASK = 2**W - 1``)::

    u == SIGN (-0.0)       -> u = 0          (canonical +0.0)
    sign bit set (x < 0)   -> key = ~u & MASK
    sign bit clear (x >= 0)-> key = u | SIGN
    NaN                    -> key = 0

and the inverse, for any key but ``KEY_NAN``::

    key & SIGN             -> u = key ^ SIGN
    otherwise              -> u = ~key & MASK

Backends realise the same mapping with their own integer ops; the constants in
:data:`KEY_CONSTANTS` are what they take from here, and the tests compare every
backend's keys with :func:`keys_from_bits`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .spec import DTYPE_BITS

KEY_NAN = 0  # keys_from_bits relies on it being 0


@dataclass(frozen=True)
class KeyConstants:
    """Bit-level constants of one float format, as plain Python ints."""

    dtype: str
    width: int  # W: bits per value and per key
    sign: int  # 1 << (W-1)
    mask: int  # 2**W - 1
    exp_mask: int  # exponent bits set, sign and mantissa clear
    frac_mask: int  # mantissa bits set
    pos_inf_bits: int
    neg_inf_bits: int
    key_neg_inf: int  # keys strictly above this are keepable
    key_pos_inf: int
    uint: str  # numpy unsigned dtype name of the bits/keys


def _constants(name: str) -> KeyConstants:
    width, exp_bits, frac_bits = DTYPE_BITS[name]
    sign = 1 << (width - 1)
    mask = (1 << width) - 1
    frac_mask = (1 << frac_bits) - 1
    exp_mask = ((1 << exp_bits) - 1) << frac_bits
    pos_inf = exp_mask
    neg_inf = sign | exp_mask
    return KeyConstants(
        dtype=name,
        width=width,
        sign=sign,
        mask=mask,
        exp_mask=exp_mask,
        frac_mask=frac_mask,
        pos_inf_bits=pos_inf,
        neg_inf_bits=neg_inf,
        key_neg_inf=(~neg_inf) & mask,
        key_pos_inf=pos_inf | sign,
        uint=f"uint{width}",
    )


KEY_CONSTANTS = {name: _constants(name) for name in DTYPE_BITS}


def keys_from_bits(bits: np.ndarray, dtype: str) -> np.ndarray:
    """Keys of raw bit patterns.

    bits: unsigned integer array holding the raw bits of ``dtype`` values
    (``uint16`` for float16/bfloat16, ``uint32``/``uint64`` otherwise); a numpy array
    (or anything numpy takes), or a cupy array, whose keys are computed on its device
    with integer operations only.
    Returns an array of the same shape, unsigned dtype and library.
    """
    kc = KEY_CONSTANTS[dtype]
    if not hasattr(bits, "__cuda_array_interface__"):
        bits = np.asarray(bits)
    u = bits.astype(kc.uint, copy=False)
    ut = np.dtype(kc.uint).type
    # arithmetic shift of the signed view: all ones for negatives, 0 otherwise
    flip = (u.view(f"int{kc.width}") >> (kc.width - 1)).view(kc.uint) | ut(kc.sign)
    key = u ^ flip
    # elementwise arithmetic, no masked assignment (which costs cupy a host sync):
    # -0.0's key is sign - 1, one below +0.0's; NaN's key becomes KEY_NAN == 0
    key += (key == ut(kc.sign - 1)).astype(kc.uint)
    key *= ((u & ut(kc.mask ^ kc.sign)) <= ut(kc.exp_mask)).astype(kc.uint)
    return key


def bits_from_keys(keys: np.ndarray, dtype: str) -> np.ndarray:
    """Inverse of :func:`keys_from_bits` (``KEY_NAN`` is not invertible)."""
    kc = KEY_CONSTANTS[dtype]
    k = np.asarray(keys).astype(kc.uint, copy=False)
    ut = k.dtype.type
    return np.where((k & ut(kc.sign)) != 0, k ^ ut(kc.sign), ~k).astype(kc.uint, copy=False)


def float_from_bits(bits: np.ndarray, dtype: str) -> np.ndarray:
    """Exact values of raw bits, as float32 (16/32-bit formats) or float64."""
    kc = KEY_CONSTANTS[dtype]
    u = np.asarray(bits).astype(kc.uint, copy=False)
    if dtype == "float16":
        return u.view(np.float16).astype(np.float32)
    if dtype == "bfloat16":
        return (u.astype(np.uint32) << np.uint32(16)).view(np.float32)
    if dtype == "float32":
        return u.view(np.float32)
    return u.view(np.float64)


def bits_of_values(values: np.ndarray, dtype: str) -> np.ndarray:
    """Raw bits of float values in ``dtype`` (bfloat16 by truncating the float32 bits).

    Exact for values representable in ``dtype``; for others it is one of the
    two neighbouring ``dtype`` values, which is all a truncation cut needs.
    """
    v = np.asarray(values)
    if dtype == "bfloat16":
        return (v.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    return v.astype(dtype).view(KEY_CONSTANTS[dtype].uint)


def bits_from_float(values: np.ndarray, dtype: str) -> np.ndarray:
    """Raw bits of ``values`` already of that format (bfloat16 given as its uint16 bits)."""
    v = np.asarray(values)
    if dtype == "bfloat16":
        if v.dtype == np.uint16:
            return v
        if v.dtype.name == "bfloat16":  # ml_dtypes
            return v.view(np.uint16)
        raise TypeError(f"bfloat16 values must be given as uint16 bits, got {v.dtype}")
    return v.view(KEY_CONSTANTS[dtype].uint)
