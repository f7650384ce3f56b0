"""Test-side harness: which backends to test here, where their arrays live, and
how test data goes in and out of them.

The backends to test come from the registry (``qrita.backends.REGISTRY``) and
each backend's declared ``capabilities`` and ``simulated`` flag; nothing here
names a backend, so a new backend is picked up as soon as it registers.

Placement of the test arrays, per runnable backend:

* ``simulated`` (Triton under ``TRITON_INTERPRET=1``, Numba under
  ``NUMBA_ENABLE_CUDASIM=1``): CPU arrays of one library (torch if it takes
  them), small shapes, and only ``QRITA_TEST_SIM_VARIANTS`` (default 1)
  parametrisations of each test (``conftest.py`` picks them): a simulated call
  costs seconds.
* ``"cuda"`` in its devices and ``torch.cuda.is_available()``: CUDA arrays
  (torch, and cupy when the backend takes it and it imports).
* ``"cpu"`` in its devices: numpy arrays and torch CPU tensors.
* otherwise it cannot be tested here (it shows up as a skip with the reason).

``QRITA_TEST_BACKENDS=name[,name...]`` restricts the run to those backends
(nox sets it per session); a named backend that cannot run here is an error,
so a session never passes by testing nothing.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass

import numpy as np

from qrita.backends import REGISTRY, _load

ENV_BACKENDS = "QRITA_TEST_BACKENDS"
ENV_SIM_VARIANTS = "QRITA_TEST_SIM_VARIANTS"
DTYPES = ("float32", "float16", "bfloat16", "float64")

# Shape limits for shapes a test asks for with ``Target.shape`` (GPU-sized shapes are
# only used by ``@pytest.mark.gpu`` tests).
SIMULATED_MAX_B, SIMULATED_MAX_V = 4, 600
CPU_MAX_B, CPU_MAX_V = 16, 4096


def _torch():
    if "torch" in sys.modules:
        return sys.modules["torch"]
    if importlib.util.find_spec("torch") is None:
        return None
    import torch

    return torch


def cuda_available() -> bool:
    torch = _torch()
    return bool(torch is not None and torch.cuda.is_available())


def _cupy():
    if importlib.util.find_spec("cupy") is None:
        return None
    try:
        import cupy

        return cupy
    except Exception:  # a broken CUDA install: no cupy here
        return None


def ml_dtypes_bfloat16():
    """numpy's bfloat16 (from ml_dtypes), or None when ml_dtypes is missing."""
    if importlib.util.find_spec("ml_dtypes") is None:
        return None
    import ml_dtypes

    return ml_dtypes.bfloat16


