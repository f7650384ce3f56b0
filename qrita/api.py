"""The public entry points: ``select``, ``top_k_top_p``, ``top_k``, ``top_p``.

Every argument is validated here, once, before any backend runs or any byte of
the caller's data is written.  Messages name the argument, the constraint and
the value received.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
from typing import Any

import numpy as np

from . import _arrays
from .backends import resolve
from .backends.base import Request
from .core.spec import TIES, TIES_ALL
from .errors import CheckFailedError, QritaTypeError, QritaValueError
from .selection import Selection

_LOGITS_DTYPES = ("float32", "float16", "bfloat16", "float64")


def _check_enabled(check: bool) -> bool:
    return bool(check) or os.environ.get("QRITA_CHECK", "") not in ("", "0")


def _as_rows(logits: Any) -> tuple[Any, str, str, str, bool]:
    """Validate ``logits``; return the 2-D view, library, device, dtype and whether it was 1-D."""
    lib = _arrays.library_of(logits)
    if lib is None:
        raise QritaTypeError(
            f"logits must be a numpy array, a torch tensor or a cupy array, got {type(logits).__name__}"
        )
    if logits.ndim not in (1, 2):
        raise QritaValueError(f"logits must be 2-D [B, V] or 1-D [V], got shape {tuple(logits.shape)}")
    dtype = _arrays.dtype_name(logits, lib)
    if dtype not in _LOGITS_DTYPES:
        raise QritaTypeError(f"logits must have a floating dtype ({', '.join(_LOGITS_DTYPES)}), got {dtype}")
    if logits.shape[-1] == 0:
        raise QritaValueError(f"logits must have V >= 1 entries per row, got shape {tuple(logits.shape)}")
    squeeze = logits.ndim == 1
    rows = logits[None] if squeeze else logits
    return rows, lib, _arrays.device_of(logits, lib), dtype, squeeze


def _convert_array(a: Any, a_lib: str, lib: str, like: Any) -> Any:
    """Move a per-row array into the logits' library (zero-copy where possible, same device)."""
    if a_lib == lib:
        return a
    if lib == "torch":
        torch = sys.modules["torch"]
        return torch.from_numpy(np.asarray(a)) if a_lib == "numpy" else torch.from_dlpack(a)
    if lib == "numpy":
        return (a.float() if a.dtype == sys.modules["torch"].bfloat16 else a).numpy() if a_lib == "torch" else a
    cupy = sys.modules["cupy"]
    return cupy.from_dlpack(a)


def _per_row(name: str, value: Any, B: int, lib: str, device: str, like: Any, integer: bool) -> Any:
    """Validate a scalar or ``[B]`` array argument (``k`` or ``p``)."""
    if value is None:
        return None
    if isinstance(value, bool) or isinstance(value, np.bool_):
        raise QritaTypeError(
            f"{name} must be {'an integer' if integer else 'a number'} or an array [B], got bool {value}"
        )
    zero_d = getattr(value, "ndim", None) == 0 and _arrays.library_of(value) is not None
    if zero_d and _arrays.device_of(value, _arrays.library_of(value)) != "cpu":
        raise QritaTypeError(
            f"{name} must be a Python number or an array [B]={[B]}; a 0-d device array would need a host sync"
        )
    if isinstance(value, numbers.Number) or zero_d:
        scalar = value.item() if zero_d else value
        if integer:
            if isinstance(scalar, numbers.Integral):
                return max(min(int(scalar), 2**62), -(2**62))  # beyond any V, int64-safe
            raise QritaTypeError(
                f"k must be an integer or an integer array [B], got {type(scalar).__name__} {scalar!r}"
            )
        if not isinstance(scalar, numbers.Real):
            raise QritaTypeError(
                f"p must be a real number or a float array [B], got {type(scalar).__name__} {scalar!r}"
            )
        scalar = float(scalar)
        if math.isnan(scalar):
            raise QritaValueError("p must not be NaN (pass p=None or p=1.0 to disable top-p), got nan")
        return scalar
    a_lib = _arrays.library_of(value)
    if a_lib is None:
        kind = "an integer" if integer else "a number"
        raise QritaTypeError(f"{name} must be None, {kind}, or an array [B], got {type(value).__name__}")
    if tuple(value.shape) != (B,):
        raise QritaValueError(f"{name} must have shape [B]=[{B}], got {tuple(value.shape)}")
    a_device = _arrays.device_of(value, a_lib)
    if a_device != device:
        raise QritaValueError(f"{name} must be on the logits' device {device!r}, got {a_device!r}")
    dt = _arrays.dtype_name(value, a_lib)
    if integer and not _arrays.is_integer_dtype(dt):
        raise QritaTypeError(f"k must have an integer dtype, got {dt}")
    if not integer and not _arrays.is_float_dtype(dt):
        raise QritaTypeError(f"p must have a floating dtype, got {dt}")
    value = _convert_array(value, a_lib, lib, like)
    want = "int64" if integer else ("float64" if dt == "float64" else "float32")
    if lib == "torch":
        return value.to(getattr(sys.modules["torch"], want))
    return value.astype(want, copy=False)


