"""Fixtures shared by the whole suite.

* ``target``: one runnable backend with one array library and device
  (:mod:`backends`); ``target`` + ``dtype`` together: every pair it supports.
* ``rng``: a numpy Generator seeded from the test's id, so every test gets its
  own fresh data and a failure reproduces exactly.
* The ``gpu`` marker skips without a CUDA device.
* Hypothesis profiles: ``ci`` (the default; modest example counts, no
  deadline) and ``gpu``; pick one with ``QRITA_HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import os
import zlib

import backends
import numpy as np
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "gpu",
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.load_profile(os.environ.get("QRITA_HYPOTHESIS_PROFILE", "ci"))


def pytest_configure(config):
    try:
        backends.targets()
    except (RuntimeError, ValueError) as exc:
        raise pytest.UsageError(str(exc)) from exc


def pytest_report_header(config):
    lines = ["qrita targets: " + (", ".join(t.id for t in backends.targets()) or "none")]
    lines += [f"qrita backend not tested here: {s.backend}: {s.reason}" for s in backends.skipped()]
    return lines


def _pair_param(target, dtype):
    reason = target.supports(dtype)
    marks = [pytest.mark.skip(reason=reason)] if reason else []
    return pytest.param(target, dtype, id=f"{target.id}-{dtype}", marks=marks)


def pytest_generate_tests(metafunc):
    names = metafunc.fixturenames
    if "target" not in names:
        return
    gpu_only = metafunc.definition.get_closest_marker("gpu") is not None
    if "dtype" in names and "dtype" not in _explicit_params(metafunc):
        pairs = backends.target_dtypes(gpu_only=gpu_only)
        metafunc.parametrize(("target", "dtype"), [_pair_param(t, d) for t, d in pairs])
    else:
        chosen = [t for t in backends.targets() if not gpu_only or t.on_gpu]
        metafunc.parametrize("target", chosen, ids=[t.id for t in chosen])


def _explicit_params(metafunc) -> set[str]:
    out = set()
    for marker in metafunc.definition.iter_markers("parametrize"):
        argnames = marker.args[0]
        if isinstance(argnames, str):
            argnames = [a.strip() for a in argnames.split(",")]
        out.update(argnames)
    return out


def pytest_collection_modifyitems(config, items):
    if backends.cuda_available():
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device (run with -m gpu on the device machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A Generator seeded from the test id: fresh data per test, reproducible per test."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
