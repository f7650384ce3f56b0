"""Kernel source, compile options and the per-device module cache.

The source of a module is the generated preamble (:func:`qrita.core.cgen.preamble`,
whose first line carries the spec fingerprint) followed by ``kernels.cu``.  One
module per (device, dtype); the cache key holds the spec fingerprint and a hash
of the full source, so a changed spec or kernel can never meet a stale module
(CuPy's own on-disk cache is keyed by the source text as well).

Nothing here imports cupy at module import time.
"""

from __future__ import annotations

import functools
import hashlib
import threading
from pathlib import Path

from ...core import spec
from ...core.cgen import preamble
from ...core.fingerprint import spec_fingerprint

KERNEL_FILE = Path(__file__).with_name("kernels.cu")
DTYPES = spec.GPU_DTYPES
# kernel families; the exported names are f"{family}_kernel_{dtype}"
FAMILIES = ("select", "partial", "combine", "mask")

# Geometry: must match the #defines of kernels.cu (checked by tests/test_cupy_compile.py).
THREADS = 512
ITEMS = 8
CHUNK = THREADS * ITEMS
CAPACITY = spec.CANDIDATE_CAPACITY
# byte sizes of the scratch records (struct ZPart, Partial, RowInfo in kernels.cu)
ZPART_BYTES = 16
PARTIAL_BYTES = 24
ROWINFO_BYTES = 8


@functools.cache
def kernel_text() -> str:
    """``kernels.cu`` as shipped."""
    return KERNEL_FILE.read_text()


@functools.cache
def source() -> str:
    """The full module source: generated preamble + kernels (every dtype, selected by -D)."""
    return preamble() + "\n" + kernel_text()


def source_hash() -> str:
    """16 hex digits of sha256 over :func:`source`."""
    return hashlib.sha256(source().encode()).hexdigest()[:16]


def kernel_names(dtype: str) -> tuple[str, ...]:
    return tuple(f"{family}_kernel_{dtype}" for family in FAMILIES)


def compile_options(dtype: str, warp_size: int) -> tuple[str, ...]:
    """NVRTC/hiprtc options of the module for ``dtype`` (the arch is added by the compiler driver)."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    return (
        "-std=c++17",
        f"-DQRITA_WARP_SIZE={int(warp_size)}",
        "-DQRITA_DTYPES_SELECTED",
        f"-DQRITA_WITH_{dtype.upper()}",
    )


_lock = threading.Lock()
_modules: dict[tuple, object] = {}


def cache_key(device_id: int, dtype: str, warp_size: int) -> tuple:
    return (device_id, dtype, warp_size, spec_fingerprint(), source_hash())


def get_kernels(device_id: int, dtype: str) -> dict[str, object]:
    """``{family: cupy.RawKernel}`` for ``dtype`` on device ``device_id`` (compiled once)."""
    import cupy

    with cupy.cuda.Device(device_id) as dev:
        warp = int(dev.attributes["WarpSize"])
        key = cache_key(device_id, dtype, warp)
        with _lock:
            kernels = _modules.get(key)
            if kernels is None:
                module = cupy.RawModule(code=source(), options=compile_options(dtype, warp))
                kernels = {f: module.get_function(f"{f}_kernel_{dtype}") for f in FAMILIES}
                _modules[key] = kernels
    return kernels


@functools.cache
def multiprocessor_count(device_id: int) -> int:
    import cupy

    return int(cupy.cuda.Device(device_id).attributes["MultiProcessorCount"])
