"""Developer and CI sessions.  ``nox -l`` lists them; ``nox`` runs the defaults (lint, tests).

Every session builds its own virtual environment with the standard library's
``venv``.  torch is pinned to 2.13.0: that CPU wheel is what the CI machines
install quickly; any other version is a multi-GB download.  Per-session
environment variables (interpreters, simulators, backend filters) are set here
and nowhere in the tests.
"""

from __future__ import annotations

import os
from pathlib import Path

import nox

nox.options.default_venv_backend = "venv"
nox.options.sessions = ["lint", "tests"]
nox.options.error_on_missing_interpreters = True

ROOT = Path(__file__).parent
TORCH = "torch==2.13.0"
RUFF = "ruff==0.17.6"
TRITON = "triton==3.9.0"
XDIST = "pytest-xdist==3.8.0"
# The NVRTC compile check of the cupy backend needs cupy and NVRTC, no GPU.
CUPY = ("cupy-cuda13x", "nvidia-cuda-nvrtc")
# Numpy has no bfloat16; ml_dtypes adds one, so the numpy-bf16 tests run instead of skipping.
TEST_EXTRAS = ("ml_dtypes",)
# Simulated backends and the CPU suite must not leak into each other through the caller's shell.
NO_SIMULATORS = {"TRITON_INTERPRET": "0", "NUMBA_ENABLE_CUDASIM": "0", "QRITA_TEST_BACKENDS": "", "QRITA_CHECK": ""}
# A simulated call costs seconds: few Hypothesis examples and one parametrisation per test
# unless the caller asks for more (``QRITA_TEST_SIM_VARIANTS=all nox -s triton`` runs the whole grid).
SIMULATOR = {
    "QRITA_HYPOTHESIS_PROFILE": os.environ.get("QRITA_HYPOTHESIS_PROFILE", "sim"),
    "QRITA_TEST_SIM_VARIANTS": os.environ.get("QRITA_TEST_SIM_VARIANTS", "1"),
}


def _pytest(session: nox.Session, *default_args: str, env: dict[str, str] | None = None) -> None:
    args = session.posargs or list(default_args)
    session.run("pytest", *args, env={"QRITA_HYPOTHESIS_PROFILE": "ci", **(env or {})})


def _tests_for(prefix: str) -> list[str]:
    """Backend-specific test files that exist (others add them as their backend grows)."""
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").glob(f"test_{prefix}*.py"))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff check over the whole repository (``build/`` excluded even outside a git checkout)."""
    session.install(RUFF)
    session.run("ruff", "check", "--extend-exclude", "build", ".")


@nox.session
def tests(session: nox.Session) -> None:
    """The CPU test suite: the numpy and reference backends, core, oracle, API, errors, CLI.

    GPU backends that cannot run here are reported as skips with their reason;
    ``-m gpu`` tests skip without a CUDA device.  Pass pytest arguments after
    ``--``, e.g. ``nox -s tests -- tests/test_core.py -x``.
    """
    session.install(TORCH, ".[test,bench]", XDIST, *TEST_EXTRAS)  # bench: the harness's own tests plot
    _pytest(session, "-q", "-n", "2", "tests", env=NO_SIMULATORS)


@nox.session
def triton(session: nox.Session) -> None:
    """The Triton backend under the interpreter (TRITON_INTERPRET=1) on CPU tensors: conformance and properties.

    The interpreter runs one core a process: the tests run in two pytest-xdist workers (about 500 s
    of one core in all), beside the AOT compile check's processes (``tests/test_triton_compile.py``:
    every variant for sm_90, a representative subset for sm_80 and gfx942, about 900 s of one core with
    a cold cache: 580 s for sm_90's 250 variants in session 41, 310 since; ``QRITA_COMPILE_ALL=1`` compiles
    every variant for all three).
    """
    session.install(TORCH, TRITON, ".[test]", XDIST, *TEST_EXTRAS)
    env = {**NO_SIMULATORS, **SIMULATOR, "TRITON_INTERPRET": "1", "QRITA_TEST_BACKENDS": "triton"}
    # the backend's own tests first: its longest tests (40-80 s each) start early and the short conformance tests
    # fill the end, so neither worker idles long while the other finishes; the compile check (it waits for its
    # processes) last
    files = _tests_for("triton")
    compile_check = [f for f in files if f.endswith("test_triton_compile.py")]
    first = [f for f in files if f not in compile_check]
    _pytest(session, "-q", "-n", "2", *first, "tests/test_conformance.py", "tests/test_properties.py", *compile_check,
            env=env)


@nox.session
def numba(session: nox.Session) -> None:
    """The Numba-CUDA backend in the CUDA simulator (NUMBA_ENABLE_CUDASIM=1): conformance and properties,
    in two pytest-xdist workers; and every kernel compiled for sm_90 by NVVM in a process of its own
    (``tests/test_numba_compile.py``; skipped without the CUDA toolkit's libnvvm)."""
    # numba-cuda looks up NVRTC beside libnvvm before it compiles; a toolkit without it (this CI machine's)
    # gets it from the wheel
    session.install(TORCH, ".[test,numba]", XDIST, "nvidia-cuda-nvrtc", *TEST_EXTRAS)
    env = {**NO_SIMULATORS, **SIMULATOR, "NUMBA_ENABLE_CUDASIM": "1", "QRITA_TEST_BACKENDS": "numba"}
    _pytest(session, "-q", "-n", "2", "tests/test_conformance.py", "tests/test_properties.py", *_tests_for("numba"),
            env=env)


@nox.session
def cupy(session: nox.Session) -> None:
    """Compile every CuPy kernel instantiation with NVRTC (no GPU needed)."""
    files = _tests_for("cupy")
    if not files:
        session.skip("no tests/test_cupy*.py yet")
    session.install(TORCH, ".[test]", *CUPY)
    _pytest(session, "-q", *files, env=NO_SIMULATORS)


@nox.session
def bench_quick(session: nox.Session) -> None:
    """``qrita bench --quick``: the benchmark harness end to end on a small matrix (here: the CPU)."""
    session.install(TORCH, ".[bench]")
    out = session.create_tmp()
    session.run("qrita", "bench", *(session.posargs or ["--quick", "--out", f"{out}/bench"]), env=NO_SIMULATORS)


@nox.session
def hf(session: nox.Session) -> None:
    """Opt-in: QritaLogitsWarper inside Hugging Face generate() with tiny random models (no downloads)."""
    session.install(TORCH, ".[test]", "transformers")
    files = _tests_for("hf") or ["tests"]
    _pytest(session, "-q", *files, env={**NO_SIMULATORS, "HF_HUB_OFFLINE": "1"})
