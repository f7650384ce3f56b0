"""Every error path, by its message (SPEC.md "Bad input").

Messages name the argument, the constraint and the value received.  After every
error the caller's data is unchanged, also for ``inplace=True`` calls.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from backends import bits, copy, skipped, to_numpy

import qrita
import qrita.backends as registry
from qrita.backends.base import Backend, Capabilities
from qrita.errors import (
    BackendUnavailableError,
    CheckFailedError,
    QritaError,
    QritaTypeError,
    QritaValueError,
    UnknownBackendError,
)


def _calls(target, logits, **kwargs):
    """The entry points a bad argument must be rejected by, each in its in-place form too."""
    backend = kwargs.pop("backend", target.backend)
    yield lambda: qrita.select(logits, backend=backend, **kwargs)
    yield lambda: qrita.top_k_top_p(logits, backend=backend, **kwargs)
    yield lambda: qrita.top_k_top_p(logits, backend=backend, inplace=True, **kwargs)


def assert_rejected(target, logits, error, match, **kwargs):
    """Every entry point raises ``error`` matching ``match``, and ``logits`` stays bit-identical."""
    before = _snapshot(logits)
    for call in _calls(target, logits, **kwargs):
        with pytest.raises(error, match=match) as info:
            call()
        assert isinstance(info.value, QritaError)
        if before is not None:
            assert np.array_equal(_snapshot(logits), before), "the caller's logits changed after an error"


def _snapshot(a):
    """Raw bits (floats) or values (anything else) of an array; None for non-arrays."""
    if not hasattr(a, "shape"):
        return None
    try:
        return bits(a)
    except (TypeError, RuntimeError, ValueError):
        return to_numpy(a).copy()


def _x(target, B=8, V=5, dtype="float32"):
    values = np.arange(B * V, dtype=np.float64).reshape(B, V) % 7 - 3.0
    return target.array(values, dtype)


# --------------------------------------------------------------------------------------------
# logits
# --------------------------------------------------------------------------------------------


def test_logits_not_an_array(target):
    for bad, name in [([[1.0, 2.0]], "list"), (3.0, "float"), (None, "NoneType"), (np.float32(1.0), "float32")]:
        for call in _calls(target, bad):
            with pytest.raises(
                QritaTypeError, match=rf"logits must be a numpy array, a torch tensor or a cupy array, got {name}"
            ):
                call()


@pytest.mark.parametrize("shape", [(2, 3, 4), (1, 1, 1, 1), ()])
def test_logits_wrong_rank(target, shape):
    x = target.array(np.zeros(shape), "float32")
    assert_rejected(
        target, x, QritaValueError, rf"logits must be 2-D \[B, V\] or 1-D \[V\], got shape {re_shape(shape)}", k=1
    )


def re_shape(shape):
    return "\\" + str(tuple(shape)).replace(")", "\\)")


@pytest.mark.parametrize("np_dtype", ["int64", "int32", "int8", "uint8", "bool", "complex64"])
def test_logits_wrong_dtype(target, np_dtype):
    values = np.ones((2, 3), dtype=np_dtype)
    x = target._plain(values)
    name = np_dtype
    assert_rejected(
        target,
        x,
        QritaTypeError,
        rf"logits must have a floating dtype \(float32, float16, bfloat16, float64\), got {name}",
        k=1,
    )


@pytest.mark.parametrize("shape", [(2, 0), (0,), (0, 0)])
def test_logits_empty_vocab(target, shape):
    x = target.array(np.zeros(shape), "float32")
    assert_rejected(
        target, x, QritaValueError, rf"logits must have V >= 1 entries per row, got shape {re_shape(shape)}", k=1
    )


# --------------------------------------------------------------------------------------------
# k
# --------------------------------------------------------------------------------------------


def test_k_wrong_shape(target):
    x = _x(target)
    assert_rejected(
        target, x, QritaValueError, r"k must have shape \[B\]=\[8\], got \(7,\)", k=target.index_array(np.ones(7))
    )
    assert_rejected(
        target,
        x,
        QritaValueError,
        r"k must have shape \[B\]=\[8\], got \(8, 1\)",
        k=target.index_array(np.ones((8, 1))),
    )
    one_row = target.array(np.zeros(5), "float32")  # 1-D logits: B = 1
    assert_rejected(
        target, one_row, QritaValueError, r"k must have shape \[B\]=\[1\], got \(2,\)", k=target.index_array([1, 2])
    )


@pytest.mark.parametrize(
    ("k", "match"),
    [
        (2.5, r"k must be an integer or an integer array \[B\], got float 2\.5"),
        (2.0, r"k must be an integer or an integer array \[B\], got float 2\.0"),
        (math.inf, r"k must be an integer or an integer array \[B\], got float inf"),
        (np.float32(3.0), r"k must be an integer or an integer array \[B\], got float32 "),
    ],
)
def test_k_not_an_integer(target, k, match):
    assert_rejected(target, _x(target), QritaTypeError, match, k=k)


def test_k_bool_and_other_types(target):
    x = _x(target)
    assert_rejected(target, x, QritaTypeError, r"k must be an integer or an array \[B\], got bool True", k=True)
    assert_rejected(
        target, x, QritaTypeError, r"k must be an integer or an array \[B\], got bool False", k=np.bool_(False)
    )
    assert_rejected(target, x, QritaTypeError, r"k must be None, an integer, or an array \[B\], got str", k="3")
    assert_rejected(target, x, QritaTypeError, r"k must be None, an integer, or an array \[B\], got list", k=[1] * 8)


@pytest.mark.parametrize("dtype", ["float32", "float64", "bool"])
def test_k_array_wrong_dtype(target, dtype):
    k = target._plain(np.ones(8, dtype=dtype))
    assert_rejected(target, _x(target), QritaTypeError, rf"k must have an integer dtype, got {dtype}", k=k)


# --------------------------------------------------------------------------------------------
# p
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("p", [math.nan, np.float32("nan"), np.float64("nan")])
def test_p_nan_scalar(target, p):
    match = r"p must not be NaN \(pass p=None or p=1\.0 to disable top-p\), got nan"
    assert_rejected(target, _x(target), QritaValueError, match, p=p)


def test_p_not_a_number(target):
    x = _x(target)
    assert_rejected(target, x, QritaTypeError, r"p must be None, a number, or an array \[B\], got str", p="0.9")
    assert_rejected(target, x, QritaTypeError, r"p must be None, a number, or an array \[B\], got list", p=[0.5] * 8)
    assert_rejected(target, x, QritaTypeError, r"p must be a real number or a float array \[B\], got complex 1j", p=1j)
    assert_rejected(target, x, QritaTypeError, r"p must be a number or an array \[B\], got bool True", p=True)


def test_p_array_wrong_dtype_or_shape(target):
    x = _x(target)
    assert_rejected(
        target, x, QritaTypeError, r"p must have a floating dtype, got int64", p=target.index_array(np.ones(8))
    )
    assert_rejected(
        target, x, QritaTypeError, r"p must have a floating dtype, got bool", p=target._plain(np.ones(8, bool))
    )
    assert_rejected(
        target, x, QritaValueError, r"p must have shape \[B\]=\[8\], got \(7,\)", p=target.float_array(np.ones(7))
    )
    assert_rejected(
        target,
        x,
        QritaValueError,
        r"p must have shape \[B\]=\[8\], got \(8, 1\)",
        p=target.float_array(np.ones((8, 1))),
    )


# --------------------------------------------------------------------------------------------
# ties, mask_value
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ties", ["first", "ALL", "", None, 1])
def test_bad_ties(target, ties):
    match = rf"ties must be one of 'lowest_index', 'all', got {re_escape(repr(ties))}"
    assert_rejected(target, _x(target), QritaValueError, match, k=2, ties=ties)


def re_escape(text):
    import re

    return re.escape(text)


@pytest.mark.parametrize(
    ("mask_value", "shown"), [("x", "str 'x'"), (None, "NoneType None"), (True, "bool True"), (1j, "complex 1j")]
)
def test_bad_mask_value(target, mask_value, shown):
    x = _x(target)
    before = bits(x)
    for inplace in (False, True):
        with pytest.raises(QritaTypeError, match=rf"mask_value must be a real number, got {re_escape(shown)}"):
            qrita.top_k_top_p(x, 2, backend=target.backend, mask_value=mask_value, inplace=inplace)
        assert np.array_equal(bits(x), before)


def test_apply_with_logits_of_another_shape(target):
    x = _x(target)
    sel = qrita.select(x, 2, backend=target.backend)
    with pytest.raises(ValueError, match=r"logits must have the selection's shape \(8, 5\), got \(8, 4\)"):
        sel.apply(target.array(np.zeros((8, 4)), "float32"))


# --------------------------------------------------------------------------------------------
# Backends
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["foo", "Numpy", "", "cuda"])
def test_unknown_backend_lists_the_registered_ones(target, name):
    listed = ", ".join(repr(n) for n in registry.REGISTRY)
    match = re_escape(f"backend must be 'auto' or one of {listed}, got {name!r}")
    assert_rejected(target, _x(target), UnknownBackendError, match, k=2, backend=name)


@pytest.mark.parametrize("options", [{"trunaction": False}, {"span": 256, "bogus": 1, "Truncation": False}])
def test_unknown_option_names_the_option_and_the_backend(target, options):
    """A misspelt knob is an error, not a silent default (before any work: the data stay unchanged)."""
    chosen = qrita.select(_x(target), 2, backend=target.backend).backend
    unknown = sorted(set(options) - registry.get_backend(chosen).option_names)
    match = re_escape(f"options: {', '.join(repr(n) for n in unknown)}") + ".* of backend " + re_escape(repr(chosen))
    assert_rejected(target, _x(target), QritaValueError, match, k=2, options=options)


@pytest.mark.parametrize("value", ["yes", "False", 1, 0, None, 1.0])
def test_on_off_options_take_only_true_or_false(target, value):
    """An on/off knob given anything but a bool (a string, a number, None) is an error naming it, not
    a silent ``bool(value)``; numpy's bools pass."""
    match = re_escape("options['truncation'] must be True or False") + ".*" + re_escape(f"got {value!r}")
    assert_rejected(target, _x(target), QritaValueError, match, k=2, options={"truncation": value})
    want = qrita.select(_x(target), 2, backend=target.backend, options={"truncation": False})
    got = qrita.select(_x(target), 2, backend=target.backend, options={"truncation": np.False_})
    assert np.array_equal(to_numpy(got.mask()), to_numpy(want.mask()))


