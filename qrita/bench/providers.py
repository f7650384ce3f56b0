"""Who gets measured: qrita's backends and the peers, each behind one small adapter.

A provider turns a case into a :class:`Prepared` op: a callable over the
logits (or whatever it consumes), plus what it outputs, whether it writes its
input in place and how many bytes it must move at least.  Everything the op
needs besides its input (per-row tensors, probabilities for a probs-based peer)
is built in :meth:`Provider.prepare`, outside the timed region.

Adding a peer is one subclass and one :func:`register` call::

    class MyPeer(Provider):
        name = "my-peer"
        ties = "all"                      # the tie convention its match rate is read under
        def unavailable_reason(self, device): ...   # None, or why it cannot run here
        def supports(self, case, scenario): ...     # None, or why it skips this case
        def prepare(self, ctx): return Prepared(op=..., input=ctx.x, inplace=False, output="mask")

    register(MyPeer())

Outputs the gate understands: ``"mask"`` (logits with dropped entries at
-inf), ``"probs"`` (renormalised probabilities, dropped entries 0),
``"select"`` (a :class:`qrita.Selection`) and ``"sample"`` (token ids ``[B]``).
"""

from __future__ import annotations

import fnmatch
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .matrix import Case, Scenario


@dataclass
class Context:
    """What a provider may use to prepare a case (everything on the benchmark device)."""

    case: Case
    scenario: Scenario
    x: Any  # torch [B, V] logits in the case's dtype; never written by a provider
    k: Any  # None | int | numpy int64 [B]   (qrita conventions, see matrix.row_params)
    p: Any  # None | float | numpy float32 [B]
    device: str  # "cpu" or "cuda"
    ties: str  # the tie rule qrita providers run with

    def k_tensor(self, dtype=None):
        """``k`` as a ``[B]`` tensor on the device (None stays None); "off" is ``V``."""
        import torch

        if self.k is None:
            return None
        k = np.full(self.case.B, self.k) if np.isscalar(self.k) else self.k
        return torch.as_tensor(k, dtype=dtype or torch.int64).to(self.x.device)

    def k_p_args(self, k_dtype=None):
        """``(k, p)`` as an op takes them: Python scalars, None, or ``[B]`` device tensors."""
        k = self.k if self.k is None or np.isscalar(self.k) else self.k_tensor(k_dtype)
        p = self.p if self.p is None or np.isscalar(self.p) else self.p_tensor()
        k = int(k) if isinstance(k, (int, np.integer)) else k
        p = float(p) if isinstance(p, (float, np.floating)) else p
        return k, p

    def p_tensor(self):
        """``p`` as a float32 ``[B]`` tensor on the device (None stays None); "off" is ``1.0``."""
        import torch

        if self.p is None:
            return None
        p = np.full(self.case.B, self.p, dtype=np.float32) if np.isscalar(self.p) else self.p
        return torch.as_tensor(p, dtype=torch.float32).to(self.x.device)


@dataclass
class Prepared:
    """An op ready to run and time.

    op: ``op(target) -> output``; ``target`` is ``wrap(buffer)`` where buffer is
        ``input`` itself (out of place) or a fresh copy of it (in place).
    input: the torch tensor the op consumes (the logits, or probabilities).
    inplace: the op may write ``target``; the timer then restores it from
        ``input`` before every call (inside the graph) and subtracts the copy.
    output: "mask" | "probs" | "select" | "sample".
    bytes_moved: the least traffic the op's job needs (the roofline's numerator).
    wrap: maps the torch buffer to the array the op takes (e.g. a zero-copy cupy view).
    """

    op: Callable[[Any], Any]
    input: Any
    inplace: bool
    output: str
    bytes_moved: int
    wrap: Callable[[Any], Any] = field(default=lambda t: t)
    note: str = ""


def logits_bytes(x, passes: int) -> int:
    return int(x.numel() * x.element_size() * passes)


class Provider:
    """Base adapter.  ``family`` is "qrita" (gated strictly) or "peer" (match rate only)."""

    name: str = ""
    family: str = "peer"
    ties: str = "all"  # the convention the headline match rate uses
    description: str = ""

    def unavailable_reason(self, device: str) -> str | None:
        return None

    def supports(self, case: Case, scenario: Scenario) -> str | None:
        return None

    def ready(self) -> bool:
        """False while a build (JIT) it needs is still running; the runner comes back later."""
        return True

    def not_ready_reason(self) -> str | None:
        """Why it will never become ready (a failed build), if so."""
        return None

    def prepare(self, ctx: Context) -> Prepared:  # pragma: no cover - abstract
        raise NotImplementedError


