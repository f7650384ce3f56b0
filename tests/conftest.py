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

import importlib.util
import os
import sys
import zlib
from collections import defaultdict

import backends
import numpy as np
import pytest
from hypothesis import HealthCheck, settings

# ci: the default; gpu: the device machine; sim: simulated backends (Triton interpreter,
# CUDA simulator), where every call costs seconds
for _name, _examples in (("ci", 40), ("gpu", 300), ("sim", 6)):
    settings.register_profile(
        _name,
        max_examples=_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        print_blob=True,
    )
settings.load_profile(os.environ.get("QRITA_HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True, scope="session")
def _fast_simulator_barriers():
    """Under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1`` for the process) every simulated thread
    is a Python thread and a barrier waits on the GIL: a short switch interval makes them several times
    faster, in every test module that runs the simulated backend (conformance, properties, the
    backend's own tests)."""
    old = sys.getswitchinterval()
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        sys.setswitchinterval(1e-4)
    yield
    sys.setswitchinterval(old)


def _skip_nested_interpreter_patches() -> None:
    """Under ``TRITON_INTERPRET=1``, triton 3.9.0's interpreter re-patches ``triton.language`` (an
    ``inspect.getmembers`` walk of its modules) on every call of a ``@triton.jit`` helper from a kernel,
    although the modules are already patched: by the launch (``GridExecutor``, for the whole grid) or by an
    earlier helper call (whose patch is never undone).  Re-patching then changes nothing: a patched member
    is no longer a builtin, so the walk skips it.  Skip the walk where every language module the helper
    sees is patched already (``triton.language.standard``'s helpers, e.g. ``tl.sum``, see ``tl.core``, which
    a kernel's launch does not patch: a third of the interpreter's time went on these walks); the kernels
    run the same code.  A module left unpatched would fail loudly (a builtin called without its
    ``_semantic``), not silently.  Only for the pinned triton version, whose interpreter this mirrors."""
    import triton

    if triton.__version__ != "3.9.0":
        return
    import inspect

    import triton.language as tl
    from triton.runtime import interpreter

    def langs_of(fn) -> list:  # the language modules _patch_lang patches for fn
        return [v for v in fn.__globals__.values() if inspect.ismodule(v) and v in (tl, tl.core)]

    def patched(lang) -> bool:  # _patch_builtin replaces every builtin of a module at once (and a restore
        return not tl.core.is_builtin(lang.full)  # puts them all back): one of them tells the state

    active: list[frozenset] = []
    grid_call = interpreter.GridExecutor.__call__

    def launch(self, *args, **kwargs):
        active.append(frozenset(id(m) for m in langs_of(self.fn)))
        try:
            return grid_call(self, *args, **kwargs)
        finally:
            active.pop()

    def device_call(self, *args, **kwargs):  # InterpretedFunction.__call__ of triton 3.9.0, less the re-patch
        if not (active and all(id(m) in active[-1] or patched(m) for m in langs_of(self.fn))):
            interpreter._patch_lang(self.fn)
        fn = self.rewrite()
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise interpreter.InterpreterError(repr(e)) from e

    interpreter.GridExecutor.__call__ = launch
    interpreter.InterpretedFunction.__call__ = device_call


def _fast_xor_reduce() -> None:
    """Under ``TRITON_INTERPRET=1``, triton 3.9.0's interpreter reduces with numpy only for its sum, min,
    max and argmin/argmax combines; any other combine (``xor_sum``'s) goes element by element through
    Python (``ReduceOps.generic_reduce``).  ``tl.sort`` (the miss rounds' lane taus, ``kernels.lane_taus``
    and ``kernels.sample_taus``) is a bitonic network of ``xor_sum`` reductions: 88 of one test's 113 s
    (``test_schedule_options_give_the_same_bits[False]``, cProfile, session 34).  Reduce ``xor_sum`` with
    ``np.bitwise_xor.reduce`` instead: xor is associative and commutative, so every result is the same
    integer; the kernels run the same code.  Only for the pinned triton version, whose interpreter this
    mirrors."""
    import triton

    if triton.__version__ != "3.9.0":
        return
    import triton.language as tl
    from triton.runtime import interpreter

    apply_impl = interpreter.ReduceOps.apply_impl

    def reduce_xor_fast(self, input):
        if self.combine_fn is tl.standard._xor_combine and len(input) == 1:
            data = np.bitwise_xor.reduce(input[0].handle.data, axis=self.axis, keepdims=self.keep_dims)
            return self.to_tensor(data, input[0].dtype)
        return apply_impl(self, input)

    interpreter.ReduceOps.apply_impl = reduce_xor_fast

    # ... and its _get_np_dtype builds a dict of twenty triton dtypes (twenty hashes) on every call, about a
    # million calls a heavy test (a fifth of one test's time, cProfile): the same answer from a cache by scalar
    # dtype (a block's numpy dtype is its element's; block types are not hashable)
    get_np_dtype, np_dtypes = interpreter._get_np_dtype, {}

    def np_dtype_cached(tt_dtype):
        scalar = tt_dtype.element_ty if isinstance(tt_dtype, tl.block_type) else tt_dtype
        if isinstance(scalar, tl.pointer_type):  # (not hashable either) pointers are uint64 addresses
            return get_np_dtype(scalar)
        found = np_dtypes.get(scalar)
        if found is None:
            found = np_dtypes[scalar] = get_np_dtype(scalar)
        return found

    interpreter._get_np_dtype = np_dtype_cached


def pytest_configure(config):
    if os.environ.get("TRITON_INTERPRET", "") not in ("", "0") and importlib.util.find_spec("triton"):
        _skip_nested_interpreter_patches()
        _fast_xor_reduce()
    try:
        backends.targets()
        backends.simulated_variants()
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
        params = [_pair_param(t, d) for t, d in pairs] or [_nothing_here(gpu_only, 2)]
        metafunc.parametrize(("target", "dtype"), params)
    else:
        chosen = [pytest.param(t, id=t.id) for t in backends.targets() if not gpu_only or t.on_gpu]
        metafunc.parametrize("target", chosen or [_nothing_here(gpu_only, 1)])


def _nothing_here(gpu_only: bool, n: int):
    reason = "no CUDA target here" if gpu_only else "no runnable backend here"
    return pytest.param(*([None] * n), id="none", marks=pytest.mark.skip(reason=reason))


def _explicit_params(metafunc) -> set[str]:
    out = set()
    for marker in metafunc.definition.iter_markers("parametrize"):
        argnames = marker.args[0]
        if isinstance(argnames, str):
            argnames = [a.strip() for a in argnames.split(",")]
        out.update(argnames)
    return out


def pytest_collection_finish(session):
    """Start the AOT compile check's processes once the selection is final (``-k``/``-m`` applied)."""
    for item in session.items:
        if getattr(item, "originalname", None) == "test_every_variant_compiles":
            item.module.start()  # minutes of compiling, beside the other tests (test_triton_compile.py)


def pytest_collection_modifyitems(config, items):
    _thin_simulated(config, items)
    if backends.cuda_available():
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA device (run with -m gpu on the device machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)


def _thin_simulated(config, items):
    """On simulated targets keep ``QRITA_TEST_SIM_VARIANTS`` parametrisations per test.

    The kept ones are drawn with a seed from the test's name, so they are the same
    on every run and spread over the dtypes and parameters.
    """
    keep_per_test = backends.simulated_variants()
    if keep_per_test is None:
        return
    groups = defaultdict(list)
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        target = params.get("target")
        if isinstance(target, backends.Target) and target.simulated:
            groups[(item.module.__name__, item.originalname, target.id)].append(item)
    drop = set()
    for key, group in groups.items():
        rng = np.random.default_rng(zlib.crc32("/".join(key).encode()))
        keep = set(rng.choice(len(group), size=min(keep_per_test, len(group)), replace=False).tolist())
        drop.update(id(item) for i, item in enumerate(group) if i not in keep)
    if drop:
        config.hook.pytest_deselected(items=[item for item in items if id(item) in drop])
        items[:] = [item for item in items if id(item) not in drop]


@pytest.fixture
def rng(request) -> np.random.Generator:
    """A Generator seeded from the test id: fresh data per test, reproducible per test."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
