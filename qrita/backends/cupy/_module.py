"""Kernel source, compile options and the per-device module cache.

The source of a module is the generated preamble (:func:`qrita.core.cgen.preamble`,
whose first line carries the spec fingerprint) followed by ``kernels.cu``.  One
module per (device, dtype, block geometry); the cache key holds the spec fingerprint and a hash
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

# Geometry (passed to kernels.cu as QRITA_THREADS / QRITA_ITEMS).  A chunk is CHUNK entries
# whatever the geometry.  The kernels that stream rows run 256 threads a block, four blocks an
# SM (64 registers a thread), so that while one block searches its candidates three stream;
# combine, where one block per row searches alone (B <= 16, the misses over the whole row),
# runs 512.  Session 19 (H200, CUDA-graph medians, B=1024, V=131072, fp32, LLM-like): top-k 50
# 329 -> 287 us, top-k 100 + top-p 0.9 373 -> 318 us, top-p 0.9 586 -> 490 us; 512 threads
# for the B=16 misses' search: Gaussian top-p 0.9 389 us (256: 643 us).
CHUNK = 4096
THREADS = {"select": 256, "partial": 256, "combine": 512, "mask": 256}
# Thread-block clusters (CUDA, compute capability 9.0 and newer): the module of the combine
# geometry then also holds ccombine_kernel_<dtype>, the split path's combine run by CLUSTER
# blocks a row (kernels.cu, QRITA_CLUSTER).  8 is the portable cluster size.
CLUSTER = 8
CLUSTER_FAMILY = "ccombine"
CLUSTER_MIN_CC = 90
CAPACITY = spec.CANDIDATE_CAPACITY
# The split path's most slices a row: the combine keeps a slice a thread and the slices' starts
# in its bins (QRITA_NBINS in kernels.cu; THREADS["combine"] >= it).
MAX_SPLITS = 256
# byte sizes of the scratch records (struct ZPart, Partial, RowInfo, RowCut in kernels.cu)
ZPART_BYTES = 16
PARTIAL_BYTES = 12
ROWINFO_BYTES = 8
ROWCUT_BYTES = 16


@functools.cache
def kernel_text() -> str:
    """``kernels.cu`` as shipped."""
    return KERNEL_FILE.read_text()


@functools.cache
def source() -> str:
    """The full module source: generated preamble + kernels (every dtype, selected by -D)."""
    return preamble() + "\n" + kernel_text()


def source_hash() -> str:
    """16 hex digits of sha256 over :func:`source` (hashed once per source text: every launch asks)."""
    return _sha16(source())


@functools.lru_cache(maxsize=8)
def _sha16(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def kernel_names(dtype: str) -> tuple[str, ...]:
    return tuple(f"{family}_kernel_{dtype}" for family in FAMILIES)


def geometries() -> tuple[int, ...]:
    """The distinct block sizes of THREADS: one module each per (device, dtype)."""
    return tuple(sorted(set(THREADS.values())))


def compile_options(dtype: str, warp_size: int, threads: int, cluster: int = 1) -> tuple[str, ...]:
    """NVRTC/hiprtc options of the module for ``dtype`` and ``threads`` a block (the arch is
    added by the compiler driver); ``cluster > 1`` (sm_90+ only) adds the cluster combine."""
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {DTYPES}, got {dtype!r}")
    return (
        "-std=c++17",
        f"-DQRITA_WARP_SIZE={int(warp_size)}",
        f"-DQRITA_THREADS={int(threads)}",
        f"-DQRITA_ITEMS={CHUNK // int(threads)}",
        "-DQRITA_DTYPES_SELECTED",
        f"-DQRITA_WITH_{dtype.upper()}",
    ) + ((f"-DQRITA_CLUSTER={int(cluster)}",) if cluster > 1 else ())


def module_cluster(threads: int, compute_capability: int, hip: bool) -> int:
    """Cluster size the module of ``threads`` a block is built with on such a device (1: none)."""
    if hip or compute_capability < CLUSTER_MIN_CC or threads != THREADS["combine"]:
        return 1
    return CLUSTER


_lock = threading.Lock()
_modules: dict[tuple, object] = {}


def cache_key(device_id: int, dtype: str, warp_size: int, threads: int, cluster: int = 1) -> tuple:
    return (device_id, dtype, warp_size, threads, cluster, spec_fingerprint(), source_hash())


def get_kernel(device_id: int, dtype: str, family: str):
    """The ``cupy.RawKernel`` of ``family`` for ``dtype`` on device ``device_id``, from the
    module of its geometry (compiled once, on first use).  ``CLUSTER_FAMILY`` exists only where
    :func:`has_clusters`."""
    import cupy

    threads = THREADS["combine" if family == CLUSTER_FAMILY else family]
    warp = warp_size(device_id)
    cluster = module_cluster(threads, compute_capability(device_id), is_hip())
    with cupy.cuda.Device(device_id):
        key = cache_key(device_id, dtype, warp, threads, cluster)
        with _lock:
            kernels = _modules.get(key)
            if kernels is None:
                module = cupy.RawModule(code=source(), options=compile_options(dtype, warp, threads, cluster))
                families = FAMILIES + ((CLUSTER_FAMILY,) if cluster > 1 else ())
                kernels = {f: module.get_function(f"{f}_kernel_{dtype}") for f in families}
                _modules[key] = kernels
    return kernels[family]


def has_clusters(device_id: int) -> bool:
    """Whether the device runs the cluster combine (CUDA, compute capability 9.0+)."""
    return module_cluster(THREADS["combine"], compute_capability(device_id), is_hip()) > 1


@functools.cache
def compute_capability(device_id: int) -> int:
    import cupy

    return int(cupy.cuda.Device(device_id).compute_capability)


@functools.cache
def is_hip() -> bool:
    import cupy

    return bool(getattr(cupy.cuda.runtime, "is_hip", False))


@functools.cache
def warp_size(device_id: int) -> int:
    import cupy

    return int(cupy.cuda.Device(device_id).attributes["WarpSize"])


@functools.cache
def multiprocessor_count(device_id: int) -> int:
    import cupy

    return int(cupy.cuda.Device(device_id).attributes["MultiProcessorCount"])
