"""``backend="reference"``: the sort-based oracle behind the backend interface.

Slow (a stable sort per row) and exact by definition; useful as a baseline and
as a last resort on the CPU.  "auto" only reaches it when no pivot backend can
serve the request.
"""

from __future__ import annotations

import numpy as np

from ... import _arrays
from ...core.keys import bits_of_values
from ...core.spec import CPU_DTYPES, TIES_ALL
from ...reference import oracle_select
from ..base import Backend, Capabilities, Request, SelectResult


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
        k = _arrays.per_row_to_host(req.k, req.lib)
        p = _arrays.per_row_to_host(req.p, req.lib)
        res = oracle_select(values, k, p, ties="all" if req.ties == TIES_ALL else "lowest_index")
        bits = bits_of_values(res.threshold, req.dtype)
        return SelectResult(
            threshold=_arrays.values_from_bits_numpy(bits, req.lib, req.dtype, req.logits),
            num_ties=_arrays.from_numpy(res.num_ties.astype(np.int32), req.lib),
            count=_arrays.from_numpy(res.count.astype(np.int32), req.lib),
        )


BACKEND = ReferenceBackend()
