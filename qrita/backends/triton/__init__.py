"""``backend="triton"``: the Qrita method as Triton kernels (NVIDIA and ROCm).

Serves torch CUDA tensors (and cupy arrays through DLPack).  Under
``TRITON_INTERPRET=1`` the same kernels run on CPU torch tensors; the backend
then declares itself ``simulated`` (tests only, never picked by "auto").
"""

from __future__ import annotations

import functools
import os
import sys

from ...core.spec import GPU_DTYPES
from ..base import Backend, Capabilities, Request, SelectResult


def _interpreted() -> bool:
    return os.environ.get("TRITON_INTERPRET", "") not in ("", "0")


@functools.cache
def _import_reason() -> str | None:
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401
    except ImportError as exc:
        return f'{exc}; install with: pip install "qrita[triton]"'
    return None


MAX_VOCAB = 1 << 23  # the fixed-point mass sums of the search stay inside int64


class TritonBackend(Backend):
    name = "triton"
    # tests and ablations (qrita/backends/triton/launch.py and docs/triton.md's options table)
    option_names = frozenset({
        "truncation", "num_pivots", "miss_pivots", "miss_rounds", "two_cuts", "two_cut_share", "kp_softmax",
        "span", "span_cap", "span_block", "span_warps", "span_layout", "span_prefetch", "cut_pass", "reg_cap",
        "search_warps", "search_maxnreg", "round_block", "round_unroll", "round_warps", "mass_lanes", "value_lanes",
        "sample_lanes", "fold_updates", "fold_finish", "row_rounds", "row_loop", "span_rounds_first", "round_maxnreg",
        "fused_rounds",
        "chain_rounds", "radix_topk", "mask_reverse", "tie_reverse", "round_alternate", "wave_rows", "pdl",
        "append_agg", "append_defer", "scatter", "sample_chunk", "fuse_draw", "fold_ties", "fold_pick",
        "row_programs", "sample_cut", "slot_ties", "sample_wide", "streams", "mask_block", "value_cmp",
    })
    flag_options = frozenset({
        "truncation", "two_cuts", "kp_softmax", "span_prefetch", "cut_pass", "mass_lanes", "value_lanes",
        "sample_lanes", "fold_updates", "fold_finish", "row_rounds", "row_loop", "fused_rounds", "chain_rounds",
        "radix_topk",
        "mask_reverse", "tie_reverse", "round_alternate", "append_defer", "scatter", "fuse_draw", "fold_ties",
        "fold_pick", "slot_ties",
    })

    @property
    def simulated(self) -> bool:  # type: ignore[override]
        return _interpreted()

    @property
    def capabilities(self) -> Capabilities:  # type: ignore[override]
        devices = ("cuda", "cpu") if _interpreted() else ("cuda",)
        return Capabilities(
            devices=devices,
            libs=("torch", "cupy", "numpy") if _interpreted() else ("torch", "cupy"),
            dtypes=GPU_DTYPES,
            install='pip install "qrita[triton]"',
            summary="Triton kernels: fused truncation pass, pivot search, fused masking (NVIDIA and ROCm)",
        )

    def unavailable_reason(self) -> str | None:
        reason = _import_reason()
        if reason is not None:
            return reason
        if _interpreted():
            return None
        import torch

        if not torch.cuda.is_available():
            return (
                "no CUDA/ROCm device visible to torch "
                "(set TRITON_INTERPRET=1 to run the kernels on the CPU, tests only)"
            )
        return None

    def cannot_run(self, req: Request, explicit: bool) -> str | None:
        reason = super().cannot_run(req, explicit)
        if reason is None and req.lib == "numpy" and req.dtype == "bfloat16":
            return "backend 'triton' takes bfloat16 as torch tensors, not ml_dtypes numpy arrays"
        if reason is None and req.V > MAX_VOCAB:
            # top-p masses are summed as 2**-40 fixed-point int64: at most 2**23 terms of weight <= 1
            return (f"backend 'triton' takes V <= {MAX_VOCAB} entries per row, got V={req.V}; "
                    "use backend='auto' (or 'numpy') for wider rows")
        return reason

    def select(self, req: Request) -> SelectResult:
        from .launch import run_select

        return _in_caller_library(req, run_select(_as_torch(req), _torch_request(req)))[0]

    def top_k_top_p(self, req: Request, mask_value: float, out):
        import torch

        from .launch import run_select

        x = _as_torch(req)
        target = x if out is not None else torch.empty_like(x, memory_format=torch.contiguous_format)
        run_select(x, _torch_request(req), mask=(mask_value, target))
        if out is not None:
            return out
        return _to_caller(target, req)

    def stream_states(self, raw, lib: str):
        if lib != "torch" or raw.dtype.itemsize != 8 or not raw.is_contiguous():
            return None
        from .launch import mix_states

        return mix_states(raw)

    def sample(self, req: Request, states):
        import torch

        from .launch import run_sample, run_select

        x = _as_torch(req)
        st = _as_torch(req, states)
        if st.dtype != torch.int64:
            st = st.view(torch.int64)  # uint64 states of a cupy/numpy caller: the same bits
        result, aux = run_select(x, _torch_request(req), states=st)
        return _to_caller(run_sample(x, aux, result.count, st), req)


_LOGITS = object()


def _as_torch(req: Request, a=_LOGITS):
    """``a`` (default: the logits) as a torch tensor sharing memory with the caller's array.

    ``None`` (an absent k or p) stays ``None``: a ``None`` default here once turned
    an absent ``p`` of a cupy caller into the logits themselves.
    """
    import torch

    a = req.logits if a is _LOGITS else a
    if req.lib == "torch" or isinstance(a, (int, float)) or a is None:
        return a
    if req.lib == "cupy":
        return torch.from_dlpack(a)
    return torch.from_numpy(a)


def _torch_request(req: Request) -> Request:
    """The request with per-row k/p as torch tensors (zero-copy from cupy/numpy)."""
    import dataclasses

    if req.lib == "torch":
        return req
    return dataclasses.replace(req, k=_as_torch(req, req.k), p=_as_torch(req, req.p))


def _to_caller(t, req: Request):
    if req.lib == "torch":
        return t
    if req.lib == "cupy":
        return sys.modules["cupy"].from_dlpack(t)
    return t.numpy()


def _in_caller_library(req: Request, packed):
    result, aux = packed
    if req.lib == "torch":
        return result, aux
    return (
        SelectResult(
            threshold=_to_caller(result.threshold, req),
            num_ties=_to_caller(result.num_ties, req),
            count=_to_caller(result.count, req),
            hit=_to_caller(result.hit, req),
        ),
        aux,
    )


BACKEND = TritonBackend()

