"""``qrita.sample``: one token per row, drawn from the kept set.

Method (exact).  A row keeps the set ``K`` (from :func:`qrita.select`).  Token
``i`` gets Gumbel noise ``g_i`` from the counter-based RNG of
:mod:`qrita.core.rng`, keyed by the row's seed and ``i`` itself, and the
draw is

    argmax over i in K of (x_i + g_i)

which picks ``i`` with probability ``exp(x_i) / sum_{j in K} exp(x_j)`` (the
Gumbel-max trick; equivalently an exponential race).  When ``K`` holds
``+inf`` entries, they share all of the mass: the draw is the argmax of
``g_i`` over them alone.  A row that keeps nothing gives ``-1``.  Keys are
computed in float64 from 53-bit uniforms, so the method is exact up to that
resolution (see :mod:`qrita.core.rng`).

Reproducibility.  ``seeds`` (an int, or an integer array ``[B]``) fixes each
row's stream: the token depends only on the seed and the row's own logits,
not on the batch, on ``B`` or on the backend (up to the top-p ambiguity
window of SPEC.md, and an ulp of ``log`` between math libraries).  Without
seeds, one seed per row is drawn from ``generator`` (a ``torch.Generator`` or
a numpy ``Generator``/``RandomState``) or from the library's default
generator (``torch``'s default generator of the logits' device, numpy's global
``RandomState``, cupy's default), then the draw goes on the same way.

This generic path works for every backend with array operations of the
caller's library: it masks the full ``[B, V]`` rows (in blocks of rows, so the
float64 scratch stays bounded) and never synchronises with the GPU when the
seeds or the generator live on the logits' device.  A backend may draw in its
own kernels instead (``Backend.sample``; the Triton backend does, from the
candidates of the rows that hit and in one pass over the others); it must draw
the same tokens.

Interop.  numpy, torch (CPU/CUDA) and cupy arrays come back in their own
library and device.  Any other DLPack producer (JAX, TensorFlow, ...) is
taken through ``torch.from_dlpack`` and the result is a torch tensor.
"""

from __future__ import annotations

import numbers
import sys
from typing import Any

import numpy as np

from . import _arrays
from .api import _as_rows, _check_enabled, _convert_array, _make_selection, make_request, select
from .backends import resolve
from .core import rng
from .errors import QritaTypeError, QritaValueError
from .selection import Selection

# float64 scratch per block of rows: a few arrays of this many entries.
_BLOCK_ELEMENTS = 1 << 23

_GOLDEN_SIGNED = rng.as_signed64(rng.GOLDEN_GAMMA)
_MUL1_SIGNED = rng.as_signed64(rng.MIX_MULTIPLIER_1)
_MUL2_SIGNED = rng.as_signed64(rng.MIX_MULTIPLIER_2)
_UNIFORM_SHIFT = 64 - rng.UNIFORM_BITS
_UNIFORM_SCALE = 2.0**-rng.UNIFORM_BITS


def sample(logits, k=None, p=None, *, seeds=None, generator=None, backend: str = "auto", ties: str = "lowest_index"):
    """Draw one token per row from the set that top-k/top-p keep.

    logits: ``[B, V]`` (or ``[V]``) logits, as for :func:`qrita.select`; also
        any DLPack producer (answered as a torch tensor).
    k, p, backend, ties: as for :func:`qrita.select`.
    seeds: None, an int, or an integer array ``[B]`` on the logits' device:
        per-row seeds of the counter-based RNG (:mod:`qrita.core.rng`).
    generator: without seeds, where each row's seed comes from: a
        ``torch.Generator``, a numpy ``Generator``/``RandomState``, or None for
        the library's default.

    Returns int64 ``[B]`` (``()`` for 1-D logits) in the logits' library and
    device: token indices, ``-1`` where a row keeps nothing.  Token ``i`` of the
    kept set ``K`` is drawn with probability ``exp(x_i) / sum_{j in K} exp(x_j)``.
    """
    logits = _accept_dlpack(logits)
    rows, lib, device, _, _ = _as_rows(logits)
    B = int(rows.shape[0])
    # validate everything before any work; a generator is drawn from only once the request is valid
    raw = _raw_seeds(seeds, generator, B, lib, device, rows) if seeds is not None else None
    _check_generator(seeds, generator)
    chosen = None
    if _check_enabled(False):  # QRITA_CHECK: select() validates the values and compares with the oracle
        selection = select(logits, k, p, backend=backend, ties=ties)
    else:
        req, squeeze = make_request(logits, k, p, ties=ties)
        chosen = resolve(backend, req)
    if raw is None:
        raw = _raw_seeds(None, generator, B, lib, device, rows)
    # the backend may mix the seeds in one launch of its own (the same bits)
    states = None if chosen is None else chosen.stream_states(raw, lib)
    if states is None:
        states = _mix64(raw, lib)
    if chosen is not None:
        # a GPU backend draws in its own kernels, without the [B, V] noise of _draw
        tokens = chosen.sample(req, states)
        if tokens is not None:
            return tokens.reshape(()) if squeeze else tokens
        selection = _make_selection(req, chosen.select(req), chosen.name, squeeze)
    return _draw(selection, states)


