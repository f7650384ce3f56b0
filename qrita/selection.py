"""``Selection``: the per-row answer ``(threshold, num_ties, count)`` and what can
be derived from it.

A selection describes the kept set of each row completely: every entry
``> threshold``, plus the first ``num_ties`` entries equal to ``threshold`` in
index order.  The methods here derive masks, masked logits, index lists and
probabilities from it with plain array operations of the caller's library;
GPU backends replace the hot ones (masking) with fused kernels.
"""

from __future__ import annotations

import sys

import numpy as np

from . import _arrays


class Selection:
    """The kept set of every row.

    Attributes (arrays of the logits' library and device; shape ``[B]``, or
    ``()`` for 1-D logits):

    * ``threshold``: the smallest kept value, in the logits' dtype (``-inf``
      for a row that keeps nothing).
    * ``num_ties``: int32, how many entries equal to ``threshold`` are kept
      (lowest indices first under ``ties="lowest_index"``).
    * ``count``: int32, how many entries are kept.
    * ``backend``: the name of the backend that computed it.
    * ``hit``: bool ``[B]`` or None, whether the sigma-truncation held the
      answer (a debugging aid).
    """

    def __init__(self, threshold, num_ties, count, *, logits, lib, dtype, backend, hit=None, squeeze=False):
        self._threshold = threshold  # [B]
        self._num_ties = num_ties
        self._count = count
        self._logits = logits  # the 2-D view of the caller's logits
        self._lib = lib
        self._dtype = dtype
        self._squeeze = squeeze
        self.backend = backend
        self.hit = hit

    # --- the answer -------------------------------------------------------------
    def _out(self, a):
        return a.reshape(()) if self._squeeze else a

    @property
    def threshold(self):
        return self._out(self._threshold)

    @property
    def num_ties(self):
        return self._out(self._num_ties)

    @property
    def count(self):
        return self._out(self._count)

    def __repr__(self) -> str:
        B = self._logits.shape[0]
        return f"Selection(B={B}, backend={self.backend!r}, lib={self._lib!r}, dtype={self._dtype!r})"

    # --- derived views --------------------------------------------------------------
    def _logits2d(self, logits):
        if logits is None:
            return self._logits
        if tuple(logits.shape[-1:]) != tuple(self._logits.shape[-1:]) or logits.ndim not in (1, 2):
            raise ValueError(
                f"logits must have the selection's shape {tuple(self._logits.shape)}, got {tuple(logits.shape)}"
            )
        return logits if logits.ndim == 2 else logits[None]

    def _keep(self, x2d):
        """bool ``[B, V]``: x > thr, or x == thr among the first num_ties equal entries."""
        thr = self._threshold[:, None]
        if self._lib == "cupy":
            # CuPy compiles its elementwise kernels with -ftz=true: float32 compares would
            # flush subnormal values to zero.  Order keys compare them exactly.
            x2d, thr = _cupy_keys(x2d), _cupy_keys(thr)
        gt = x2d > thr
        eq = x2d == thr
        if self._lib == "torch":
            rank = eq.cumsum(dim=1, dtype=sys.modules["torch"].int32)
        else:
            xp = _arrays.module(self._lib)
            rank = xp.cumsum(eq, axis=1, dtype=xp.int32)
        return gt | (eq & (rank <= self._num_ties[:, None]))

    def mask(self):
        """bool ``[B, V]`` (``[V]`` for 1-D logits): True where the entry is kept."""
        return self._out_rows(self._keep(self._logits))

    def _out_rows(self, a):
        return a[0] if self._squeeze else a

    def apply(self, logits=None, mask_value: float = float("-inf"), inplace: bool = False):
        """The masked logits: kept entries keep their exact bits, the rest become ``mask_value``.

        ``logits`` defaults to the array the selection was computed from.  With
        ``inplace=True`` it is written in place and returned.
        """
        target = self._logits2d(logits)
        keep = self._keep(target)
        if self._lib == "torch":
            if inplace:
                target.masked_fill_(~keep, mask_value)
                return logits if logits is not None else self._logits_for_return()
            fill = sys.modules["torch"].full((), mask_value, dtype=target.dtype, device=target.device)
            return self._out_rows(sys.modules["torch"].where(keep, target, fill))
        xp = _arrays.module(self._lib)
        # through the raw bits, the fill's bits made on the host: CuPy's float copies wrote +0.0 for a mask value
        # of -0.0 (``target[~keep] = mask_value``, and copyto from a 0-d float array; H100, session 37)
        ubits = np.dtype(f"u{target.dtype.itemsize}")
        fill = xp.asarray(np.asarray(mask_value, dtype=target.dtype).view(ubits))
        if inplace:
            xp.copyto(target.view(ubits), fill, where=~keep)
            return logits if logits is not None else self._logits_for_return()
        return self._out_rows(xp.where(keep, target.view(ubits), fill).view(target.dtype))

    def _logits_for_return(self):
        return self._logits[0] if self._squeeze else self._logits

    def indices(self):
        """``(indices, count)``: int64 ``[B, max(count)]`` kept indices in ranking
        order (value descending, then index ascending), padded with -1."""
        order = self._ranked_indices()
        return self._out_rows(order), self.count

    def probs(self, logits=None):
        """Probabilities renormalised over the kept set, aligned with :meth:`indices`
        (float32; float64 for float64 logits; 0 in the padding).

        ``+inf`` entries share all of a row's mass equally.
        """
        x = self._logits2d(logits)
        order = self._ranked_indices()
        lib = self._lib
        if lib == "torch":
            torch = sys.modules["torch"]
            wdt = torch.float64 if x.dtype == torch.float64 else torch.float32
            vals = torch.gather(x.to(wdt), 1, order.clamp(min=0))
            valid = order >= 0
            vals = torch.where(valid, vals, torch.full_like(vals, float("-inf")))
            return self._out_rows(_softmax_kept(vals, valid, torch))
        xp = _arrays.module(lib)
        if lib == "numpy" and self._dtype == "bfloat16":
            xf = _arrays.host_values_f64(x, lib, self._dtype).astype(np.float32)
        else:
            xf = x.astype(xp.float64 if self._dtype == "float64" else xp.float32)
        valid = order >= 0
        vals = xp.take_along_axis(xf, xp.maximum(order, 0), axis=1)
        vals = xp.where(valid, vals, xp.asarray(-np.inf, dtype=vals.dtype))
        return self._out_rows(_softmax_kept(vals, valid, xp))

    def _ranked_indices(self):
        """int64 ``[B, max(count)]`` kept indices in ranking order, -1 padded (host sync on GPU)."""
        x = self._logits
        keep = self._keep(x)
        B = x.shape[0]
        lib = self._lib
        if lib == "numpy":
            vals = _arrays.host_values_f64(x, lib, self._dtype)
            counts = self._count.astype(np.int64)
            width = int(counts.max()) if B else 0
            out = np.full((B, width), -1, dtype=np.int64)
            for b in range(B):
                idx = np.flatnonzero(keep[b])
                # +0.0 folds -0.0 into +0.0 so that equal values tie
                order = np.lexsort((idx, -(vals[b, idx] + 0.0)))
                out[b, : idx.size] = idx[order]
            return out
        if lib == "torch":
            torch = sys.modules["torch"]
            width = int(self._count.max().item()) if B else 0
            # float64 logits rank in float64 (float32 would merge distinct values into ties)
            wide = x.double() if x.dtype == torch.float64 else x.float()
            masked = torch.where(keep, wide + 0.0, torch.full((), float("-inf"), dtype=wide.dtype, device=x.device))
            _, order = torch.sort(masked, dim=1, descending=True, stable=True)
            order = order[:, :width].to(torch.int64)
            cols = torch.arange(width, device=x.device)[None, :]
            return torch.where(cols < self._count[:, None], order, torch.full_like(order, -1))
        cupy = sys.modules["cupy"]
        width = int(self._count.max()) if B else 0
        # rank by order keys, not floats (see _keep: CuPy's kernels flush subnormals); equal
        # values have equal keys (-0.0 and +0.0 too), and entries not kept sort last
        down = cupy.where(keep, -_cupy_keys(x).astype(cupy.int64), cupy.int64(1))
        # cupy has no stable descending sort: sort ascending on (-key, index)
        idx = cupy.broadcast_to(cupy.arange(x.shape[1]), x.shape)
        rows = cupy.repeat(cupy.arange(B), x.shape[1])
        order = cupy.lexsort(cupy.stack([idx.reshape(-1), down.reshape(-1), rows]))
        order = (order.reshape(B, x.shape[1]) % x.shape[1])[:, :width].astype(cupy.int64)
        cols = cupy.arange(width)[None, :]
        return cupy.where(cols < self._count[:, None], order, -1)