def _check_values(req: Request) -> None:
    """``check=True``: values inside arrays (a host sync)."""
    rows = _arrays.host_values_f64(req.logits, req.lib, req.dtype)
    bad = np.argwhere(np.isnan(rows))
    if bad.size:
        b, v = bad[0]
        raise CheckFailedError(f"logits must not contain NaN (check=True), got NaN at row {b}, column {v}")
    if req.k is not None and not isinstance(req.k, int):
        k = _arrays.to_host(req.k, req.lib)
        out = np.flatnonzero((k < 0) | (k > req.V))
        if out.size:
            raise CheckFailedError(
                f"k must be in [0, V]=[0, {req.V}] per row (check=True), got {k[out[0]]} at row {out[0]}"
            )
    if req.p is not None and not isinstance(req.p, float):
        p = _arrays.to_host(req.p, req.lib).astype(np.float64)
        out = np.flatnonzero(~((p >= 0) & (p <= 1)))
        if out.size:
            raise CheckFailedError(f"p must be in [0, 1] per row (check=True), got {p[out[0]]} at row {out[0]}")


def _check_result(req: Request, sel: Selection) -> None:
    """``check=True``: compare the backend's answer with the sort-based oracle."""
    from .reference.checker import check_selection

    values = _arrays.host_values_f64(req.logits, req.lib, req.dtype)
    k = _arrays.per_row_to_host(req.k, req.lib)
    p = _arrays.per_row_to_host(req.p, req.lib)
    p = p if p is None or isinstance(p, float) else p.astype(np.float64)
    thr = np.asarray(_arrays.host_values_f64(sel._threshold, req.lib, req.dtype), dtype=np.float64)
    try:
        check_selection(
            values,
            k,
            p,
            "all" if req.ties == TIES_ALL else "lowest_index",
            thr,
            _arrays.to_host(sel._num_ties, req.lib),
            _arrays.to_host(sel._count, req.lib),
        )
    except AssertionError as exc:
        raise CheckFailedError(f"backend {sel.backend!r} broke the contract (check=True): {exc}") from exc


def make_request(logits, k=None, p=None, *, ties="lowest_index", options=None) -> tuple[Request, bool]:
    """Validate everything and build the backend request; returns ``(request, squeezed)``."""
    rows, lib, device, dtype, squeeze = _as_rows(logits)
    if not isinstance(ties, str) or ties not in TIES:
        raise QritaValueError(f"ties must be one of {', '.join(repr(t) for t in TIES)}, got {ties!r}")
    B, V = int(rows.shape[0]), int(rows.shape[1])
    k = _per_row("k", k, B, lib, device, rows, integer=True)
    p = _per_row("p", p, B, lib, device, rows, integer=False)
    req = Request(
        logits=rows,
        lib=lib,
        device=device,
        dtype=dtype,
        B=B,
        V=V,
        k=k,
        p=p,
        ties=TIES[ties],
        options=dict(options or {}),
    )
    return req, squeeze


