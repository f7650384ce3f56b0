"""Every Triton kernel variant compiles for sm_90, sm_80 and AMD's MI300 (gfx942), without a
GPU, in processes of their own (the AMD backend ships in the triton wheel).
``QRITA_COMPILE_TARGETS`` picks other targets, e.g. ``cuda:90`` alone."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("triton")

TARGETS = os.environ.get("QRITA_COMPILE_TARGETS", "cuda:90,cuda:80,hip:gfx942").split(",")


@pytest.mark.skipif(os.environ.get("QRITA_SKIP_COMPILE") == "1", reason="QRITA_SKIP_COMPILE=1")
def test_every_variant_compiles():
    targets = TARGETS
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