def test_every_backend_declares_the_options_it_reads():
    """Backend.option_names is exactly the set of option names its source reads (no drift either way)."""
    import pathlib
    import re

    root = pathlib.Path(qrita.__file__).parent / "backends"
    read = re.compile(r'(?<!\w)(?:opts|options)(?:\.get\(|\[)"(\w+)"|int_option\(opts, "(\w+)"')
    for name in registry.REGISTRY:
        names = set()
        for path in (root / name).rglob("*.py"):
            names |= {a or b for a, b in read.findall(path.read_text())}
        declared = registry._load(name)
        if isinstance(declared, str):  # the backend's module cannot load here: check its source only
            continue
        assert names | {"truncation"} == set(declared.option_names), name
        flags = set()
        for path in (root / name).rglob("*.py"):
            flags |= set(re.findall(r'bool\((?:opts|options|req\.options)\.get\("(\w+)"', path.read_text()))
        assert flags <= set(declared.flag_options) <= set(declared.option_names), name


@pytest.mark.parametrize("name", [s.backend for s in skipped() if not s.broken] or ["-"])
def test_unavailable_backend_named_explicitly_says_why(target, name):
    if name == "-":
        pytest.skip("every registered backend can run here")
    reason = next(s.reason for s in skipped() if s.backend == name)
    assert_rejected(
        target, _x(target), BackendUnavailableError, rf"backend '{name}' is unavailable: ", k=2, backend=name
    )
    with pytest.raises(BackendUnavailableError) as info:
        qrita.select(_x(target), 2, backend=name)
    assert reason in str(info.value) or "is unavailable" in str(info.value)


