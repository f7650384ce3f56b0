"""A short hash of everything in ``qrita.core``: constants, key mapping, LUTs and
state-machine source.  Kernel caches are keyed by it and benchmark records carry
it, so a change to the spec can never meet a stale binary or an old number.
"""

from __future__ import annotations

import functools
import hashlib
import inspect

from . import keys, lut, search, spec


@functools.cache
def spec_fingerprint() -> str:
    """16 hex digits of sha256 over the core modules' source and the LUT bytes."""
    h = hashlib.sha256()
    for module in (spec, keys, lut, search):
        h.update(inspect.getsource(module).encode())
    h.update(lut.lut_checksum().encode())
    return h.hexdigest()[:16]