@dataclass(frozen=True)
class Target:
    """One backend with one array library on one device: what a test runs against."""

    backend: str
    lib: str  # "numpy", "torch" or "cupy"
    device: str  # "cpu" or "cuda:0"
    dtypes: tuple[str, ...]
    simulated: bool

    @property
    def id(self) -> str:
        where = "" if self.device == "cpu" else "-cuda"
        return f"{self.backend}-{self.lib}{where}{'-sim' if self.simulated else ''}"

    @property
    def on_gpu(self) -> bool:
        return self.device.startswith("cuda")

    @property
    def max_B(self) -> int:
        return SIMULATED_MAX_B if self.simulated else CPU_MAX_B

    @property
    def max_V(self) -> int:
        return SIMULATED_MAX_V if self.simulated else CPU_MAX_V

    def shape(self, B: int, V: int) -> tuple[int, int]:
        """``(B, V)`` clamped to this target's size policy (simulators get small shapes)."""
        return min(B, self.max_B), min(V, self.max_V)

    def supports(self, dtype: str) -> str | None:
        """None when this target can hold ``dtype`` arrays, else why not."""
        if dtype not in self.dtypes:
            return f"{self.backend} does not take {dtype}"
        if self.lib == "numpy" and dtype == "bfloat16" and ml_dtypes_bfloat16() is None:
            return "numpy bfloat16 needs ml_dtypes (pip install ml_dtypes)"
        if self.lib == "cupy" and dtype == "bfloat16":
            return "cupy has no bfloat16"
        return None

    # --- numpy float64 <-> the target's arrays -----------------------------------------
    def array(self, values, dtype: str):
        """``values`` (anything numpy takes) as a ``dtype`` array of this target (rounded to nearest)."""
        v = np.asarray(values, dtype=np.float64)
        if self.lib == "numpy":
            return v.astype(ml_dtypes_bfloat16() if dtype == "bfloat16" else dtype)
        if self.lib == "torch":
            torch = _torch()
            t = torch.from_numpy(v.copy()).to(getattr(torch, dtype))
            return t.to(self.device) if self.on_gpu else t
        cupy = _cupy()
        return cupy.asarray(v.astype(dtype))

    def index_array(self, values):
        """An int64 ``[B]`` array (per-row ``k``) of this target."""
        return self._plain(np.asarray(values, dtype=np.int64))

    def float_array(self, values, dtype: str = "float32"):
        """A float ``[B]`` array (per-row ``p``) of this target."""
        return self._plain(np.asarray(values, dtype=dtype))

    def _plain(self, a: np.ndarray):
        if self.lib == "numpy":
            return a
        if self.lib == "torch":
            t = _torch().from_numpy(a.copy())
            return t.to(self.device) if self.on_gpu else t
        return _cupy().asarray(a)


# --- outputs back to numpy ----------------------------------------------------------------


def lib_of(a) -> str:
    if isinstance(a, np.ndarray) or np.isscalar(a):
        return "numpy"
    mod = type(a).__module__.split(".", 1)[0]
    return mod


def to_numpy(a) -> np.ndarray:
    """Any array (numpy, torch CPU/CUDA, cupy) as numpy; floats exactly as float64."""
    lib = lib_of(a)
    if lib == "torch":
        t = a.detach().cpu()
        if t.is_floating_point():
            t = t.double()
        return t.numpy()
    if lib == "cupy":
        a = a.get()
    a = np.asarray(a)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        return a.astype(np.float64)
    return a


def bits(a) -> np.ndarray:
    """A numpy copy of the raw bits of a float array (compares NaN payloads and -0.0 too)."""
    lib = lib_of(a)
    if lib == "torch":
        torch = _torch()
        t = a.detach().cpu().contiguous()
        view = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[t.element_size()]
        return t.view(view).numpy().copy()
    if lib == "cupy":
        a = a.get()
    a = np.ascontiguousarray(a)
    return a.view(f"uint{a.dtype.itemsize * 8}").copy()


def dtype_name(a) -> str:
    lib = lib_of(a)
    if lib == "torch":
        return str(a.dtype).replace("torch.", "")
    return np.dtype(a.dtype).name if lib == "numpy" else a.dtype.name


def device_name(a) -> str:
    lib = lib_of(a)
    if lib == "numpy":
        return "cpu"
    if lib == "torch":
        return "cpu" if a.device.type == "cpu" else f"cuda:{a.device.index}"
    return f"cuda:{a.device.id}"


def poisoned_like(a):
    """A new array like ``a`` (library, device, dtype, shape) filled with NaN.

    Use it as the surroundings of an in-place target (a view into a poisoned
    parent) or as an output buffer: any slot a backend forgets to write, or
    writes outside its view, stays or becomes visibly wrong.
    """
    lib = lib_of(a)
    if lib == "torch":
        return _torch().full_like(a, float("nan"))
    if lib == "cupy":
        return _cupy().full_like(a, float("nan"))
    return np.full_like(a, np.nan)


# --- which targets run here -----------------------------------------------------------------


