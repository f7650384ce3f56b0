"""Benchmark logits: fixed-seed distributions, generated where they are used.

Every generator draws float32 ``[B, V]`` with torch on the target device (the
GPU when there is one), in chunks of rows so the transient memory stays small,
from a generator seeded by ``(seed, dist, B, V)``.  The same arguments on the
same kind of device give the same tensor; CPU and CUDA streams differ.  Then
the tensor is cast to the case's dtype.  No distribution produces zeros on
purpose (a zero-filled input can hide unwritten output).
"""

from __future__ import annotations

import math
import zlib

DISTS = {
    "zipf": "Zipf(1.1) log-probabilities, log p_i = -1.1 log(i) - log H, permuted independently per row",
    "gaussian": "standard normal logits",
    "llm": "LLM-like: a N(0, 2^2) floor with 16 strong outliers per row at +10..+20",
    "lowtemp": "low temperature: N(0, 1) with one dominant token per row at +30",
    "grammar": "grammar-constrained: N(0, 1) on ~0.5% of the vocab (at least one token), -inf elsewhere",
}

ZIPF_S = 1.1
LLM_OUTLIERS = 16
GRAMMAR_ALLOWED = 0.005
_CHUNK_ELEMS = 1 << 26  # rows per generation step: about 256 MiB of float32


def seed_for(seed: int, dist: str, B: int, V: int) -> int:
    return (int(seed) * 1_000_003 + zlib.crc32(f"{dist}/{B}/{V}".encode())) % (2**63 - 1)


def _zipf_base(V: int, device):
    import torch

    ranks = torch.arange(1, V + 1, dtype=torch.float64, device=device)
    logp = -ZIPF_S * torch.log(ranks)
    return (logp - torch.logsumexp(logp, dim=0)).to(torch.float32)


def _chunk(dist: str, rows: int, V: int, gen, device, zipf_base):
    import torch

    shape = (rows, V)
    if dist == "zipf":
        perm = torch.rand(shape, generator=gen, device=device).argsort(dim=1)
        return zipf_base[perm]
    if dist == "gaussian":
        return torch.randn(shape, generator=gen, device=device)
    if dist == "llm":
        x = torch.randn(shape, generator=gen, device=device) * 2.0
        where = torch.randint(0, V, (rows, LLM_OUTLIERS), generator=gen, device=device)
        lift = 10.0 + 10.0 * torch.rand((rows, LLM_OUTLIERS), generator=gen, device=device)
        return x.scatter_(1, where, lift)
    if dist == "lowtemp":
        x = torch.randn(shape, generator=gen, device=device)
        where = torch.randint(0, V, (rows, 1), generator=gen, device=device)
        return x.scatter_(1, where, torch.full((rows, 1), 30.0, device=device))
    if dist == "grammar":
        x = torch.randn(shape, generator=gen, device=device)
        allowed = torch.rand(shape, generator=gen, device=device) < GRAMMAR_ALLOWED
        one = torch.randint(0, V, (rows, 1), generator=gen, device=device)
        allowed.scatter_(1, one, True)
        return x.masked_fill_(~allowed, -math.inf)
    raise ValueError(f"dist must be one of {', '.join(DISTS)}, got {dist!r}")


def make_logits(dist: str, B: int, V: int, *, device: str = "cpu", seed: int = 0):
    """float32 torch tensor ``[B, V]`` of distribution ``dist`` on ``device``."""
    import torch

    if dist not in DISTS:
        raise ValueError(f"dist must be one of {', '.join(DISTS)}, got {dist!r}")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed_for(seed, dist, B, V))
    out = torch.empty((B, V), dtype=torch.float32, device=device)
    zipf_base = _zipf_base(V, device) if dist == "zipf" else None
    step = max(1, _CHUNK_ELEMS // V)
    for start in range(0, B, step):
        stop = min(B, start + step)
        out[start:stop] = _chunk(dist, stop - start, V, gen, device, zipf_base)
    return out


def cast(x, dtype: str):
    """``x`` in ``dtype`` ("float32", "bfloat16", "float16"); rounds to nearest."""
    import torch

    return x if dtype == "float32" else x.to(getattr(torch, dtype))
