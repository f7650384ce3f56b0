"""``backend="numpy"``: the Qrita algorithm on the CPU (numpy arrays and torch CPU tensors)."""

from __future__ import annotations

import numpy as np

from ... import _arrays
from ...core.keys import float_from_bits
from ...core.spec import CPU_DTYPES
from ..base import Backend, Capabilities, Request, SelectResult
from .select import select_rows


def host_rows(req: Request) -> tuple[np.ndarray, np.ndarray]:
    """``(bits, values)`` of a CPU request: raw unsigned bits and exact float32/float64 values."""
    raw = _arrays.to_numpy_values(req.logits, req.lib, req.dtype)
    if req.dtype == "bfloat16":
        bits = raw
    else:
        bits = raw.view(f"uint{raw.itemsize * 8}")  # same itemsize: valid for any strides
    if req.dtype in ("float32", "float64"):
        vals = bits.view(req.dtype)
    else:
        vals = float_from_bits(bits, req.dtype)
    return bits, vals


class NumpyBackend(Backend):
    name = "numpy"
    option_names = frozenset({"truncation", "num_pivots"})
    capabilities = Capabilities(
        devices=("cpu",),
        libs=("numpy", "torch"),
        dtypes=CPU_DTYPES,
        install="included with qrita",
        summary="the Qrita pivot search in vectorised NumPy; the default without a GPU",
    )

    def select(self, req: Request) -> SelectResult:
        bits, vals = host_rows(req)
        thr_bits, num_ties, count, hit = select_rows(
            bits,
            vals,
            req.dtype,
            _arrays.per_row_to_host(req.k, req.lib),
            _arrays.per_row_to_host(req.p, req.lib),
            req.ties,
            req.options,
        )
        threshold = _arrays.values_from_bits_numpy(thr_bits, req.lib, req.dtype, req.logits)
        return SelectResult(
            threshold=threshold,
            num_ties=_arrays.from_numpy(num_ties, req.lib),
            count=_arrays.from_numpy(count, req.lib),
            hit=_arrays.from_numpy(hit, req.lib),
        )


BACKEND = NumpyBackend()
