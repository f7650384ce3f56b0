"""Every Triton kernel variant compiles for sm_80 and sm_90 (and gfx942 when the AMD
backend is present), without a GPU, in processes of their own."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("triton")

TARGETS = ["cuda:90", "cuda:80"]


def _has_amd_backend() -> bool:
    try:
        from triton.backends import backends
    except ImportError:
        return False
    return "amd" in backends


@pytest.mark.skipif(os.environ.get("QRITA_SKIP_COMPILE") == "1", reason="QRITA_SKIP_COMPILE=1")
def test_every_variant_compiles():
    targets = TARGETS + (["hip:gfx942"] if _has_amd_backend() else [])
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    procs = [
        subprocess.Popen([sys.executable, "-m", "qrita.backends.triton.compile_check", t], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for t in targets
    ]
    outputs = [p.communicate(timeout=1500)[0] for p in procs]
    report = "\n".join(outputs)
    assert all(p.returncode == 0 for p in procs), report
    assert report.count("ok ") >= 12 * len(targets), report
