"""Host side of the cupy backend: array plumbing and kernel launches.

Inputs are read in place through their device pointers and element strides
(torch CUDA tensors and cupy arrays alike: zero-copy, no DLPack round trip), and
every launch goes to the caller's current stream (torch's current stream for
torch tensors, cupy's for cupy arrays).  Outputs and scratch come from the
caller's library allocator, so a torch CUDA-graph capture records them in its
pool.  Nothing here reads a device value on the host: no synchronisation.

Paths (``_plan``):

* one block per row (``select_kernel``): pass + search (+ masking) fused;
* split rows, for small batches: ``partial_kernel`` runs ``S`` blocks per row
  over fixed slices of the row's chunks, ``combine_kernel`` merges the slices
  in order and searches, ``mask_kernel`` masks.  Both paths give bit-identical
  results (see the header of ``kernels.cu``).

Scratch stays under :data:`SCRATCH_LIMIT`; larger batches run in row groups.
"""

from __future__ import annotations

import sys
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...core.spec import TIES_ALL
from ..base import Request, SelectResult
from . import _module as M

SCRATCH_LIMIT = 16 * 2**20
# Row scans of truncation misses and the masking, two chunks at a time with 16-byte loads and
# stores (``options={"fast_paths": False}`` per call: one chunk, scalar loads).  H200 (2798b13,
# docs/bench/h200-2026-12-01/session13/ call C): the same bits in every case, and the GPU test
# comparing the two passed (36 cases); select, fp32, V=131072, B=1024: k100+p0.9 803 -> 680 us
# (Zipf), 796 -> 626 (Gaussian), 661 -> 525 (LLM-like); LLM-like top-k 50 462 -> 379 us, masked
# 1320 -> 995 us; top-p 0.9 within 3% (Gaussian 16974 -> 17437 us); B=16 unchanged
FAST_PATHS = True
# Second cuts (``options={"second_cut": False}``: neither).  A top-p row (no top-k) whose Gaussian
# model puts more than the candidate buffer above its cut gathers above the top-k cut for a
# quarter of the buffer instead: rows whose mass sits in a few strong logits then hit.  A top-k
# row whose cut held fewer than k candidates reads the row once more, gathering above the cut for
# 4k entries (at most half the buffer), before it would search the whole row: H200 session 20
# call A, LLM-like k100+p0.9 B=1024, one such row took the kernel from 328 to 902 us.
SECOND_CUT = True
# The split path's combine by clusters of blocks where the device has them (CUDA, sm_90+:
# _module.has_clusters).  A row searched over its whole length (a truncation miss) is then
# histogrammed by M.CLUSTER blocks, a slice each, and the masking is done by the same blocks (no
# mask_kernel).  The same bits either way.  H200 (docs/bench/h200-2026-12-04/session21/, select,
# fp32, V=131072, B=16): top-p 0.9 rows that miss 370 -> 135 us (Gaussian), 363 -> 127 us (Zipf);
# rows that hit pay 2-4 us (top-k 50, k100+p0.9) or 7 us (LLM-like top-p 0.9): the cluster
# launch, not the work (block 0 alone works on them).  So by default (_wants_clusters) only the
# requests that may hold a top-p-only row take it (those rows search their whole length when they
# miss); those whose rows all have a top-k keep one block a row (a top-k row that misses its cut
# gathers again above a second one: regather in kernels.cu).  options={"cluster": True/False}
# forces either.  (Session 22, docs/bench/h200-2026-12-04/session22/: session 21's call D timed out
# on module compiles, about 20 s a dtype on a fresh machine, not in a kernel; with the combine a
# slice a thread, masked rows that hit take one block a row and mask_kernel within 1 us of the
# cluster combine.)
CLUSTERS = True
# the split path's candidate regions stay under this much of the scratch
SPLIT_CANDIDATE_LIMIT = 8 * 2**20
# batches up to this many rows may split their rows over several blocks
SPLIT_MAX_B = 16
_ALIGN = 256
_MASK_COLS_MIN = 8192  # columns per block of mask_kernel


@dataclass(frozen=True)
class _View:
    """A 2-D device array as the kernels see it."""

    ptr: int
    stride_b: int  # elements
    stride_v: int  # elements
    itemsize: int