_PEERS: list[Provider] = []


def register(provider: Provider) -> Provider:
    """Add a peer to the registry (names must be unique)."""
    if any(p.name == provider.name for p in _PEERS):
        raise ValueError(f"a provider named {provider.name!r} is already registered")
    _PEERS.append(provider)
    return provider


# --- qrita ---------------------------------------------------------------------------------


class QritaProvider(Provider):
    """One qrita backend: ``select`` (threshold/count only), ``top_k_top_p`` in place, or
    ``sample`` (one token per row, per-row seeds; the gate checks it is a kept token)."""

    family = "qrita"
    WHAT = {
        "mask": "qrita.top_k_top_p(inplace=True)",
        "select": "qrita.select (threshold/num_ties/count)",
        "sample": "qrita.sample (one token per row, per-row seeds)",
    }

    def __init__(self, backend: str, mode: str):
        self.backend = backend
        self.mode = mode  # "mask" | "select" | "sample"
        self.name = f"qrita-{backend}" + ("" if mode == "mask" else f"-{mode}")
        self.ties = "lowest_index"
        self.description = f"{self.WHAT[mode]}, backend={backend!r}"

    def _backend(self):
        from qrita.backends import get_backend

        try:
            return get_backend(self.backend)
        except Exception:  # unavailable here; unavailable_reason says why
            return None

    def unavailable_reason(self, device: str) -> str | None:
        from qrita.backends import get_backend
        from qrita.errors import QritaError

        try:
            backend = get_backend(self.backend)
        except QritaError as exc:
            return str(exc)
        except Exception as exc:  # a backend module that is broken must not hide the others
            return f"backend {self.backend!r} failed to load: {type(exc).__name__}: {exc}"
        if backend.simulated and device == "cpu":
            return "runs in a CPU simulator here (name it in --providers to measure it anyway)"
        if device not in backend.capabilities.devices:
            return f"runs on {', '.join(backend.capabilities.devices)}, benchmark device is {device}"
        return None

    def supports(self, case: Case, scenario: Scenario) -> str | None:
        backend = self._backend()
        if backend is not None and case.dtype not in backend.capabilities.dtypes:
            return f"dtype {case.dtype} not supported by backend {self.backend!r}"
        return None

    def prepare(self, ctx: Context) -> Prepared:
        import qrita

        backend = self._backend()
        libs = backend.capabilities.libs if backend is not None else ("torch",)
        k, p = ctx.k_p_args()
        wrap = lambda t: t  # noqa: E731
        stream = None
        if "torch" not in libs and "cupy" in libs and ctx.device == "cuda":
            # A cupy-only backend: zero-copy cupy views, launched on torch's current stream
            # (so the op lands in the graph being captured).
            import cupy
            import torch

            wrap = cupy.from_dlpack
            k = cupy.from_dlpack(k) if k is not None and not isinstance(k, int) else k
            p = cupy.from_dlpack(p) if p is not None and not isinstance(p, float) else p

            def stream():
                return cupy.cuda.ExternalStream(torch.cuda.current_stream().cuda_stream)

        name, ties = self.backend, ctx.ties
        if self.mode == "select":

            def call(t):
                return qrita.select(t, k, p, backend=name, ties=ties)

        elif self.mode == "sample":
            import torch

            seeds = torch.arange(ctx.case.B, dtype=torch.int64, device=ctx.x.device) + 12345
            seeds = wrap(seeds) if wrap is not None and stream is not None else seeds

            def call(t):
                return qrita.sample(t, k, p, seeds=seeds, backend=name, ties=ties)

        else:

            def call(t):
                return qrita.top_k_top_p(t, k, p, backend=name, ties=ties, inplace=True)

        op = call
        if stream is not None:

            def op(t):
                with stream():
                    return call(t)

        masked = self.mode == "mask"
        return Prepared(
            op=op,
            input=ctx.x,
            inplace=masked,
            output=self.mode,
            bytes_moved=logits_bytes(ctx.x, 2 if masked else 1),
            wrap=wrap,
        )


def qrita_providers() -> list[Provider]:
    from qrita.backends import REGISTRY

    out: list[Provider] = []
    for backend in REGISTRY:
        out += [QritaProvider(backend, mode) for mode in ("mask", "select", "sample")]
    return out


# --- PyTorch peers (our own code) ------------------------------------------------------------