class _FakeBackend(Backend):
    """A stand-in registered by the tests: unavailable, or simulated, on demand."""

    name = "fake"
    capabilities = Capabilities(
        devices=("cuda",), libs=("torch",), dtypes=("float32",), install='pip install "qrita[fake]"'
    )

    def __init__(self, reason=None, simulated=False):
        self._reason = reason
        self.simulated = simulated
        if simulated:  # a simulator serves CPU arrays (when named explicitly)
            self.capabilities = Capabilities(devices=("cuda", "cpu"), libs=("torch",), dtypes=("float32",), install="")
        self.calls = 0

    def unavailable_reason(self):
        return self._reason

    def select(self, req):
        self.calls += 1
        return registry.get_backend("reference").select(req)


@pytest.fixture
def fake(monkeypatch):
    """Registers backend "fake" (first in the "auto" order) for one test."""

    def install(backend):
        monkeypatch.setitem(registry.REGISTRY, "fake", "qrita.backends.fake_for_tests")
        monkeypatch.setitem(registry._loaded, "fake", backend)
        monkeypatch.setattr(registry, "AUTO_ORDER", ("fake", *registry.AUTO_ORDER))
        return backend

    return install


def test_explicit_unavailable_backend_raises_with_reason_and_fix(fake):
    fake(_FakeBackend(reason='the fake library is missing: pip install "qrita[fake]"'))
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(
        BackendUnavailableError,
        match=re_escape("backend 'fake' is unavailable: the fake library is missing: pip install \"qrita[fake]\""),
    ):
        qrita.select(x, 1, backend="fake")
    assert qrita.available_backends()["fake"].startswith("the fake library is missing")
    # "auto" passes over it quietly
    assert qrita.select(x, 1).backend != "fake"