def _cupy_keys(a):
    """Order keys (:func:`qrita.core.keys.keys_from_bits`) of a cupy float array, as int64.

    Keys of 64-bit values are offset by the sign bit, so that they also order correctly
    as signed integers (as the ranking above needs them).
    """
    from .core.keys import KEY_CONSTANTS, keys_from_bits

    kc = KEY_CONSTANTS[np.dtype(a.dtype).name]
    key = keys_from_bits(a.view(kc.uint), kc.dtype)
    if kc.width == 64:
        return (key ^ np.uint64(kc.sign)).view(np.int64)
    return key.astype(np.int64)


def _softmax_kept(vals, valid, xp):
    """Renormalised softmax over the valid columns; ``+inf`` entries share the mass."""
    if xp is sys.modules.get("torch"):
        m = vals.max(dim=1, keepdim=True).values if vals.shape[1] else vals.sum(dim=1, keepdim=True)
        isinf = vals == float("inf")
        n_inf = isinf.sum(dim=1, keepdim=True)
        e = xp.where(valid, xp.exp(vals - xp.where(n_inf > 0, xp.zeros_like(m), m)), xp.zeros_like(vals))
        e = xp.where(n_inf > 0, isinf.to(vals.dtype), e)
        z = e.sum(dim=1, keepdim=True)
        return xp.where(z > 0, e / xp.where(z > 0, z, xp.ones_like(z)), xp.zeros_like(e))
    m = vals.max(axis=1, keepdims=True) if vals.shape[1] else vals.sum(axis=1, keepdims=True)
    isinf = vals == np.inf
    n_inf = isinf.sum(axis=1, keepdims=True)
    with np.errstate(invalid="ignore", over="ignore"):
        e = xp.where(valid, xp.exp(vals - xp.where(n_inf > 0, 0, m)), 0)
        e = xp.where(n_inf > 0, isinf.astype(vals.dtype), e).astype(vals.dtype)
        z = e.sum(axis=1, keepdims=True)
        return xp.where(z > 0, e / xp.where(z > 0, z, 1), 0).astype(vals.dtype)