def torch_sort_mask(x, k, p):
    """Sort-based top-k then top-p masking with vLLM's / Hugging Face's semantics.

    x: ``[B, V]``; k: None, an int or an int64 ``[B]`` tensor (``<= 0`` or
    ``>= V``: off); p: None, a float or a float32 ``[B]`` tensor (``>= 1``:
    off).  One full descending sort per row; top-k keeps every entry ``>=`` the
    k-th value (ties included, like ``TopKLogitsWarper``); top-p keeps the
    shortest prefix of the sorted survivors whose float32 softmax mass reaches
    ``p`` (always at least one token).  Returns new masked logits.
    """
    import torch

    B, V = x.shape
    values, order = torch.sort(x, dim=-1, descending=True)
    keep = None
    if k is not None:
        if isinstance(k, int):
            kth = values[:, k - 1 : k] if 0 < k < V else None
        else:
            k_eff = torch.where((k <= 0) | (k >= V), torch.full_like(k, V), k)
            kth = values.gather(1, (k_eff - 1).view(B, 1))
        if kth is not None:
            keep = values >= kth
    if p is not None and not (isinstance(p, float) and p >= 1.0):
        logits = values.float()
        if keep is not None:
            logits = logits.masked_fill(~keep, -math.inf)
        probs = logits.softmax(dim=-1)
        mass_before = probs.cumsum(dim=-1) - probs
        if isinstance(p, float):
            keep_p = mass_before < p
        else:
            p_eff = torch.where(p >= 1.0, torch.full_like(p, math.inf), p)
            keep_p = mass_before < p_eff.view(B, 1)
        keep_p[:, 0] = True
        keep = keep_p if keep is None else keep & keep_p
    if keep is None:
        return x.clone()
    mask = torch.empty_like(keep).scatter_(1, order, keep)
    return x.masked_fill(~mask, -math.inf)


class TorchSort(Provider):
    name = "torch-sort"
    ties = "all"
    description = "PyTorch sort + softmax cumsum masking, vLLM/HF semantics (written here)"

    def prepare(self, ctx: Context) -> Prepared:
        k, p = ctx.k_p_args()
        return Prepared(
            op=lambda t: torch_sort_mask(t, k, p),
            input=ctx.x,
            inplace=False,
            output="mask",
            bytes_moved=logits_bytes(ctx.x, 2),
        )


class TorchTopk(Provider):
    name = "torch-topk"
    ties = "all"
    description = "torch.topk k-th value, then masked_fill of everything below it (top-k only)"

    def supports(self, case: Case, scenario: Scenario) -> str | None:
        return None if scenario.k_only else "top-k only scenarios"

    def prepare(self, ctx: Context) -> Prepared:
        k = int(ctx.k)

        def op(t):
            kth = t.topk(k, dim=-1).values[:, -1:]
            return t.masked_fill(t < kth, -math.inf)

        return Prepared(op=op, input=ctx.x, inplace=False, output="mask", bytes_moved=logits_bytes(ctx.x, 2))


# --- FlashInfer ------------------------------------------------------------------------------

_FLASHINFER_WARMUP = r"""
import sys, time, torch
t0 = time.time()
import flashinfer.sampling as s
sample = s.top_k_top_p_sampling_from_logits
# argv: the FlashInfer providers and the dtypes of the run (each JIT module takes minutes to build)
ALL = "flashinfer,flashinfer-topp-renorm,flashinfer-sample"
names = set((sys.argv[1] if len(sys.argv) > 1 else ALL).split(","))
dtypes = sys.argv[2].split(",") if len(sys.argv) > 2 else ["float32", "bfloat16", "float16"]
for dt in [getattr(torch, d) for d in dtypes]:
    x = torch.randn(4, 32000, device="cuda").to(dt)
    probs = torch.softmax(x.float(), dim=-1)
    k = torch.full((4,), 50, device="cuda", dtype=torch.int32)
    p = torch.full((4,), 0.9, device="cuda", dtype=torch.float32)
    calls = []
    if "flashinfer" in names:
        calls += [("top_k_mask_logits", lambda: s.top_k_mask_logits(x, 50)),
                  ("top_k_mask_logits[k]", lambda: s.top_k_mask_logits(x, k))]
    if names & {"flashinfer", "flashinfer-topp-renorm"}:
        calls += [("top_p_renorm_probs", lambda: s.top_p_renorm_probs(probs, 0.9)),
                  ("top_p_renorm_probs[p]", lambda: s.top_p_renorm_probs(probs, p))]
    if "flashinfer-sample" in names:
        # deterministic=True, as FlashInferSample calls it.  A scalar k <= 256 over V >= 65536 takes
        # FlashInfer's top-k-first fast path, a radix top-k module of its own: the H200 harness spent
        # its whole budget building it inside the first timed row (a stack dump in session 7)
        big = torch.randn(4, 65536, device="cuda").to(dt)
        calls += [("top_k_top_p_sampling_from_logits", lambda: sample(x, 50, 0.9, deterministic=True)),
                  ("top_k_top_p_sampling_from_logits[kp]", lambda: sample(x, k, p, deterministic=True)),
                  ("top_k_top_p_sampling_from_logits[top-k first]",
                   lambda: sample(big, 50, 0.9, deterministic=True))]
    for name, call in calls:
        try:
            call()
            torch.cuda.synchronize()
        except Exception as exc:
            print(f"warm-up {name} {dt}: {type(exc).__name__}: {exc}", flush=True)
        print(f"{name} {dt}: {time.time() - t0:.1f}s", flush=True)
print(f"flashinfer warm-up done in {time.time() - t0:.1f}s", flush=True)
"""