def sample_from_selection(selection: Selection, *, seeds=None, generator=None):
    """:func:`sample` for a selection already made (same rules, same tokens)."""
    if not isinstance(selection, Selection):
        raise QritaTypeError(f"selection must be a qrita.Selection, got {type(selection).__name__}")
    rows = selection._logits
    lib = selection._lib
    states = _stream_states(seeds, generator, int(rows.shape[0]), lib, _arrays.device_of(rows, lib), rows)
    return _draw(selection, states)


# --- argument handling ---------------------------------------------------------------


def _accept_dlpack(logits: Any) -> Any:
    """numpy/torch/cupy pass through; another DLPack producer becomes a torch tensor."""
    if _arrays.library_of(logits) is not None or not hasattr(logits, "__dlpack__"):
        return logits
    try:
        import torch
    except ImportError as exc:
        raise QritaTypeError(
            f"logits of type {type(logits).__name__} are taken through torch.from_dlpack, "
            'but torch is not installed (pip install "qrita[torch]")'
        ) from exc
    return torch.from_dlpack(logits)


def _check_generator(seeds, generator) -> None:
    if seeds is not None and generator is not None:
        raise QritaValueError("pass seeds or generator, not both (seeds fix every row's stream)")
    torch = sys.modules.get("torch")
    if generator is None or isinstance(generator, (np.random.Generator, np.random.RandomState)):
        return
    if torch is not None and isinstance(generator, torch.Generator):
        return
    raise QritaTypeError(
        f"generator must be None, a torch.Generator, or a numpy Generator/RandomState, got {type(generator).__name__}"
    )


def _stream_states(seeds, generator, B: int, lib: str, device: str, like) -> Any:
    """Per-row stream states ``[B]``: uint64 (numpy/cupy) or int64 (torch, same bits)."""
    return _mix64(_raw_seeds(seeds, generator, B, lib, device, like), lib)


def _raw_seeds(seeds, generator, B: int, lib: str, device: str, like) -> Any:
    """Validated per-row seeds ``[B]`` before ``mix64``: a fresh array the caller owns."""
    _check_generator(seeds, generator)
    if seeds is None:
        return _draw_seeds(generator, B, lib, device, like)
    return _seed_array(seeds, B, lib, device, like)


def _seed_array(seeds, B: int, lib: str, device: str, like) -> Any:
    """Validate ``seeds`` and return them as a fresh ``[B]`` array of 64-bit patterns."""
    if isinstance(seeds, (bool, np.bool_)):
        raise QritaTypeError(f"seeds must be an integer or an integer array [B], got bool {seeds}")
    if isinstance(seeds, np.ndarray) and seeds.ndim == 0 and np.issubdtype(seeds.dtype, np.integer):
        seeds = seeds.item()
    if isinstance(seeds, numbers.Integral):
        return _full(B, int(seeds), lib, like)
    if isinstance(seeds, numbers.Number) or (isinstance(seeds, np.ndarray) and seeds.ndim == 0):
        raise QritaTypeError(f"seeds must be an integer or an integer array [B], got {type(seeds).__name__} {seeds!r}")
    s_lib = _arrays.library_of(seeds)
    if s_lib is None:
        raise QritaTypeError(f"seeds must be None, an integer, or an integer array [B], got {type(seeds).__name__}")
    if tuple(seeds.shape) not in ((B,), ()):
        raise QritaValueError(f"seeds must have shape [B]=[{B}], got {tuple(seeds.shape)}")
    s_device = _arrays.device_of(seeds, s_lib)
    if s_device != device:
        raise QritaValueError(f"seeds must be on the logits' device {device!r}, got {s_device!r}")
    dt = _arrays.dtype_name(seeds, s_lib)
    if not _arrays.is_integer_dtype(dt):
        raise QritaTypeError(f"seeds must have an integer dtype, got {dt}")
    seeds = _convert_array(seeds, s_lib, lib, like)
    if lib == "torch":
        torch = sys.modules["torch"]
        out = seeds.to(torch.int64).reshape(-1).expand(B)
        return out.clone()
    xp = _arrays.module(lib)
    return xp.broadcast_to(seeds.astype(xp.uint64).reshape(-1), (B,)).copy()


