"""Array-library plumbing: which library an array comes from, its device and
dtype, and the few operations the generic (non-kernel) paths need.

qrita answers in the caller's library and on the caller's device.  Nothing here
imports torch or cupy at module import time; they are looked up only when an
array of theirs arrives (``sys.modules`` tells us they are already loaded).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

LIBS = ("numpy", "torch", "cupy")


def library_of(x: Any) -> str | None:
    """'numpy', 'torch', 'cupy', or None for anything else."""
    if isinstance(x, np.ndarray):
        return "numpy"
    mod = type(x).__module__.split(".", 1)[0]
    if mod == "torch" and "torch" in sys.modules and isinstance(x, sys.modules["torch"].Tensor):
        return "torch"
    if mod == "cupy" and "cupy" in sys.modules and isinstance(x, sys.modules["cupy"].ndarray):
        return "cupy"
    return None


def device_of(x: Any, lib: str) -> str:
    """'cpu' or 'cuda:N'."""
    if lib == "numpy":
        return "cpu"
    if lib == "torch":
        return str(x.device) if x.device.type != "cuda" else f"cuda:{x.device.index}"
    return f"cuda:{x.device.id}"


def dtype_name(x: Any, lib: str) -> str:
    """'float32', 'bfloat16', 'int64', ... (library prefix stripped)."""
    if lib == "torch":
        return str(x.dtype).replace("torch.", "")
    return np.dtype(x.dtype).name if lib == "numpy" else x.dtype.name


def is_integer_dtype(name: str) -> bool:
    return name.startswith(("int", "uint"))


def is_float_dtype(name: str) -> bool:
    return name in ("float16", "bfloat16", "float32", "float64")


def module(lib: str):
    """The library's module (numpy, torch or cupy)."""
    if lib == "numpy":
        return np
    import importlib

    return importlib.import_module(lib)


# ---- conversions between the caller's library and numpy (CPU only) -----------------


def to_numpy_values(x: Any, lib: str, dtype: str) -> np.ndarray:
    """A numpy view (or copy) of a CPU array; bfloat16 comes back as its uint16 bits."""
    if lib == "numpy":
        if dtype == "bfloat16":
            return x.view(np.uint16)
        return x
    if lib == "torch":
        if dtype == "bfloat16":
            torch = sys.modules["torch"]
            return x.view(torch.int16).numpy().view(np.uint16)
        return x.numpy()
    raise TypeError(f"cannot view a {lib} array as numpy")  # pragma: no cover


def from_numpy(a: np.ndarray, lib: str, like: Any = None) -> Any:
    """Wrap a numpy result in the caller's library on the CPU."""
    if lib == "numpy":
        return a
    if lib == "torch":
        return sys.modules["torch"].from_numpy(np.ascontiguousarray(a))
    raise TypeError(f"cannot return numpy data as {lib}")  # pragma: no cover


def asarray_like(values, like: Any, lib: str, dtype: str):
    """A new array of ``values`` (a Python/numpy object) in ``like``'s library and device."""
    if lib == "numpy":
        return np.asarray(values, dtype=dtype)
    if lib == "torch":
        torch = sys.modules["torch"]
        return torch.as_tensor(np.asarray(values), dtype=getattr(torch, dtype), device=like.device)
    cupy = sys.modules["cupy"]
    with cupy.cuda.Device(like.device.id):
        return cupy.asarray(np.asarray(values), dtype=dtype)


def to_host(a: Any, lib: str) -> np.ndarray:
    """Copy any array to a numpy array (a host sync for device arrays)."""
    if lib == "numpy":
        return a
    if lib == "torch":
        torch = sys.modules["torch"]
        if a.dtype == torch.bfloat16:
            return a.detach().float().cpu().numpy()
        return a.detach().cpu().numpy()
    return a.get()


def per_row_to_host(value: Any, lib: str) -> Any:
    """A scalar (or None) ``k``/``p`` stays as it is; a per-row array becomes numpy (a sync on GPU)."""
    if value is None or isinstance(value, (int, float)):
        return value
    return to_host(value, lib)


def host_values_f64(x: Any, lib: str, dtype: str) -> np.ndarray:
    """The exact values of ``x`` as a float64 numpy array (bf16/fp16/fp32 are exact in float64)."""
    if lib == "torch" and dtype == "bfloat16":
        return x.detach().float().cpu().numpy().astype(np.float64)
    if lib == "numpy" and dtype == "bfloat16":
        from .core.keys import float_from_bits

        return float_from_bits(x.view(np.uint16), "bfloat16").astype(np.float64)
    return np.asarray(to_host(x, lib), dtype=np.float64)


def values_from_bits_numpy(bits: np.ndarray, lib: str, dtype: str, like: Any) -> Any:
    """An array of ``dtype`` values in the caller's CPU library from raw unsigned bits."""
    if dtype == "bfloat16":
        if lib == "numpy":
            return bits.astype(np.uint16).view(like.dtype)
        torch = sys.modules["torch"]
        return torch.from_numpy(bits.astype(np.uint16).view(np.int16)).view(torch.bfloat16)
    host = bits.view(np.dtype(dtype))
    return from_numpy(host, lib)