def simulated_variants() -> int | None:
    """How many parametrisations of each test a simulated target runs (None: all of them)."""
    raw = os.environ.get(ENV_SIM_VARIANTS, "1").strip().lower()
    if raw == "all":
        return None
    try:
        return max(1, int(raw))
    except ValueError as exc:
        raise ValueError(f"{ENV_SIM_VARIANTS} must be a positive integer or 'all', got {raw!r}") from exc


def _importable(lib: str) -> bool:
    if lib == "numpy":
        return True
    return (_torch() if lib == "torch" else _cupy()) is not None


@dataclass(frozen=True)
class Skipped:
    """A registered backend that cannot be tested here, and why."""

    backend: str
    reason: str
    broken: bool = False  # loading it raised something other than ImportError


def requested_backends() -> tuple[str, ...] | None:
    """Backend names from ``QRITA_TEST_BACKENDS`` (None: every registered backend)."""
    raw = os.environ.get(ENV_BACKENDS, "").strip()
    if not raw:
        return None
    names = tuple(n.strip() for n in raw.split(",") if n.strip())
    unknown = [n for n in names if n not in REGISTRY]
    if unknown:
        raise ValueError(f"{ENV_BACKENDS} names unknown backend(s) {unknown}; registered: {list(REGISTRY)}")
    return names


def discover() -> tuple[list[Target], list[Skipped]]:
    """Every target to test here, and every registered backend that cannot be tested here."""
    wanted = requested_backends()
    targets: list[Target] = []
    skipped: list[Skipped] = []
    have_cuda = cuda_available()
    for name in REGISTRY:
        if wanted is not None and name not in wanted:
            continue
        try:
            backend = _load(name)
            reason = backend if isinstance(backend, str) else backend.unavailable_reason()
        except Exception as exc:  # a broken backend module: reported as a failing test
            skipped.append(Skipped(name, f"loading it raised {type(exc).__name__}: {exc}", broken=True))
            continue
        if reason is not None:
            skipped.append(Skipped(name, reason))
            continue
        caps = backend.capabilities
        simulated = bool(getattr(backend, "simulated", False))
        devices = []
        if have_cuda and "cuda" in caps.devices and not simulated:
            devices.append("cuda:0")
        if simulated or "cpu" in caps.devices:
            devices.append("cpu")
        if not devices:
            skipped.append(Skipped(name, f"runs on {', '.join(caps.devices)}; no CUDA device here"))
            continue
        found = []
        for device in devices:
            libs = ("numpy", "torch") if device == "cpu" else ("torch", "cupy")
            if simulated:  # one library is enough for a simulator (every call costs seconds)
                libs = ("torch", "numpy")
            for lib in libs:
                if lib in caps.libs and _importable(lib):
                    found.append(Target(name, lib, device, tuple(caps.dtypes), simulated))
                    if simulated:
                        break
        if not found:
            skipped.append(Skipped(name, f"takes {', '.join(caps.libs)} arrays; none of them works here"))
        targets += found
    if wanted is not None:
        missing = [s for s in skipped if s.backend in wanted]
        if missing:
            lines = "; ".join(f"{s.backend}: {s.reason}" for s in missing)
            raise RuntimeError(f"{ENV_BACKENDS}={','.join(wanted)} asks for backends that cannot run here: {lines}")
    return targets, skipped


_discovered: tuple[list[Target], list[Skipped]] | None = None


def targets() -> list[Target]:
    """The targets to test here (computed once per process)."""
    global _discovered
    if _discovered is None:
        _discovered = discover()
    return _discovered[0]


def skipped() -> list[Skipped]:
    """The registered backends that cannot be tested here."""
    targets()
    return _discovered[1]


def target_dtypes(*, gpu_only: bool = False) -> list[tuple[Target, str]]:
    """Every ``(target, dtype)`` pair the target supports here (``gpu_only``: CUDA targets only)."""
    return [(t, d) for t in targets() if not gpu_only or t.on_gpu for d in DTYPES if d in t.dtypes]


# --- running a request and judging it against the oracle ----------------------------------


