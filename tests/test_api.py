"""The public API surface: backend choice, output libraries, and the README staying true."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from backends import bits, to_numpy

import qrita
from qrita.backends import REGISTRY, capabilities

ROOT = Path(__file__).resolve().parents[1]


def test_public_names():
    for name in ("select", "top_k_top_p", "top_k", "top_p", "available_backends", "Selection", "QritaError"):
        assert name in qrita.__all__ and hasattr(qrita, name)
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", qrita.__version__)


def test_available_backends_shape():
    avail = qrita.available_backends()
    assert list(avail) == list(REGISTRY)
    for name, reason in avail.items():
        assert reason is None or (isinstance(reason, str) and reason), name
    assert avail["numpy"] is None and avail["reference"] is None


def test_capabilities_are_declared():
    caps = capabilities()
    assert {"numpy", "reference"} <= set(caps) <= set(REGISTRY)
    for name, cap in caps.items():
        assert set(cap.devices) <= {"cpu", "cuda"} and cap.devices, name
        assert set(cap.dtypes) <= {"float32", "float16", "bfloat16", "float64"} and cap.dtypes, name
        assert cap.install, name


def test_auto_picks_numpy_for_numpy_arrays():
    x = np.random.default_rng(0).standard_normal((3, 50)).astype(np.float32)
    sel = qrita.select(x, 5)
    assert sel.backend == "numpy"
    assert isinstance(sel.threshold, np.ndarray) and sel.threshold.dtype == np.float32
    assert sel.num_ties.dtype == np.int32 and sel.count.dtype == np.int32
    assert isinstance(sel.mask(), np.ndarray) and sel.mask().dtype == bool
    assert isinstance(qrita.top_k(x, 5), np.ndarray)
    for dtype in ("float16", "float64"):
        assert qrita.select(x.astype(dtype), 5).threshold.dtype == np.dtype(dtype)


def test_torch_cpu_in_torch_out():
    torch = pytest.importorskip("torch")
    x = torch.randn(3, 50)
    for dtype in (torch.float32, torch.float16, torch.bfloat16, torch.float64):
        xd = x.to(dtype)
        sel = qrita.select(xd, 5, 0.9)
        assert sel.backend == "numpy"
        assert isinstance(sel.threshold, torch.Tensor) and sel.threshold.dtype == dtype
        assert sel.num_ties.dtype == torch.int32 and sel.count.dtype == torch.int32
        assert sel.mask().dtype == torch.bool
        idx, count = sel.indices()
        assert idx.dtype == torch.int64 and count.dtype == torch.int32
        out = qrita.top_k_top_p(xd, 5, 0.9)
        assert isinstance(out, torch.Tensor) and out.dtype == dtype and out.shape == xd.shape


def test_shorthands_equal_top_k_top_p():
    x = np.random.default_rng(1).standard_normal((4, 64)).astype(np.float32)
    assert np.array_equal(bits(qrita.top_k(x, 7)), bits(qrita.top_k_top_p(x, 7, None)))
    assert np.array_equal(bits(qrita.top_p(x, 0.7)), bits(qrita.top_k_top_p(x, None, 0.7)))
    assert np.array_equal(bits(qrita.top_k(x, 7, mask_value=-5.0)), bits(qrita.top_k_top_p(x, 7, mask_value=-5.0)))


def test_selection_repr():
    sel = qrita.select(np.zeros((2, 4), np.float16), 1)
    assert repr(sel) == "Selection(B=2, backend='numpy', lib='numpy', dtype='float16')"


def test_explicit_reference_backend_agrees_with_numpy():
    x = np.round(np.random.default_rng(2).standard_normal((5, 300)) * 4).astype(np.float32)
    a = qrita.select(x, 20, 0.8, backend="numpy")
    b = qrita.select(x, 20, 0.8, backend="reference")
    assert b.backend == "reference" and b.hit is None
    np.testing.assert_array_equal(to_numpy(a.count), to_numpy(b.count))


# --------------------------------------------------------------------------------------------
# The README stays true
# --------------------------------------------------------------------------------------------


def _readme() -> str:
    return (ROOT / "README.md").read_text()


def _backend_table_rows() -> dict[str, str]:
    section = _readme().split("## Backends", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        m = re.match(r"\|\s*`([a-z_]+)`\s*\|", line)
        if m:
            rows[m.group(1)] = line
    return rows


def test_readme_backend_table_matches_the_registry():
    rows = _backend_table_rows()
    assert list(rows) == list(REGISTRY), "README's backend table must list every registered backend, in auto order"
    for name, cap in capabilities().items():
        for dtype in cap.dtypes:
            assert dtype in rows[name], f"README: backend {name!r} takes {dtype}"
        if "float64" not in cap.dtypes:
            assert "float64" not in rows[name], name


def test_readme_test_command_is_what_ci_runs():
    readme = _readme()
    commands = re.findall(
        r"```(?:bash|sh|console)?\n(.*?)```", readme.split("## Set up", 1)[1].split("\n## ", 1)[0], re.S
    )
    commands = [c.strip() for c in commands]
    assert len(commands) == 2, "the set-up section has exactly two commands"
    ci = (ROOT / ".ci" / "run").read_text()
    m = re.search(r"^README_TEST_COMMAND='(.*)'$", ci, re.M)
    assert m, ".ci/run must hold README_TEST_COMMAND='...'"
    assert m.group(1) == commands[1], "the README's test command and .ci/run's must be identical"


def test_readme_links_exist_or_are_owned_by_others():
    links = re.findall(r"\]\(((?:docs|benchmarks)/[^)#]*)", _readme())
    assert "docs/semantics.md" in links
    assert (ROOT / "docs" / "semantics.md").exists()


def test_readme_api_example_runs():
    code = re.search(r"## Use\n\n```python\n(.*?)```", _readme(), re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
