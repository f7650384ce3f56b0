"""``backend="numba"``: the Qrita method as Numba-CUDA kernels (``docs/numba.md``).

The scalar steps of the pivot-search state machine are the portable functions of
:mod:`qrita.core.search`, compiled as ``cuda.jit(device=True)`` functions; the
kernels live in :mod:`.kernels` and the launch plumbing in :mod:`.launch`.

Importing this module imports no GPU library: Numba is loaded on the first
:meth:`NumbaBackend.unavailable_reason` or :meth:`NumbaBackend.select`.

With ``NUMBA_ENABLE_CUDASIM=1`` in the process environment, the same kernels run
in Numba's CUDA simulator on the CPU (tests only): the backend is then
``simulated`` and takes numpy arrays and torch CPU tensors when named explicitly.
"""

from __future__ import annotations

import importlib.util
import os
import sys

from ...core.spec import GPU_DTYPES
from ..base import Backend, Capabilities, Request, SelectResult

INSTALL = 'pip install "qrita[numba]"'


def _simulator_requested() -> bool:
    """Whether Numba runs (or will run) its CUDA simulator in this process."""
    numba = sys.modules.get("numba")
    if numba is not None and hasattr(numba, "config"):
        return bool(getattr(numba.config, "ENABLE_CUDASIM", 0))
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0").strip() not in ("", "0")


# the callers' libraries whose masking is fused by default on a GPU: torch since the thirteenth session
# (test_gpu_fused_mask_matches_selection_apply), cupy since the fifteenth (test_gpu_fused_mask_of_cupy_arrays,
# fp32 and fp16, passed on the H200: docs/bench/h200-2026-12-02/session15/ call B)
FUSED_MASK_LIBS = ("torch", "cupy")


class NumbaBackend(Backend):
    name = "numba"
    option_names = frozenset({"truncation", "split", "capacity", "fused_mask", "wide_miss", "wide_buffer",
                              "rank_select", "split_wide", "split_wide_rounds", "two_cuts",
                              "rank_weighted", "split_wide_fold", "rank_live", "cut_groups",
                              "mask_loads", "pairs", "pairs_select", "cut_in_mask", "split_waves", "rank_groups",
                              "kp_mass", "kp_rank", "scan_prefetch", "tie_index", "mask_counts",
                              "mask_blocks"})
    flag_options = frozenset({"truncation", "fused_mask", "wide_miss", "wide_buffer", "rank_select", "split_wide",
                              "two_cuts", "rank_weighted", "split_wide_fold", "cut_groups", "mask_loads",
                              "pairs", "pairs_select", "cut_in_mask",
                              "split_waves", "rank_groups", "kp_mass", "kp_rank", "scan_prefetch", "tie_index",
                              "mask_counts"})

    def __init__(self) -> None:
        self.simulated = _simulator_requested()
        if self.simulated:
            devices, libs = ("cpu",), ("numpy", "torch")
            summary = "Numba-CUDA kernels running in Numba's CUDA simulator (tests only)"
        else:
            devices, libs = ("cuda",), ("torch", "cupy", "numba")
            summary = "the Qrita pivot search as Numba-CUDA kernels; core state machine as device functions"
        self.capabilities = Capabilities(
            devices=devices, libs=libs, dtypes=GPU_DTYPES, install=INSTALL, summary=summary
        )
        self._reason: str | None | bool = False  # False: not checked yet

    def unavailable_reason(self) -> str | None:
        if self._reason is False:
            self._reason = self._check()
        return self._reason

    def _check(self) -> str | None:
        if importlib.util.find_spec("numba") is None or importlib.util.find_spec("numba_cuda") is None:
            return f"numba-cuda is not installed: {INSTALL}"
        try:
            from numba import cuda
        except Exception as exc:  # a broken install
            return f"cannot import numba.cuda ({exc}): {INSTALL}"
        if self.simulated:
            return None
        try:
            available = cuda.is_available()
        except Exception as exc:  # pragma: no cover - driver trouble
            return f"no CUDA device: numba-cuda cannot use the driver ({exc})"
        if not available:
            return (
                "no CUDA device: numba-cuda found no GPU; set NUMBA_ENABLE_CUDASIM=1 to run the kernels "
                "in the simulator (tests only)"
            )
        return None

    def select(self, req: Request) -> SelectResult:
        from .launch import run_select

        return run_select(req)

    def top_k_top_p(self, req: Request, mask_value: float, out):
        """Fused masking (no ``[B, V]`` scratch).  On a GPU it is the default for torch
        tensors and cupy arrays, the inputs its H200 checks ran on (docs/numba.md); numba
        device arrays keep the generic ``Selection.apply`` path, and
        ``options={"fused_mask": ...}`` chooses either way (the simulator always fuses)."""
        if not self.simulated and not req.options.get("fused_mask", req.lib in FUSED_MASK_LIBS):
            return None
        from .launch import run_mask

        return run_mask(req, mask_value, out)


BACKEND = NumbaBackend()
