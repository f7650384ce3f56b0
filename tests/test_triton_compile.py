"""Every Triton kernel variant compiles for sm_90, sm_80 and AMD's MI300 (gfx942), without a
GPU, in processes of their own (the AMD backend ships in the triton wheel).
``QRITA_COMPILE_TARGETS`` picks other targets, e.g. ``cuda:90`` alone.

The compiles take minutes: with a cold Triton cache about 430 s of one core for sm_90, 480 s
for sm_80 and 440 s for gfx942 (fifteenth session, 207 variants a target).  One process a target
starts as soon as this test is collected (``tests/conftest.py`` calls :func:`start`), so they run
beside the single-threaded simulated tests and each other, and the test itself only waits for
them."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import pytest

pytest.importorskip("triton")

TARGETS = os.environ.get("QRITA_COMPILE_TARGETS", "cuda:90,cuda:80,hip:gfx942").split(",")
SKIP = os.environ.get("QRITA_SKIP_COMPILE") == "1"
_RUN: dict = {}


def start() -> None:
    """Start the compile processes (once): one a target."""
    if SKIP or "runs" in _RUN:
        return
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    _RUN["runs"] = []
    for target in TARGETS:
        log = tempfile.TemporaryFile(mode="w+")
        proc = subprocess.Popen([sys.executable, "-m", "qrita.backends.triton.compile_check", target],
                                env=env, stdout=log, stderr=subprocess.STDOUT, text=True)
        _RUN["runs"].append((target, proc, log))


@pytest.mark.skipif(SKIP, reason="QRITA_SKIP_COMPILE=1")
def test_every_variant_compiles():
    start()
    for target, proc, log in _RUN["runs"]:
        proc.wait(timeout=2400)
        log.seek(0)
        report = log.read()
        assert proc.returncode == 0, f"{target}:\n{report}"
        assert report.count("ok ") >= 12, f"{target}:\n{report}"


PTX_CONTRACTED = """
\t.loc\t1 938 59                        // kernels.py:938:59
\tmul.f32 \t%r191, %r11, %r95;
\t.loc\t2 293 36                        // standard.py:293:36 @[ kernels.py:938:19 ]
\tshfl.sync.bfly.b32 \t%r192, %r191, 4, 31, -1;
\tfma.rn.f32 \t%r193, %r11, %r95, %r192;
\tshfl.sync.bfly.b32 \t%r194, %r193, 2, 31, -1;
\tadd.f32 \t%r195, %r193, %r194;
"""


def test_a_contracted_tree_reduction_is_found_in_ptx():
    """The guard of compile_check: an FMA whose addend came from a lane shuffle (lanes round a
    product differently) is reported with its source line; plain adds and FMAs are not."""
    from qrita.backends.triton.compile_check import contracted_shuffles

    assert contracted_shuffles(PTX_CONTRACTED) == ["standard.py:293:36 @[ kernels.py:938:19 ]"]
    clean = PTX_CONTRACTED.replace("fma.rn.f32 \t%r193, %r11, %r95, %r192;", "add.f32 \t%r193, %r191, %r192;")
    assert contracted_shuffles(clean) == []
    own = PTX_CONTRACTED.replace("fma.rn.f32 \t%r193, %r11, %r95, %r192;", "fma.rn.f32 \t%r193, %r11, %r95, %r191;")
    assert contracted_shuffles(own) == []