def _view(a: Any, lib: str) -> _View:
    if lib == "torch":
        return _View(int(a.data_ptr()), int(a.stride(0)), int(a.stride(1)), int(a.element_size()))
    itemsize = int(a.itemsize)
    return _View(int(a.data.ptr), int(a.strides[0]) // itemsize, int(a.strides[1]) // itemsize, itemsize)


def _device_index(a: Any, lib: str) -> int:
    return int(a.device.index) if lib == "torch" else int(a.device.id)


class _Lib:
    """Allocation and stream of the caller's library on one device."""

    def __init__(self, lib: str, like: Any, device: int):
        self.lib = lib
        self.like = like
        self.device = device

    def empty(self, shape, dtype: str):
        if self.lib == "torch":
            torch = sys.modules["torch"]
            tdt = self.like.dtype if dtype == "like" else getattr(torch, dtype)
            return torch.empty(shape, dtype=tdt, device=self.like.device)
        import cupy

        with cupy.cuda.Device(self.device):
            return cupy.empty(shape, dtype=self.like.dtype if dtype == "like" else dtype)

    def ptr(self, a) -> int:
        return int(a.data_ptr()) if self.lib == "torch" else int(a.data.ptr)

    def contiguous(self, a):
        if self.lib == "torch":
            return a.contiguous()
        import cupy

        return cupy.ascontiguousarray(a)

    def stream(self):
        """A cupy stream object for the caller's current stream (None: cupy's current one)."""
        if self.lib != "torch":
            return None
        torch = sys.modules["torch"]
        handle = int(torch.cuda.current_stream(self.device).cuda_stream)
        return _external_stream(handle, self.device)


_streams: dict[tuple[int, int], Any] = {}


class _StreamHandle:
    """A raw stream handle in the CUDA stream protocol (for cupy.cuda.Stream.from_external)."""

    def __init__(self, handle: int):
        self.handle = handle

    def __cuda_stream__(self):
        return (0, self.handle)


def _external_stream(handle: int, device: int):
    """A cached cupy view of a foreign stream handle (torch's current stream)."""
    key = (device, handle)
    stream = _streams.get(key)
    if stream is None:
        import cupy

        external = getattr(cupy.cuda, "ExternalStream", None)
        if external is not None:  # deprecated in cupy 14, still the tested path
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                stream = external(handle, device)
        else:
            stream = cupy.cuda.Stream.from_external(_StreamHandle(handle))
        if int(stream.ptr) != handle:
            raise RuntimeError(f"cupy wrapped stream {handle:#x} as {int(stream.ptr):#x}")
        _streams[key] = stream
    return stream


def _mask_bits(mask_value: float, dtype: str, lib: str) -> int:
    """Raw bits of ``mask_value`` in ``dtype``, rounded as the caller's library rounds it."""
    if lib == "torch":
        torch = sys.modules["torch"]
        t = torch.tensor(mask_value, dtype=getattr(torch, dtype))
        view = torch.int16 if dtype != "float32" else torch.int32
        return int(t.view(view).item()) & (0xFFFF if dtype != "float32" else 0xFFFFFFFF)
    with np.errstate(over="ignore"):
        if dtype == "float32":
            return int(np.float32(mask_value).view(np.uint32))
        if dtype == "float16":
            return int(np.float16(mask_value).view(np.uint16))
        u = int(np.float32(mask_value).view(np.uint32))  # bfloat16: round to nearest even
        if (u & 0x7FFFFFFF) > 0x7F800000:
            return (u >> 16) | 0x40
        return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) & 0xFFFF


def _row_args(req: Request, lib: _Lib, keep: list):
    """``(k_scalar, k_ptr, p_scalar, p_ptr, p_kind)`` kernel arguments."""
    V = req.V
    if req.k is None or isinstance(req.k, int):
        k = 0 if req.k is None else req.k
        k_scalar, k_ptr = (min(max(k, 0), V), 0)  # Python ints may exceed int64: clamp, same meaning
    else:
        k_arr = lib.contiguous(req.k)
        keep.append(k_arr)
        k_scalar, k_ptr = 0, lib.ptr(k_arr)
    if req.p is None or isinstance(req.p, float):
        p_scalar, p_ptr, p_kind = (1.0 if req.p is None else float(req.p)), 0, 0
    else:
        p_arr = lib.contiguous(req.p)
        keep.append(p_arr)
        item = p_arr.element_size() if lib.lib == "torch" else p_arr.itemsize
        p_scalar, p_ptr, p_kind = 1.0, lib.ptr(p_arr), (2 if item == 8 else 1)
    return k_scalar, k_ptr, p_scalar, p_ptr, p_kind


def _wants_clusters(req: Request) -> bool:
    """Whether a row of ``req`` may be top-p only (the rows that search their whole length when
    they miss the truncation): p given, and k absent, per row, or disabled (k <= 0 or k >= V)."""
    if req.p is None or (isinstance(req.p, float) and req.p >= 1.0):
        return False
    return req.k is None or not isinstance(req.k, int) or not 0 < req.k < req.V


def _fixed_point_scale(V: int) -> float:
    """2^F with V * 2^F <= 2^62: top-p masses in 64-bit fixed point never overflow."""
    return float(2 ** (62 - (V - 1).bit_length()))