def copy(a):
    """An independent copy of a target array (same library, device, dtype, shape)."""
    return a.clone() if lib_of(a) == "torch" else a.copy()


def host(value):
    """``k``/``p`` as the oracle takes them: None and scalars unchanged, arrays as numpy."""
    if value is None or isinstance(value, (int, float)):
        return value
    return to_numpy(value)


def _rows(a: np.ndarray) -> np.ndarray:
    return a[None] if a.ndim == 1 else a


def expected_probs(row_values: np.ndarray) -> np.ndarray:
    """Probabilities renormalised over kept values (float64; ``+inf`` entries share the mass)."""
    if row_values.size == 0:
        return row_values
    inf = row_values == np.inf
    w = inf.astype(np.float64) if inf.any() else np.exp(row_values - row_values.max())
    return w / w.sum()


def check_request(target: Target, x, k=None, p=None, ties: str = "lowest_index", *, options=None, derived=True):
    """Run ``qrita.select`` on ``target`` and judge everything against the oracle, exactly.

    Checks: the caller's array is unchanged (bits); the output library, device,
    dtypes and shapes; ``(threshold, num_ties, count)`` through
    :func:`qrita.reference.check_selection`; ``mask()`` equal to
    :func:`~qrita.reference.mask_from_selection` and accepted by
    :func:`~qrita.reference.check_mask`.  With ``derived``: ``indices()`` in
    ranking order, ``probs()``, ``apply()`` out of place with ``-inf`` and a
    finite ``mask_value``, and ``top_k_top_p`` out of place.

    Returns ``(selection, oracle_result)``.
    """
    import qrita
    from qrita.reference import check_mask, check_selection, mask_from_selection, oracle_select

    before = bits(x)
    dtype = dtype_name(x)
    sel = qrita.select(x, k, p, backend=target.backend, ties=ties, options=options)
    assert np.array_equal(bits(x), before), "select() changed the caller's logits"
    assert sel.backend == target.backend

    squeeze = x.ndim == 1
    B = 1 if squeeze else x.shape[0]
    want_shape = () if squeeze else (B,)
    for name, want_dtype in (("threshold", dtype), ("num_ties", "int32"), ("count", "int32")):
        a = getattr(sel, name)
        assert lib_of(a) == target.lib, f"{name} is a {lib_of(a)} array, want {target.lib}"
        assert device_name(a) == target.device, f"{name} is on {device_name(a)}, want {target.device}"
        assert dtype_name(a) == want_dtype, f"{name} has dtype {dtype_name(a)}, want {want_dtype}"
        assert tuple(a.shape) == want_shape, f"{name} has shape {tuple(a.shape)}, want {want_shape}"
    if sel.hit is not None:
        assert tuple(sel.hit.shape) in ((B,), want_shape) and dtype_name(sel.hit) == "bool"

    values = _rows(to_numpy(x))
    k_host, p_host = host(k), host(p)
    thr = to_numpy(sel.threshold).reshape(B)
    nt = to_numpy(sel.num_ties).reshape(B)
    cnt = to_numpy(sel.count).reshape(B)
    expected = oracle_select(values, k_host, p_host, ties)
    check_selection(values, k_host, p_host, ties, thr, nt, cnt, expected=expected)
    zero = thr == 0
    assert not np.signbit(thr[zero]).any(), "a zero threshold must be +0.0"

    mask = sel.mask()
    assert lib_of(mask) == target.lib and dtype_name(mask) == "bool"
    assert tuple(mask.shape) == tuple(x.shape)
    mask = _rows(to_numpy(mask))
    np.testing.assert_array_equal(mask, mask_from_selection(values, thr, nt))
    check_mask(values, k_host, p_host, ties, mask, expected=expected)
    np.testing.assert_array_equal(mask.sum(axis=1), cnt)

    if derived:
        check_indices_and_probs(target, sel, values, mask, cnt, squeeze)
        for mask_value in (float("-inf"), -1000.0):
            out = sel.apply(mask_value=mask_value)
            check_masked(target, x, out, mask, mask_value)
            assert np.array_equal(bits(x), before), "apply() changed the caller's logits"
        out = qrita.top_k_top_p(x, k, p, backend=target.backend, ties=ties, options=options)
        assert np.array_equal(bits(x), before), "top_k_top_p() changed the caller's logits"
        fused_mask = _rows(to_numpy(out)) != -np.inf
        check_mask(values, k_host, p_host, ties, fused_mask, expected=expected)
        check_masked(target, x, out, fused_mask, float("-inf"))
    return sel, expected


