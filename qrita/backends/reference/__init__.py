"""``backend="reference"``: the sort-based oracle behind the backend interface.

Slow (a stable sort per row) and exact by definition; useful as a baseline and
as a last resort on the CPU.  "auto" only reaches it when no pivot backend can
serve the request.
"""

from __future__ import annotations

import numpy as np

from ... import _arrays
from ...core.spec import CPU_DTYPES, TIES_ALL
from ...reference import oracle_select
from ..base import Backend, Capabilities, Request, SelectResult


def _bits_of_values(values: np.ndarray, dtype: str) -> np.ndarray:
    """Raw bits of float64 values that are exactly representable in ``dtype``."""
    if dtype == "bfloat16":
        return (values.astype(np.float32).view(np.uint32) >> np.uint32(16)).astype(np.uint16)
    return values.astype(dtype).view(f"uint{np.dtype(dtype).itemsize * 8}")


class ReferenceBackend(Backend):
    name = "reference"
    capabilities = Capabilities(
        devices=("cpu",),
        libs=("numpy", "torch"),
        dtypes=CPU_DTYPES,
        install="included with qrita",
        summary="the sort-based oracle (a stable argsort per row); exact by definition, slow",
    )

    def select(self, req: Request) -> SelectResult:
        values = _arrays.host_values_f64(req.logits, req.lib, req.dtype)
        k = req.k if req.k is None or isinstance(req.k, int) else _arrays.to_host(req.k, req.lib)
        p = req.p if req.p is None or isinstance(req.p, float) else _arrays.to_host(req.p, req.lib)
        res = oracle_select(values, k, p, ties="all" if req.ties == TIES_ALL else "lowest_index")
        bits = _bits_of_values(res.threshold, req.dtype)
        return SelectResult(
            threshold=_arrays.values_from_bits_numpy(bits, req.lib, req.dtype, req.logits),
            num_ties=_arrays.from_numpy(res.num_ties.astype(np.int32), req.lib),
            count=_arrays.from_numpy(res.count.astype(np.int32), req.lib),
        )


BACKEND = ReferenceBackend()