def _check_options(req: Request, backend) -> None:
    """Every name in ``options`` must be one the chosen backend reads (a misspelt knob would
    otherwise be ignored silently)."""
    unknown = sorted(set(req.options) - backend.option_names)
    if unknown:
        names = ", ".join(repr(n) for n in unknown)
        verb = "is not an option" if len(unknown) == 1 else "are not options"
        raise QritaValueError(
            f"options: {names} {verb} of backend {backend.name!r}; it takes {', '.join(sorted(backend.option_names))}"
            " (test and ablation knobs: leave options out for the defaults)"
        )
    for name in sorted(backend.flag_options & set(req.options)):
        value = req.options[name]
        if not isinstance(value, (bool, np.bool_)):
            raise QritaValueError(
                f"options[{name!r}] must be True or False (leave it out for the default) for backend"
                f" {backend.name!r}, got {value!r}"
            )


def _make_selection(req: Request, result, backend_name: str, squeeze: bool) -> Selection:
    return Selection(
        result.threshold,
        result.num_ties,
        result.count,
        logits=req.logits,
        lib=req.lib,
        dtype=req.dtype,
        backend=backend_name,
        hit=result.hit,
        squeeze=squeeze,
    )


def select(
    logits, k=None, p=None, *, backend: str = "auto", ties: str = "lowest_index", check: bool = False, options=None
) -> Selection:
    """Find, for every row, the exact set of tokens that top-k and/or top-p keep.

    logits: ``[B, V]`` (or ``[V]``) float32/float16/bfloat16 (float64 on the
        CPU), numpy, torch (CPU/CUDA) or cupy; any strides.
    k: None, an int, or an integer array ``[B]``; ``k <= 0`` or ``k >= V``
        disables top-k on that row.
    p: None, a float, or a float array ``[B]``; ``p >= 1`` (or a per-row NaN)
        disables top-p, ``p <= 0`` keeps the single best token.
    backend: "auto", "triton", "cupy", "numba", "numpy" or "reference".
    ties: "lowest_index" (a stable sort's answer) or "all" (whole boundary tie groups).
    check: validate values inside arrays and compare with the oracle (host sync).
    options: backend knobs for tests and ablations (e.g. ``{"truncation": False}``).

    Returns a :class:`~qrita.selection.Selection` in the logits' library and device.
    """
    req, squeeze = make_request(logits, k, p, ties=ties, options=options)
    chosen = resolve(backend, req)
    _check_options(req, chosen)
    checking = _check_enabled(check)
    if checking:
        _check_values(req)
    sel = _make_selection(req, chosen.select(req), chosen.name, squeeze)
    if checking:
        _check_result(req, sel)
    return sel


def top_k_top_p(
    logits,
    k=None,
    p=None,
    *,
    backend: str = "auto",
    ties: str = "lowest_index",
    mask_value: float = float("-inf"),
    inplace: bool = False,
    check: bool = False,
    options=None,
):
    """Masked logits: every entry that top-k/top-p do not keep becomes ``mask_value``.

    Kept entries keep their exact bits.  With ``inplace=True`` the result is
    written into ``logits``, which is returned.  Arguments as in :func:`select`.
    """
    if not isinstance(mask_value, numbers.Real) or isinstance(mask_value, bool):
        raise QritaTypeError(f"mask_value must be a real number, got {type(mask_value).__name__} {mask_value!r}")
    req, squeeze = make_request(logits, k, p, ties=ties, options=options)
    chosen = resolve(backend, req)
    _check_options(req, chosen)
    checking = _check_enabled(check)
    if checking:
        _check_values(req)
    if not checking:
        out = req.logits if inplace else None
        fused = chosen.top_k_top_p(req, float(mask_value), out)
        if fused is not None:
            if inplace:
                return logits
            return fused[0] if squeeze else fused
    sel = _make_selection(req, chosen.select(req), chosen.name, squeeze)
    if checking:
        _check_result(req, sel)
    result = sel.apply(req.logits, mask_value=float(mask_value), inplace=inplace)
    return logits if inplace else result


def top_k(logits, k, **kwargs):
    """``top_k_top_p(logits, k=k, p=None, **kwargs)``."""
    return top_k_top_p(logits, k=k, p=None, **kwargs)


def top_p(logits, p, **kwargs):
    """``top_k_top_p(logits, k=None, p=p, **kwargs)``."""
    return top_k_top_p(logits, k=None, p=p, **kwargs)
