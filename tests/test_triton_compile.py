"""Every Triton kernel variant compiles for sm_90, sm_80 and AMD's MI300 (gfx942), without a
GPU, in processes of their own (the AMD backend ships in the triton wheel).
``QRITA_COMPILE_TARGETS`` picks other targets, e.g. ``cuda:90`` alone.

The compiles take minutes: with a cold Triton cache about 430 s of one core for sm_90, 480 s
for sm_80 and 440 s for gfx942 (fifteenth session, 207 variants a target).  One process a target
starts as soon as this test is collected (``tests/conftest.py`` calls :func:`start`; under
pytest-xdist only in the first worker to get there), so they run beside the simulated tests and
each other, and the test itself only waits for them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid

import pytest

pytest.importorskip("triton")

TARGETS = os.environ.get("QRITA_COMPILE_TARGETS", "cuda:90,cuda:80,hip:gfx942").split(",")
SKIP = os.environ.get("QRITA_SKIP_COMPILE") == "1"
# One folder a pytest run, shared by its xdist workers (their common run id; without xdist a fresh
# one for this process): the first process to create it starts the compiles, whichever worker runs
# the test waits for their exit codes there.
RUN_DIR = os.path.join(tempfile.gettempdir(),
                       f"qrita-compile-{os.environ.get('PYTEST_XDIST_TESTRUNUID') or uuid.uuid4().hex}")
# runs one target's compile check with its output in a log, then writes its exit code (atomically)
_WRAPPER = (
    "import os, subprocess, sys\n"
    "target, log, rc = sys.argv[1:]\n"
    "with open(log, 'w') as f:\n"
    "    code = subprocess.run([sys.executable, '-m', 'qrita.backends.triton.compile_check', target],\n"
    "                          stdout=f, stderr=subprocess.STDOUT).returncode\n"
    "with open(rc + '.tmp', 'w') as f:\n"
    "    f.write(str(code))\n"
    "os.replace(rc + '.tmp', rc)\n"
)


def _files(target: str) -> tuple[str, str]:
    name = target.replace(":", "_")
    return os.path.join(RUN_DIR, name + ".log"), os.path.join(RUN_DIR, name + ".rc")


_STARTED: list = []


def start() -> None:
    """Start the compile processes, one a target, once a run (the process that creates RUN_DIR)."""
    if SKIP or _STARTED:
        return
    _STARTED.append(True)
    try:
        os.makedirs(RUN_DIR)
    except FileExistsError:  # another worker of this run started them
        return
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    for target in TARGETS:
        subprocess.Popen([sys.executable, "-c", _WRAPPER, target, *_files(target)], env=env)


@pytest.mark.skipif(SKIP, reason="QRITA_SKIP_COMPILE=1")
def test_every_variant_compiles():
    start()
    deadline = time.monotonic() + 2400
    reports = {}
    for target in TARGETS:
        log, rc = _files(target)
        while not os.path.exists(rc):
            assert time.monotonic() < deadline, f"{target}: no exit code after 2400 s"
            time.sleep(1)
        with open(log) as f, open(rc) as g:
            reports[target] = (int(g.read()), f.read())
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    for target, (code, report) in reports.items():
        assert code == 0, f"{target}:\n{report}"
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