class FlashInferWarmup:
    """FlashInfer JIT-builds its sampling kernels on first use (about 2 minutes with nvcc).

    The build runs in a child process from the start of the run, so the main
    process keeps measuring meanwhile and later loads the cached build.  (A
    thread would launch CUDA work while the main thread captures graphs.)
    """

    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.log_path = None
        self.started = None
        self.seconds = None
        self.returncode = None

    def start(self, names=(), dtypes=()):
        """Build in a child process the modules of the FlashInfer providers ``names`` for ``dtypes``
        (all of them when empty)."""
        if self.proc is not None:
            return
        argv = [",".join(sorted(names)), ",".join(sorted(dtypes))] if names and dtypes else []
        fd, self.log_path = tempfile.mkstemp(prefix="qrita-bench-flashinfer-", suffix=".log")
        os.close(fd)
        self.started = time.perf_counter()
        with open(self.log_path, "w") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-c", _FLASHINFER_WARMUP, *argv],
                stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ),
            )

    def done(self) -> bool:
        if self.proc is None:
            return True
        if self.returncode is None and self.proc.poll() is not None:
            self.returncode = self.proc.returncode
            self.seconds = time.perf_counter() - self.started
        return self.returncode is not None

    def log_tail(self, chars: int = 600) -> str:
        try:
            with open(self.log_path) as f:
                return f.read()[-chars:]
        except (OSError, TypeError):
            return ""

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def summary(self) -> dict:
        self.done()
        return {"seconds": self.seconds, "returncode": self.returncode, "log_tail": self.log_tail()}


FLASHINFER_WARMUP = FlashInferWarmup()


class _FlashInfer(Provider):
    ties = "all"

    def unavailable_reason(self, device: str) -> str | None:
        if device != "cuda":
            return "needs a CUDA device"
        try:
            import flashinfer.sampling  # noqa: F401
        except Exception as exc:  # ImportError, or a broken install
            return f"cannot import flashinfer.sampling: {type(exc).__name__}: {exc}"
        return None

    def ready(self) -> bool:
        return FLASHINFER_WARMUP.done()

    def not_ready_reason(self) -> str | None:
        if FLASHINFER_WARMUP.done() and FLASHINFER_WARMUP.returncode not in (None, 0):
            return f"JIT warm-up failed (exit {FLASHINFER_WARMUP.returncode}): {FLASHINFER_WARMUP.log_tail(300)}"
        return None

    @staticmethod
    def _k_p(ctx: Context):
        """FlashInfer takes a scalar or a ``[B]`` tensor (int32 k, float32 p)."""
        import torch

        return ctx.k_p_args(torch.int32)


class FlashInferMask(_FlashInfer):
    name = "flashinfer"
    description = (
        "flashinfer.sampling: top_k_mask_logits (top-k), softmax + top_p_renorm_probs (top-p), "
        "top_k_mask_logits + softmax + top_p_renorm_probs (both); probs output for top-p"
    )

    def prepare(self, ctx: Context) -> Prepared:
        import torch
        from flashinfer import sampling

        k, p = self._k_p(ctx)
        if p is None:
            return Prepared(
                op=lambda t: sampling.top_k_mask_logits(t, k),
                input=ctx.x,
                inplace=False,
                output="mask",
                bytes_moved=logits_bytes(ctx.x, 2),
            )

        def op(t):
            if k is not None:
                t = sampling.top_k_mask_logits(t, k)
            return sampling.top_p_renorm_probs(torch.softmax(t.float(), dim=-1), p)

        moved = logits_bytes(ctx.x, 1) + ctx.x.numel() * 4  # read logits, write float32 probs
        return Prepared(op=op, input=ctx.x, inplace=False, output="probs", bytes_moved=moved)