def test_explicit_backend_that_cannot_serve_the_request_never_falls_back(fake):
    backend = fake(_FakeBackend())
    x = np.zeros((2, 3), np.float32)
    with pytest.raises(BackendUnavailableError, match=r"backend 'fake' runs on a CUDA device, but logits are on 'cpu'"):
        qrita.select(x, 1, backend="fake")
    assert backend.calls == 0
    assert qrita.select(x, 1).backend in ("numpy", "reference")


def test_simulated_backend_runs_only_when_named(fake):
    backend = fake(_FakeBackend(simulated=True))
    torch = pytest.importorskip("torch")
    x = torch.zeros((2, 3))
    assert qrita.select(x, 1).backend != "fake"  # auto never picks a simulator
    assert qrita.select(x, 1, backend="fake").backend == "fake"
    assert backend.calls == 1
    with pytest.raises(BackendUnavailableError, match=r"backend 'fake' supports dtypes float32, got float64"):
        qrita.select(x.double(), 1, backend="fake")
    with pytest.raises(BackendUnavailableError, match=r"backend 'fake' takes torch arrays, got a numpy array"):
        qrita.select(np.zeros((2, 3), np.float32), 1, backend="fake")


def test_backend_whose_module_is_missing(monkeypatch):
    monkeypatch.setitem(registry.REGISTRY, "ghost", "qrita.backends.ghost_that_does_not_exist")
    monkeypatch.delitem(registry._loaded, "ghost", raising=False)
    with pytest.raises(
        BackendUnavailableError,
        match=r"backend 'ghost' is unavailable: cannot import qrita\.backends\.ghost_that_does_not_exist",
    ):
        qrita.select(np.zeros((1, 3), np.float32), 1, backend="ghost")
    registry._loaded.pop("ghost", None)


@pytest.mark.gpu
def test_mismatched_devices():
    torch = pytest.importorskip("torch")
    x = torch.zeros((4, 8), device="cuda")
    with pytest.raises(QritaValueError, match=r"k must be on the logits' device 'cuda:0', got 'cpu'"):
        qrita.select(x, torch.ones(4, dtype=torch.int64))
    with pytest.raises(QritaValueError, match=r"p must be on the logits' device 'cuda:0', got 'cpu'"):
        qrita.select(x, None, np.full(4, 0.5, np.float32))
    with pytest.raises(BackendUnavailableError, match=r"backend 'numpy' runs on the CPU, but logits are on 'cuda:0'"):
        qrita.select(x, 1, backend="numpy")