def check_masked(target: Target, x, out, mask: np.ndarray, mask_value: float) -> None:
    """``out`` is ``x`` masked by ``mask``: kept entries keep their exact bits, the rest are ``mask_value``."""
    assert lib_of(out) == target.lib and device_name(out) == target.device
    assert dtype_name(out) == dtype_name(x) and tuple(out.shape) == tuple(x.shape)
    got_bits, x_bits = _rows(bits(out)), _rows(bits(x))
    np.testing.assert_array_equal(got_bits[mask], x_bits[mask], err_msg="kept entries must keep their exact bits")
    fill = target.array(np.full(1, mask_value), dtype_name(x))
    masked = got_bits[~mask]
    # bits, not values: a mask value of -0.0 must not come out as +0.0
    assert (masked == bits(fill)[0]).all(), \
        f"entries not kept must be {to_numpy(fill)[0]!r} (bits {bits(fill)[0]}), got bits {np.unique(masked)[:5]}"


def check_indices_and_probs(target: Target, sel, values: np.ndarray, mask: np.ndarray, cnt: np.ndarray, squeeze: bool):
    """``indices()``: kept indices in ranking order, -1 padded; ``probs()`` aligned, summing to 1."""
    from qrita.reference import ranking

    idx, idx_count = sel.indices()
    assert lib_of(idx) == target.lib and dtype_name(idx) == "int64"
    width = int(cnt.max()) if cnt.size else 0
    idx = _rows(to_numpy(idx))
    assert idx.shape == (values.shape[0], width), f"indices shape {idx.shape}, want {(values.shape[0], width)}"
    np.testing.assert_array_equal(to_numpy(idx_count).reshape(-1), cnt)
    probs = sel.probs()
    assert lib_of(probs) == target.lib
    want_pdt = "float64" if dtype_name(sel.threshold) == "float64" else "float32"
    assert dtype_name(probs) == want_pdt
    probs = _rows(to_numpy(probs))
    assert probs.shape == idx.shape
    for b in range(values.shape[0]):
        c = int(cnt[b])
        ranked = ranking(values[b] + 0.0)
        np.testing.assert_array_equal(idx[b, :c], ranked[:c], err_msg=f"row {b}: indices not in ranking order")
        assert (idx[b, c:] == -1).all()
        assert mask[b, idx[b, :c]].all()
        assert (probs[b, c:] == 0).all()
        if c:
            tol = 1e-12 if want_pdt == "float64" else 2e-6
            np.testing.assert_allclose(probs[b, :c], expected_probs(values[b, idx[b, :c]]), rtol=1e-5, atol=tol)
            np.testing.assert_allclose(probs[b, :c].sum(), 1.0, rtol=1e-5)


def package_env() -> dict[str, str]:
    """The environment for a child Python that must import this very qrita (installed or from the tree)."""
    from pathlib import Path

    import qrita

    root = str(Path(qrita.__file__).resolve().parents[1])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root, *filter(None, [env.get("PYTHONPATH")])])
    return env


def cuda_peak_extra_bytes(call) -> int:
    """Peak device memory ``call()`` allocates beyond what is already allocated (torch's
    allocator; warm the call up first so that compiles and caches are not counted)."""
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    base = torch.cuda.memory_allocated()
    call()
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - base
