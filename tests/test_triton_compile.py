"""Triton kernel variants compile for sm_90, sm_80 and AMD's MI300 (gfx942), without a GPU, in
processes of their own (the AMD backend ships in the triton wheel).  ``QRITA_COMPILE_TARGETS`` picks
other targets, e.g. ``cuda:90`` alone.

sm_90, the primary target, compiles every variant (310 now, in ``PRIMARY_SHARDS`` processes of
interleaved halves), and the contracted-reduction check of its PTX runs on each of them.  sm_80 and
gfx942 compile the representative subset of ``compile_check --subset`` (49 now: every kernel once per
dtype, every value of every constexpr and of the warp count once): a lowering a target lacks fails on a
feature, and every combination of features compiles for sm_90.  ``QRITA_COMPILE_ALL=1`` compiles every
variant for every target.  With a cold Triton cache, one core a target: sm_90 580 s at 250
variants (session 41, alone on the machine; about 2.4 s a variant, 7-15 s for the folded and
row-mode rounds), the sm_80 and gfx942 subsets 72 and 61 s (session 23).  The processes start as soon as this
test is collected (``tests/conftest.py`` calls :func:`start`; under pytest-xdist only in the first
worker to get there), so they run beside the simulated tests and each other, and the test itself only
waits for them."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import types
import uuid

import pytest

pytest.importorskip("triton")

TARGETS = os.environ.get("QRITA_COMPILE_TARGETS", "cuda:90,cuda:80,hip:gfx942").split(",")
PRIMARY = "cuda:90"  # every variant; the other targets a representative subset unless QRITA_COMPILE_ALL=1
ALL = os.environ.get("QRITA_COMPILE_ALL") == "1"
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
    "    code = subprocess.run([sys.executable, '-m', 'qrita.backends.triton.compile_check', *target.split()],\n"
    "                          stdout=f, stderr=subprocess.STDOUT).returncode\n"
    "with open(rc + '.tmp', 'w') as f:\n"
    "    f.write(str(code))\n"
    "os.replace(rc + '.tmp', rc)\n"
)


# the primary target's variants in this many interleaved shards, a process each (``compile_check --shard``), so
# that its compile, the longest of the three, can take both cores once the simulated tests end.  Session 34's
# cold-cache CI measured no change (735 s of triton pytest; both cores stayed busy to the end), so this only
# helps where the compile is the critical path (QRITA_COMPILE_ALL=1, or a faster interpreter)
PRIMARY_SHARDS = 2


def _jobs() -> list[str]:
    """The compile processes' arguments: the primary target in shards, the others whole."""
    jobs = []
    for target in TARGETS:
        shards = PRIMARY_SHARDS if target == PRIMARY else 1
        jobs += [_args(target) if shards == 1 else f"--shard {i}/{shards} {_args(target)}" for i in range(shards)]
    return jobs


def _files(job: str) -> tuple[str, str]:
    name = job.replace(":", "_").replace("/", "of").replace("--", "").replace(" ", "_")
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
    for job in _jobs():
        subprocess.Popen([sys.executable, "-c", _WRAPPER, job, *_files(job)], env=env)


def _args(target: str) -> str:
    return target if ALL or target == PRIMARY else "--subset " + target


@pytest.mark.skipif(SKIP, reason="QRITA_SKIP_COMPILE=1")
def test_every_variant_compiles():
    start()
    deadline = time.monotonic() + 2400
    reports = {}
    for job in _jobs():
        log, rc = _files(job)
        while not os.path.exists(rc):
            assert time.monotonic() < deadline, f"{job}: no exit code after 2400 s"
            time.sleep(1)
        with open(log) as f, open(rc) as g:
            reports[job] = (int(g.read()), f.read())
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    for job, (code, report) in reports.items():
        assert code == 0, f"{job}:\n{report}"
        assert report.count("ok ") >= 12, f"{job}:\n{report}"
        assert ("a representative subset" in report) == ("--subset" in job), f"{job}:\n{report}"
        assert ("--shard" in job) == (" shard " in report), f"{job}:\n{report}"
    # the primary target's shards together compiled every variant once
    primary = [report for job, (_, report) in reports.items() if job.endswith(PRIMARY)]
    names = [line.split(None, 2)[2].rsplit(None, 1)[0] for report in primary for line in report.splitlines()
             if line.startswith("ok ")]
    totals = {int(m) for report in primary for m in re.findall(r" shard \d+ of \d+, \d+ of (\d+) variants", report)}
    assert len(names) == len(set(names)), "a variant compiled in two shards"
    assert totals <= {len(names)}, f"the shards compiled {len(names)} of {totals} variants"


class _Src:
    """What representative reads of an ASTSource."""

    def __init__(self, fn: str, **constexprs):
        self.fn = types.SimpleNamespace(__name__=fn)
        self.signature = {"x_ptr": "*fp32", **{name: "constexpr" for name in constexprs}}
        self.constants = {(i + 1,): value for i, value in enumerate(constexprs.values())}


def test_the_representative_subset_covers_every_kernel_dtype_and_flag_value():
    """compile_check --subset: every kernel once per dtype, every constexpr value and warp count of a
    kernel once, fewer variants than the whole set, the same picks on every run, in the list's order."""
    from qrita.backends.triton.compile_check import representative

    entries = [(dtype, f"{fn}[{dtype}, a={a}, b={b}]", _Src(fn, A=a, B=b), warps)
               for dtype in ("float32", "float16", "bfloat16")
               for fn, warps in (("k1", 4), ("k2", 8))
               for a in (0, 1, 2) for b in (False, True)]
    entries.append(("float32", "k2[float32, a=0, b=False, 1 warp]", _Src("k2", A=0, B=False), 1))
    subset = representative(entries)
    assert subset == representative(entries) and len(subset) < len(entries) // 2
    assert [entries.index(e) for e in subset] == sorted(entries.index(e) for e in subset)
    names = [name for _, name, _, _ in subset]
    for fn in ("k1", "k2"):
        for dtype in ("float32", "float16", "bfloat16"):
            assert any(name.startswith(f"{fn}[{dtype}") for name in names)
        for flag in ("a=0", "a=1", "a=2", "b=False", "b=True"):
            assert any(name.startswith(fn) and flag in name for name in names), (fn, flag)
    assert "k2[float32, a=0, b=False, 1 warp]" in names


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
