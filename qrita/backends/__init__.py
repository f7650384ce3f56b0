"""The one place that chooses a backend.

Each backend lives in ``qrita/backends/<name>/`` and exposes ``BACKEND`` (an
instance of :class:`~qrita.backends.base.Backend`).  Modules are imported
lazily, so ``import qrita`` loads no GPU library.

* A backend named explicitly either runs or raises
  :class:`~qrita.errors.BackendUnavailableError` with the reason and the fix.
* ``"auto"`` takes the first backend of :data:`AUTO_ORDER` that can serve the
  request where the data already is; it never moves data between devices.
"""

from __future__ import annotations

import importlib

from ..errors import BackendUnavailableError, UnknownBackendError
from .base import Backend, Request

# name -> module; the order is the "auto" preference (fastest first).
REGISTRY = {
    "triton": "qrita.backends.triton",
    "cupy": "qrita.backends.cupy",
    "numba": "qrita.backends.numba",
    "numpy": "qrita.backends.numpy",
    "reference": "qrita.backends.reference",
}
AUTO_ORDER = tuple(REGISTRY)

_loaded: dict[str, Backend | str] = {}


def _load(name: str) -> Backend | str:
    """The backend object, or a string saying why its module cannot load."""
    if name not in _loaded:
        try:
            module = importlib.import_module(REGISTRY[name])
            _loaded[name] = module.BACKEND
        except ImportError as exc:  # the backend's own dependencies are missing
            _loaded[name] = f"cannot import {REGISTRY[name]}: {exc}"
    return _loaded[name]


def get_backend(name: str) -> Backend:
    """The backend called ``name`` if it can run in this process; raises otherwise."""
    if name not in REGISTRY:
        raise UnknownBackendError(
            f"backend must be 'auto' or one of {', '.join(repr(n) for n in REGISTRY)}, got {name!r}"
        )
    backend = _load(name)
    if isinstance(backend, str):
        raise BackendUnavailableError(f"backend {name!r} is unavailable: {backend}")
    reason = backend.unavailable_reason()
    if reason is not None:
        raise BackendUnavailableError(f"backend {name!r} is unavailable: {reason}")
    return backend


def available_backends() -> dict[str, str | None]:
    """``{name: None}`` for backends that can run here, ``{name: reason}`` otherwise."""
    out: dict[str, str | None] = {}
    for name in REGISTRY:
        backend = _load(name)
        out[name] = backend if isinstance(backend, str) else backend.unavailable_reason()
    return out


def capabilities() -> dict[str, object]:
    """``{name: Capabilities}`` for every backend whose module imports."""
    caps = {}
    for name in REGISTRY:
        backend = _load(name)
        if not isinstance(backend, str):
            caps[name] = backend.capabilities
    return caps


def resolve(name: str, req: Request) -> Backend:
    """The backend that serves ``req``: ``name`` itself, or the best one for "auto"."""
    if name != "auto":
        backend = get_backend(name)
        reason = backend.cannot_run(req, explicit=True)
        if reason is not None:
            raise BackendUnavailableError(reason)
        return backend
    reasons = []
    for candidate in AUTO_ORDER:
        backend = _load(candidate)
        if isinstance(backend, str):
            reasons.append(f"{candidate}: {backend}")
            continue
        # device/library fit first: it needs no import, so "auto" on CPU arrays
        # never loads a GPU library
        reason = backend.cannot_run(req, explicit=False) or backend.unavailable_reason()
        if reason is None:
            return backend
        reasons.append(f"{candidate}: {reason}")
    raise BackendUnavailableError(
        f"no backend can serve {req.lib} {req.dtype} logits on {req.device!r}: " + "; ".join(reasons)
    )
