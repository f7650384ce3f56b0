"""``import qrita`` stays light, and the command line starts."""

from __future__ import annotations

import json
import subprocess
import sys

from backends import package_env

HEAVY = ("torch", "cupy", "triton", "numba", "jax", "tensorflow", "scipy", "matplotlib", "ml_dtypes")


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=package_env(), timeout=120)


def test_import_qrita_loads_no_heavy_library():
    out = _python(
        "import json, sys, qrita\n"
        "qrita.select, qrita.top_k_top_p, qrita.Selection\n"
        f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n"
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [], f"import qrita imported {out.stdout.strip()}"


def test_selecting_on_numpy_arrays_loads_no_gpu_library():
    # "auto" on numpy arrays must not import a GPU stack just to decide
    out = _python(
        "import json, sys, numpy as np, qrita\n"
        "qrita.select(np.zeros((2, 8), np.float32), 3, 0.9)\n"
        "print(json.dumps(sorted(m for m in ('torch', 'cupy', 'triton', 'numba', 'jax') if m in sys.modules)))\n"
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == []


def test_cli_info():
    out = subprocess.run(
        [sys.executable, "-m", "qrita", "info"], capture_output=True, text=True, env=package_env(), timeout=300
    )
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert "qrita " in text and "spec fingerprint" in text
    for name in ("numpy", "reference", "triton", "cupy", "numba"):
        assert name in text


def test_cli_help_and_unknown_command():
    out = subprocess.run([sys.executable, "-m", "qrita", "--help"], capture_output=True, text=True, env=package_env())
    assert out.returncode == 0 and "demo" in out.stdout and "info" in out.stdout and "bench" in out.stdout
    out = subprocess.run(
        [sys.executable, "-m", "qrita", "frobnicate"], capture_output=True, text=True, env=package_env()
    )
    assert out.returncode == 2 and "invalid choice" in out.stderr