def _full(B: int, seed: int, lib: str, like) -> Any:
    if lib == "torch":
        torch = sys.modules["torch"]
        return torch.full((B,), rng.as_signed64(seed), dtype=torch.int64, device=like.device)
    xp = _arrays.module(lib)
    if lib == "cupy":
        with xp.cuda.Device(like.device.id):
            return xp.full((B,), seed & rng.MASK64, dtype=xp.uint64)
    return np.full((B,), seed & rng.MASK64, dtype=np.uint64)


def _draw_seeds(generator, B: int, lib: str, device: str, like) -> Any:
    """One fresh 64-bit seed per row from ``generator`` (or the library default)."""
    torch = sys.modules.get("torch")
    if generator is None:
        if lib == "torch":
            return torch.randint(-(2**63), 2**63 - 1, (B,), dtype=torch.int64, device=like.device)
        if lib == "cupy":
            cupy = sys.modules["cupy"]
            with cupy.cuda.Device(like.device.id):
                return cupy.random.randint(0, 2**62, size=B, dtype=cupy.int64).astype(cupy.uint64)
        return np.random.randint(0, 2**64, size=B, dtype=np.uint64)
    if torch is not None and isinstance(generator, torch.Generator):
        raw = torch.randint(-(2**63), 2**63 - 1, (B,), dtype=torch.int64, device=generator.device, generator=generator)
        if lib == "torch":
            return raw.to(like.device)
        if lib == "numpy":
            return raw.cpu().numpy().astype(np.uint64)
        cupy = sys.modules["cupy"]
        with cupy.cuda.Device(like.device.id):
            return cupy.asarray(raw.cpu().numpy()).astype(cupy.uint64)
    if isinstance(generator, np.random.Generator):
        host = generator.integers(0, 2**64, size=B, dtype=np.uint64)
    else:  # np.random.RandomState (checked by _check_generator)
        host = generator.randint(0, 2**64, size=B, dtype=np.uint64)
    if lib == "numpy":
        return host
    if lib == "torch":
        return torch.from_numpy(host.view(np.int64)).to(like.device)
    cupy = sys.modules["cupy"]
    with cupy.cuda.Device(like.device.id):
        return cupy.asarray(host)


# --- the RNG of qrita.core.rng, vectorised -----------------------------------------------------
# numpy/cupy work on uint64; torch on int64 (same bits: see qrita.core.rng).


def _srl(z, shift: int):
    """Logical right shift of an int64 torch tensor."""
    return (z >> shift) & ((1 << (64 - shift)) - 1)


def _mix64(z, lib: str):
    """``mix64`` elementwise, in place on ``z`` (which the caller owns); returns ``z``."""
    s1, s2, s3 = rng.MIX_SHIFTS
    if lib == "torch":
        z ^= _srl(z, s1)
        z *= _MUL1_SIGNED
        z ^= _srl(z, s2)
        z *= _MUL2_SIGNED
        z ^= _srl(z, s3)
        return z
    xp = _arrays.module(lib)
    u64 = xp.uint64
    z ^= z >> u64(s1)
    z *= u64(rng.MIX_MULTIPLIER_1)
    z ^= z >> u64(s2)
    z *= u64(rng.MIX_MULTIPLIER_2)
    z ^= z >> u64(s3)
    return z