class FlashInferRenorm(_FlashInfer):
    name = "flashinfer-topp-renorm"
    description = "flashinfer.sampling.top_p_renorm_probs alone, on float32 probs computed outside the timing"

    def supports(self, case: Case, scenario: Scenario) -> str | None:
        return None if scenario.p_only else "top-p only scenarios"

    def prepare(self, ctx: Context) -> Prepared:
        import torch
        from flashinfer import sampling

        _, p = self._k_p(ctx)
        probs = torch.softmax(ctx.x.float(), dim=-1)
        return Prepared(
            op=lambda t: sampling.top_p_renorm_probs(t, p),
            input=probs,
            inplace=False,
            output="probs",
            bytes_moved=logits_bytes(probs, 2),
            note="input is float32 probs",
        )


class FlashInferSample(_FlashInfer):
    name = "flashinfer-sample"
    description = "flashinfer.sampling.top_k_top_p_sampling_from_logits (sampling reference point; one token per row)"

    def prepare(self, ctx: Context) -> Prepared:
        from flashinfer import sampling

        k, p = self._k_p(ctx)
        k = ctx.case.V if k is None else k
        p = 1.0 if p is None else p

        def op(t):
            try:
                return sampling.top_k_top_p_sampling_from_logits(t, k, p, deterministic=True)
            except TypeError:  # older signatures
                return sampling.top_k_top_p_sampling_from_logits(t, k, p)

        return Prepared(op=op, input=ctx.x, inplace=False, output="sample", bytes_moved=logits_bytes(ctx.x, 1))


# --- vLLM ---------------------------------------------------------------------------------------


class VllmTopKTopP(Provider):
    name = "vllm"
    ties = "all"
    description = "vllm.v1.sample.ops.topk_topp_sampler.apply_top_k_top_p (may write its input)"

    def unavailable_reason(self, device: str) -> str | None:
        try:
            from vllm.v1.sample.ops.topk_topp_sampler import apply_top_k_top_p  # noqa: F401
        except Exception as exc:
            return f"cannot import vllm.v1.sample.ops.topk_topp_sampler: {type(exc).__name__}: {exc}"
        return None

    def prepare(self, ctx: Context) -> Prepared:
        from vllm.v1.sample.ops.topk_topp_sampler import apply_top_k_top_p

        k, p = ctx.k_tensor(), ctx.p_tensor()
        return Prepared(
            op=lambda t: apply_top_k_top_p(t, k, p),
            input=ctx.x,
            inplace=True,
            output="mask",
            bytes_moved=logits_bytes(ctx.x, 2),
        )


for _peer in (TorchSort(), TorchTopk(), FlashInferMask(), FlashInferRenorm(), FlashInferSample(), VllmTopKTopP()):
    register(_peer)


# --- selection --------------------------------------------------------------------------------


def all_providers() -> list[Provider]:
    """Every known provider: the qrita backends (both modes), then the registered peers."""
    return qrita_providers() + list(_PEERS)


def choose(spec: str | None, device: str) -> tuple[list[Provider], dict[str, str]]:
    """Providers matching ``spec`` that can run on ``device``, and ``{name: reason}`` for the rest.

    ``spec``: comma-separated names or shell patterns (``qrita-*``), or the
    groups ``all`` (default), ``qrita`` and ``peers``.  A simulated qrita
    backend runs only when named exactly.
    """
    known = all_providers()
    names = [n.name for n in known]
    tokens = [t.strip() for t in (spec or "all").split(",") if t.strip()]
    picked: list[Provider] = []
    explicit: set[str] = set()
    for token in tokens:
        if token == "all":
            match = known
        elif token == "qrita":
            match = [p for p in known if p.family == "qrita"]
        elif token == "peers":
            match = [p for p in known if p.family == "peer"]
        else:
            match = [p for p in known if fnmatch.fnmatchcase(p.name, token)]
            if token in names:
                explicit.add(token)
        if not match:
            raise ValueError(f"--providers: {token!r} matches none of {', '.join(names)}")
        picked += [p for p in match if p not in picked]
    usable: list[Provider] = []
    skipped: dict[str, str] = {}
    for provider in picked:
        try:
            reason = provider.unavailable_reason(device)
        except Exception as exc:  # an adapter must never take the run down
            reason = f"{type(exc).__name__}: {exc}"
        if reason is not None and provider.name in explicit and "simulator" in reason:
            reason = None
        if reason is None:
            usable.append(provider)
        else:
            skipped[provider.name] = reason
    return usable, skipped
