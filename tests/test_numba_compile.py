"""Every Numba-CUDA kernel compiles for sm_90 with NVVM, without a GPU, in a process of its own.

The simulator runs the kernels as Python and accepts code that Numba cannot compile for a GPU (a
shared array whose shape is an expression, say), so the conformance suite under
``NUMBA_ENABLE_CUDASIM=1`` cannot show that the real kernels build; this test runs
``python -m qrita.backends.numba.compile_check`` without the simulator.  It needs numba-cuda and the
CUDA toolkit's ``libnvvm`` and NVRTC (no driver, no GPU)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("numba")
pytest.importorskip("numba.cuda")


def _toolkit_reason() -> str | None:
    """None when numba-cuda finds the toolkit libraries it compiles with (libnvvm, NVRTC), else why not."""
    code = "from numba.cuda.cuda_paths import get_cuda_paths; p = get_cuda_paths()['nvvm']; print(p.info or '')"
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if res.returncode != 0 or not res.stdout.strip():
        last = (res.stderr.strip().splitlines() or ["no libnvvm path"])[-1][:200]
        return f"numba-cuda cannot find its CUDA toolkit libraries ({last}): install the toolkit or nvidia-cuda-nvrtc"
    return None


def test_every_numba_kernel_compiles_for_sm_90():
    reason = _toolkit_reason()
    if reason:
        pytest.skip(reason)
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    res = subprocess.run([sys.executable, "-m", "qrita.backends.numba.compile_check", "--cc", "9.0"],
                         capture_output=True, text=True, env=env, timeout=900)
    report = res.stdout + res.stderr
    assert res.returncode == 0, report
    assert report.count("ok ") >= 15 and "FAILED" not in report, report
