"""The backend-agnostic spec: constants, keys, LUTs and the pivot-search state machine.

Everything a backend needs to realise ``shared/SPEC.md`` lives here, once.
Backends import from this package; it imports nothing but numpy and the stdlib.
"""

from .fingerprint import spec_fingerprint
from .keys import KEY_CONSTANTS, KEY_NAN, bits_from_keys, keys_from_bits
from .lut import TOPK_DELTA, TOPP_DELTA, lut_checksum
from .spec import TIES, TIES_ALL, TIES_LOWEST_INDEX, TOPP_EPS

__all__ = [
    "KEY_CONSTANTS",
    "KEY_NAN",
    "TIES",
    "TIES_ALL",
    "TIES_LOWEST_INDEX",
    "TOPK_DELTA",
    "TOPP_DELTA",
    "TOPP_EPS",
    "bits_from_keys",
    "keys_from_bits",
    "lut_checksum",
    "spec_fingerprint",
]
