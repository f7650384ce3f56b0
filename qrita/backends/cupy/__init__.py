"""``backend="cupy"``: the Qrita method as raw CUDA C++ kernels (``cupy.RawModule``).

Takes torch CUDA tensors and cupy arrays (float32, float16, bfloat16; any
strides), zero-copy, on the caller's current stream, and answers in the
caller's library.  The kernels (``kernels.cu``) compile with the preamble that
:mod:`qrita.core.cgen` generates from the spec; modules are cached per device
and keyed by the spec fingerprint.  The source also builds under HIP (CuPy's
ROCm builds use hiprtc); see ``docs/porting.md``.

cupy is imported only inside functions, so the registry can import this
module (and report why it cannot run) on a machine without cupy.
"""

from __future__ import annotations

import functools

from ...core.spec import GPU_DTYPES
from ..base import Backend, Capabilities, Request, SelectResult

INSTALL = 'pip install "qrita[cupy]"'


@functools.cache
def _unavailable_reason() -> str | None:
    try:
        import cupy
    except ImportError as exc:
        return (
            f"cupy is not installed ({exc}); install it with {INSTALL} (or the cupy wheel of your CUDA: cupy-cuda12x)"
        )
    except Exception as exc:  # a broken CUDA setup
        return f"cupy failed to import ({type(exc).__name__}: {exc}); fix the CUDA install or reinstall with {INSTALL}"
    try:
        n = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as exc:  # CUDARuntimeError: no driver, no device
        return f"cupy found no usable CUDA device ({exc}); the cupy backend needs a CUDA (or ROCm) GPU and its driver"
    if n == 0:
        return "cupy found no CUDA device; the cupy backend needs a CUDA (or ROCm) GPU"
    return None


class CupyBackend(Backend):
    name = "cupy"
    option_names = frozenset({"truncation", "split", "fast_paths", "second_cut", "cluster"})
    flag_options = frozenset({"truncation", "fast_paths", "second_cut", "cluster"})
    capabilities = Capabilities(
        devices=("cuda",),
        libs=("torch", "cupy"),
        dtypes=GPU_DTYPES,
        install=INSTALL,
        summary="raw CUDA C++ kernels through cupy.RawModule (source ready for HIP)",
    )

    def unavailable_reason(self) -> str | None:
        return _unavailable_reason()

    def cannot_run(self, req: Request, explicit: bool) -> str | None:
        reason = super().cannot_run(req, explicit)
        if reason is not None:
            return reason
        if req.V >= 2**31:
            return f"backend 'cupy' takes rows of fewer than 2**31 entries, got V={req.V}"
        return None

    def select(self, req: Request) -> SelectResult:
        from . import _launch

        return _launch.select(req)

    def top_k_top_p(self, req: Request, mask_value: float, out):
        from . import _launch

        return _launch.top_k_top_p(req, mask_value, out)


BACKEND = CupyBackend()