@dataclass(frozen=True)
class _Plan:
    splits: int  # blocks per row (1: the fused one-block-per-row path)
    group: int  # rows per launch group
    nchunks: int


def _plan(req: Request, device: int) -> _Plan:
    B, V = req.B, req.V
    nchunks = -(-V // M.CHUNK)
    forced = req.options.get("split")
    if forced is not None:
        splits = max(1, min(int(forced), nchunks, M.MAX_SPLITS))
    elif B <= SPLIT_MAX_B:
        wanted = -(-2 * M.multiprocessor_count(device) // max(B, 1))
        splits = max(1, min(wanted, nchunks, M.MAX_SPLITS, SPLIT_CANDIDATE_LIMIT // (max(B, 1) * M.CAPACITY * 8)))
    else:
        splits = 1
    per_row = nchunks * M.ZPART_BYTES + M.ROWINFO_BYTES
    if splits > 1:
        per_row += splits * (M.CAPACITY * 8 + M.PARTIAL_BYTES) + M.ROWCUT_BYTES
    group = max(1, min(B, (SCRATCH_LIMIT - 8 * _ALIGN) // per_row))
    return _Plan(splits, group, nchunks)


class _Scratch:
    """One byte buffer carved into aligned pieces."""

    def __init__(self, lib: _Lib, sizes: dict[str, int]):
        offsets, total = {}, 0
        for name, size in sizes.items():
            offsets[name] = total
            total += -(-max(size, 1) // _ALIGN) * _ALIGN
        self.buffer = lib.empty((total,), "uint8")
        base = lib.ptr(self.buffer)
        self.ptr = {name: base + off for name, off in offsets.items()}


def _u64(v: int) -> np.uint64:
    return np.uint64(v % 2**64)


def _run(req: Request, mask_value: float | None, out: Any):
    """Launch everything for ``req``; returns ``(threshold, num_ties, count, hit, out)``."""
    lib_name = req.lib
    x = req.logits
    device = _device_index(x, lib_name)
    lib = _Lib(lib_name, x, device)
    plan = _plan(req, device)
    # the kernels of the plan's path, resolved (compiled on first use) once per call
    clustered = (
        plan.splits > 1 and req.options.get("cluster", CLUSTERS and _wants_clusters(req)) and M.has_clusters(device)
    )
    if plan.splits == 1:
        families: tuple[str, ...] = ("select",)
    elif clustered:
        families = ("partial", M.CLUSTER_FAMILY)
    else:
        families = ("partial", "combine", "mask")
    kernels = {f: M.get_kernel(device, req.dtype, f) for f in families}
    B, V = req.B, req.V
    threshold = lib.empty((B,), "like")
    num_ties = lib.empty((B,), "int32")
    count = lib.empty((B,), "int32")
    hit = lib.empty((B,), "bool")
    do_mask = mask_value is not None
    inplace = 0
    if do_mask:
        if out is None:
            out = lib.empty((B, V), "like")
        else:
            inplace = 1
    if B == 0:
        return threshold, num_ties, count, hit, out

    keep: list = []
    k_scalar, k_ptr, p_scalar, p_ptr, p_kind = _row_args(req, lib, keep)
    p_item = 8 if p_kind == 2 else 4
    xv = _view(x, lib_name)
    ov = _view(out, lib_name) if do_mask else _View(0, 0, 0, xv.itemsize)
    S, G = plan.splits, plan.group
    sizes = {"zpart": G * plan.nchunks * M.ZPART_BYTES}
    if S > 1:
        sizes.update(
            info=G * M.ROWINFO_BYTES,
            cuts=G * M.ROWCUT_BYTES,
            parts=G * S * M.PARTIAL_BYTES,
            cand_key=G * S * M.CAPACITY * 4,
            cand_col=G * S * M.CAPACITY * 4,
        )
    scratch = _Scratch(lib, sizes)
    ties_all = np.int32(1 if req.ties == TIES_ALL else 0)
    # bit 0: the sigma truncation; bit 1: the second cut of top-p rows (row_setup in kernels.cu)
    truncation = np.int32(
        (1 if req.options.get("truncation", True) else 0) | (2 if req.options.get("second_cut", SECOND_CUT) else 0)
    )
    scale = np.float64(_fixed_point_scale(V))
    mbits = np.uint32(_mask_bits(mask_value, req.dtype, lib_name) if do_mask else 0)
    item = xv.itemsize
    # QRITA_VEC_IN: input rows take 16-byte loads; QRITA_VEC_OUT: output rows take 16-byte stores;
    # QRITA_FAST: the vectorised row scans and masking (see FAST_PATHS)
    vec = int(xv.stride_v == 1 and xv.ptr % 16 == 0 and (xv.stride_b * item) % 16 == 0)
    if do_mask and ov.stride_v == 1 and ov.ptr % 16 == 0 and (ov.stride_b * item) % 16 == 0:
        vec |= 2
    if req.options.get("fast_paths", FAST_PATHS):
        vec |= 4
    ptr_thr, ptr_nt, ptr_cnt, ptr_hit = (lib.ptr(a) for a in (threshold, num_ties, count, hit))

    stream = lib.stream()
    import cupy

    with cupy.cuda.Device(device):
        ctx = stream if stream is not None else _NullContext()
        with ctx:
            for g0 in range(0, B, G):
                rows = min(G, B - g0)
                x_ptr = xv.ptr + g0 * xv.stride_b * item
                row = (
                    _u64(x_ptr),
                    np.int64(xv.stride_b),
                    np.int64(xv.stride_v),
                    np.int32(V),
                )
                args_k = (
                    np.int64(k_scalar),
                    _u64(k_ptr + 8 * g0 if k_ptr else 0),
                    np.float64(p_scalar),
                    _u64(p_ptr + p_item * g0 if p_ptr else 0),
                    np.int32(p_kind),
                    truncation,
                )
                outs = (
                    _u64(ptr_thr + item * g0),
                    _u64(ptr_nt + 4 * g0),
                    _u64(ptr_cnt + 4 * g0),
                    _u64(ptr_hit + g0),
                )
                out_ptr = _u64(ov.ptr + g0 * ov.stride_b * item) if do_mask else _u64(0)
                if S == 1:
                    kernels["select"](
                        (rows,),
                        (M.THREADS["select"],),
                        row
                        + (np.int32(vec),)
                        + args_k
                        + (ties_all, scale)
                        + outs
                        + (_u64(scratch.ptr["zpart"]), np.int32(do_mask), out_ptr)
                        + (np.int64(ov.stride_b), np.int64(ov.stride_v), mbits, np.int32(inplace)),
                    )
                    continue
                kernels["partial"](
                    (rows, S),
                    (M.THREADS["partial"],),
                    row
                    + (np.int32(vec),)
                    + args_k
                    + (np.int32(S),)
                    + tuple(_u64(scratch.ptr[n]) for n in ("cand_key", "cand_col", "parts", "zpart", "cuts")),
                )
                combine_args = (
                    row
                    + (np.int32(vec),)
                    + args_k
                    + (np.int32(S), ties_all, scale)
                    + tuple(_u64(scratch.ptr[n]) for n in ("cand_key", "cand_col", "parts", "zpart", "cuts"))
                    + outs
                )
                if clustered:  # searches and (do_mask) masks: no mask_kernel
                    kernels[M.CLUSTER_FAMILY](
                        (rows * M.CLUSTER,),
                        (M.THREADS["combine"],),
                        combine_args
                        + (np.int32(do_mask), out_ptr)
                        + (np.int64(ov.stride_b), np.int64(ov.stride_v), mbits, np.int32(inplace)),
                    )
                    continue
                kernels["combine"](
                    (rows,), (M.THREADS["combine"],), combine_args + (_u64(scratch.ptr["info"]), np.int32(do_mask))
                )
                if do_mask:
                    cols = -(-max(_MASK_COLS_MIN, -(-V // 65535)) // M.CHUNK) * M.CHUNK  # whole chunks
                    kernels["mask"](
                        (rows, -(-V // cols)),
                        (M.THREADS["mask"],),
                        row
                        + (np.int32(vec), _u64(scratch.ptr["info"]), out_ptr)
                        + (np.int64(ov.stride_b), np.int64(ov.stride_v), mbits, np.int32(inplace), np.int32(cols)),
                    )
    del keep, scratch  # the allocators order their reuse after these launches (same stream)
    return threshold, num_ties, count, hit, out


class _NullContext:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def select(req: Request) -> SelectResult:
    threshold, num_ties, count, hit, _ = _run(req, None, None)
    return SelectResult(threshold=threshold, num_ties=num_ties, count=count, hit=hit)


def top_k_top_p(req: Request, mask_value: float, out: Any):
    *_, result = _run(req, float(mask_value), out)
    return result


def scratch_bytes(req: Request, device: int = 0) -> int:
    """Scratch a request would allocate (tests: the 16 MiB bound)."""
    plan = _plan(req, device)
    G, S = plan.group, plan.splits
    total = -(-G * plan.nchunks * M.ZPART_BYTES // _ALIGN) * _ALIGN
    if S > 1:
        for size in (
            G * M.ROWINFO_BYTES,
            G * M.ROWCUT_BYTES,
            G * S * M.PARTIAL_BYTES,
            G * S * M.CAPACITY * 4,
            G * S * M.CAPACITY * 4,
        ):
            total += -(-size // _ALIGN) * _ALIGN
    return total


__all__ = ["SCRATCH_LIMIT", "scratch_bytes", "select", "top_k_top_p"]