def random_bits(states, V: int, lib: str, like=None):
    """``[B, V]`` 64-bit patterns ``stream_bits(states[b], i)`` for ``i < V``
    (uint64 for numpy/cupy, int64 for torch)."""
    if lib == "torch":
        torch = sys.modules["torch"]
        steps = torch.arange(1, V + 1, dtype=torch.int64, device=states.device) * _GOLDEN_SIGNED
        return _mix64(states[:, None] + steps[None, :], lib)
    xp = _arrays.module(lib)
    steps = xp.arange(1, V + 1, dtype=xp.uint64) * xp.uint64(rng.GOLDEN_GAMMA)
    return _mix64(states[:, None] + steps[None, :], lib)


def gumbel_noise(states, V: int, lib: str):
    """float64 ``[B, V]``: ``-log(-log(uniform))`` of :func:`random_bits` (``qrita.core.rng``)."""
    z = random_bits(states, V, lib)
    if lib == "torch":
        torch = sys.modules["torch"]
        u = (_srl(z, _UNIFORM_SHIFT) + 1).to(torch.float64)
        u *= _UNIFORM_SCALE
        return u.log_().neg_().log_().neg_()
    xp = _arrays.module(lib)
    u = ((z >> xp.uint64(_UNIFORM_SHIFT)) + xp.uint64(1)).astype(xp.float64)
    u *= _UNIFORM_SCALE
    with np.errstate(divide="ignore"):
        return -xp.log(-xp.log(u))


# --- the draw ---------------------------------------------------------------------------


def _draw(selection: Selection, states) -> Any:
    """int64 ``[B]``: the Gumbel-max winner of every row's kept set (-1 if empty)."""
    rows = selection._logits
    lib = selection._lib
    B, V = int(rows.shape[0]), int(rows.shape[1])
    block = max(1, _BLOCK_ELEMENTS // max(V, 1))
    if B <= block:
        out = _draw_block(selection, rows, states, lib)
    else:
        if lib == "torch":
            out = sys.modules["torch"].empty(B, dtype=sys.modules["torch"].int64, device=rows.device)
        else:
            out = _arrays.module(lib).empty(B, dtype=np.int64)
        for b0 in range(0, B, block):
            b1 = min(B, b0 + block)
            out[b0:b1] = _draw_block(selection, rows, states, lib, b0, b1)
    return out.reshape(()) if selection._squeeze else out


def _draw_block(selection: Selection, rows, states, lib: str, b0: int = 0, b1: int | None = None):
    b1 = int(rows.shape[0]) if b1 is None else b1
    x = rows[b0:b1]
    count = selection._count[b0:b1]
    keep = Selection(
        selection._threshold[b0:b1],
        selection._num_ties[b0:b1],
        count,
        logits=x,
        lib=lib,
        dtype=selection._dtype,
        backend=selection.backend,
    )._keep(x)
    g = gumbel_noise(states[b0:b1], int(rows.shape[1]), lib)
    inf = float("inf")
    if lib == "torch":
        torch = sys.modules["torch"]
        x64 = x.to(torch.float64)
        keep_inf = keep & (x64 == inf)
        has_inf = keep_inf.any(dim=1, keepdim=True)
        # +inf entries share the mass: they race on the noise alone
        key = g.add_(torch.where(has_inf, 0.0, x64))
        key = key.masked_fill_(~torch.where(has_inf, keep_inf, keep), -inf)
        winner = key.argmax(dim=1)
        return torch.where(count > 0, winner, torch.full_like(winner, -1))
    xp = _arrays.module(lib)
    if lib == "numpy" and selection._dtype == "bfloat16":
        x64 = _arrays.host_values_f64(x, lib, selection._dtype)
    else:
        x64 = x.astype(xp.float64)
    keep_inf = keep & (x64 == inf)
    has_inf = keep_inf.any(axis=1, keepdims=True)
    with np.errstate(invalid="ignore"):
        key = g + xp.where(has_inf, 0.0, x64)
    key = xp.where(xp.where(has_inf, keep_inf, keep), key, -inf)
    winner = key.argmax(axis=1).astype(xp.int64)
    return xp.where(count > 0, winner, xp.int64(-1))