def test_cpu_arrays_of_other_libraries_are_accepted(target):
    # k/p from another CPU library are converted (no device change), never an error
    if target.on_gpu:
        pytest.skip("CPU only")
    torch = pytest.importorskip("torch")
    x = _x(target)
    k = torch.full((8,), 2, dtype=torch.int64) if target.lib == "numpy" else np.full(8, 2, np.int64)
    p = torch.full((8,), 0.5, dtype=torch.bfloat16) if target.lib == "numpy" else np.full(8, 0.5, np.float16)
    sel = qrita.select(x, k, p, backend=target.backend)
    ref = qrita.select(x, 2, 0.5, backend=target.backend)
    np.testing.assert_array_equal(to_numpy(sel.mask()), to_numpy(ref.mask()))


# --------------------------------------------------------------------------------------------
# check=True: values inside arrays
# --------------------------------------------------------------------------------------------


def test_check_rejects_nan_logits(target):
    values = np.zeros((3, 6))
    values[1, 4] = np.nan
    x = target.array(values, "float32")
    match = r"logits must not contain NaN \(check=True\), got NaN at row 1, column 4"
    assert_rejected(target, x, CheckFailedError, match, k=2, check=True)
    # without the check NaN is simply never kept
    assert not to_numpy(qrita.select(x, None, backend=target.backend).mask())[1, 4]


def test_check_rejects_out_of_range_per_row_k(target):
    x = _x(target)
    bad = target.index_array([0, 1, 2, 3, 4, 5, 9, 2])
    assert_rejected(
        target,
        x,
        CheckFailedError,
        r"k must be in \[0, V\]=\[0, 5\] per row \(check=True\), got 9 at row 6",
        k=bad,
        check=True,
    )
    bad = target.index_array([0, 1, 2, -1, 4, 5, 5, 2])
    assert_rejected(
        target,
        x,
        CheckFailedError,
        r"k must be in \[0, V\]=\[0, 5\] per row \(check=True\), got -1 at row 3",
        k=bad,
        check=True,
    )
    # in range (k == 0 and k == V included) passes the check
    qrita.select(x, target.index_array([0, 1, 2, 3, 4, 5, 5, 2]), backend=target.backend, check=True)


@pytest.mark.parametrize(("value", "shown"), [(1.5, "1.5"), (-0.25, "-0.25"), (math.nan, "nan")])
def test_check_rejects_out_of_range_per_row_p(target, value, shown):
    x = _x(target)
    rows = np.full(8, 0.5)
    rows[5] = value
    match = rf"p must be in \[0, 1\] per row \(check=True\), got {shown} at row 5"
    assert_rejected(target, x, CheckFailedError, match, p=target.float_array(rows), check=True)


def test_qrita_check_environment_variable(target, monkeypatch):
    values = np.zeros((2, 4))
    values[0, 1] = np.nan
    x = target.array(values, "float32")
    monkeypatch.setenv("QRITA_CHECK", "1")
    with pytest.raises(CheckFailedError, match="got NaN at row 0, column 1"):
        qrita.select(x, 1, backend=target.backend)
    monkeypatch.setenv("QRITA_CHECK", "0")
    qrita.select(x, 1, backend=target.backend)


def test_errors_are_standard_exception_types():
    assert issubclass(QritaValueError, ValueError) and issubclass(QritaTypeError, TypeError)
    assert issubclass(UnknownBackendError, QritaValueError) and issubclass(CheckFailedError, QritaValueError)
    assert issubclass(BackendUnavailableError, RuntimeError)


def test_in_place_error_leaves_non_contiguous_data_unchanged(target):
    base = target.array(np.arange(80, dtype=np.float64).reshape(8, 10) - 40.0, "float32")
    view = base[:, ::2]
    before = bits(base)
    for kwargs in [
        dict(k=target.index_array(np.ones(7))),
        dict(p=math.nan),
        dict(ties="none"),
        dict(k=2, mask_value="x"),
        dict(backend="nope"),
    ]:
        backend = kwargs.pop("backend", target.backend)
        with pytest.raises(QritaError):
            qrita.top_k_top_p(view, backend=backend, inplace=True, **kwargs)
        assert np.array_equal(bits(base), before)
    assert copy(view) is not view
