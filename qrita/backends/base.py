"""What a backend is: a request in, a selection out.

The public API validates and normalises every argument once, builds a
:class:`Request`, and hands it to one backend.  A backend never re-validates;
it only says what it cannot do (:meth:`Backend.cannot_run`) and does the rest.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..errors import QritaValueError


@dataclass(frozen=True)
class Capabilities:
    """Declared once per backend; drives "auto", the test skips and the docs table."""

    devices: tuple[str, ...]  # "cpu" and/or "cuda"
    libs: tuple[str, ...]  # array libraries accepted
    dtypes: tuple[str, ...]
    install: str  # how to make it available, e.g. 'pip install "qrita[triton]"'
    summary: str = ""


@dataclass(frozen=True)
class Request:
    """A validated selection request.

    logits: 2-D ``[B, V]`` array of the caller's library (a view of the caller's
        data; any strides).
    lib / device / dtype: e.g. ``"torch"``, ``"cuda:0"``, ``"bfloat16"``.
    k: ``None``, a Python int, or an int64 array ``[B]`` on the logits' device.
        Not interpreted yet: ``k <= 0`` or ``k >= V`` means no top-k.
    p: ``None``, a Python float, or a float32/float64 array ``[B]`` on the
        logits' device.  ``p >= 1`` or NaN means no top-p, ``p <= 0`` top-1.
    ties: ``qrita.core.spec.TIES_LOWEST_INDEX`` or ``TIES_ALL``.
    options: backend-specific knobs for tests and ablations (e.g.
        ``{"truncation": False}`` to force the full-row path).
    """

    logits: Any
    lib: str
    device: str
    dtype: str
    B: int
    V: int
    k: Any
    p: Any
    ties: int
    options: dict = field(default_factory=dict)

    @property
    def on_gpu(self) -> bool:
        return self.device.startswith("cuda")


@dataclass
class SelectResult:
    """A backend's answer, in the request's library and device.

    threshold ``[B]`` logits dtype, num_ties ``[B]`` int32, count ``[B]`` int32;
    hit ``[B]`` bool or None: whether the sigma-truncation held the answer
    (debug/tests only).
    """

    threshold: Any
    num_ties: Any
    count: Any
    hit: Any = None


class Backend:
    """Base class.  Subclasses set ``name`` and ``capabilities`` and implement ``select``."""

    name: ClassVar[str]
    capabilities: Capabilities
    # True when the kernels run in a simulator on the CPU (TRITON_INTERPRET=1,
    # NUMBA_ENABLE_CUDASIM=1): the backend then serves CPU arrays when named
    # explicitly (tests), and "auto" never picks it.
    simulated: bool = False
    # the names of ``Request.options`` it reads (the API rejects any other: a misspelt knob must
    # not pass silently); "truncation" is accepted by every backend, so that one options dict
    # serves them all (the reference backend never truncates)
    option_names: ClassVar[frozenset[str]] = frozenset({"truncation"})
    # those of option_names that are on/off switches: the API takes only True or False for them (left
    # out: the default), so that a string such as "no" or a None cannot switch one on or off
    flag_options: ClassVar[frozenset[str]] = frozenset({"truncation"})

    def unavailable_reason(self) -> str | None:
        """None when this backend can run in this process, else why not and how to fix it."""
        return None

    def cannot_run(self, req: Request, explicit: bool) -> str | None:
        """None when this backend can serve ``req``; else the reason.

        ``explicit`` is True when the user named the backend (it may then accept
        requests that "auto" should not route to it, e.g. CPU tensors under an
        interpreter).
        """
        caps = self.capabilities
        kind = "cuda" if req.on_gpu else "cpu"
        if self.simulated and not explicit:
            return f"backend {self.name!r} runs in a CPU simulator here (tests only); name it explicitly"
        if kind not in caps.devices:
            where = "a CUDA device" if "cuda" in caps.devices else "the CPU"
            return f"backend {self.name!r} runs on {where}, but logits are on {req.device!r}"
        if req.lib not in caps.libs:
            return f"backend {self.name!r} takes {', '.join(caps.libs)} arrays, got a {req.lib} array"
        if req.dtype not in caps.dtypes:
            return f"backend {self.name!r} supports dtypes {', '.join(caps.dtypes)}, got {req.dtype}"
        return None

    def select(self, req: Request) -> SelectResult:  # pragma: no cover - abstract
        raise NotImplementedError

    def top_k_top_p(self, req: Request, mask_value: float, out: Any) -> Any | None:
        """Optional fused select+mask writing into ``out``; return None to use the generic path."""
        return None

    def stream_states(self, raw: Any, lib: str) -> Any | None:
        """Optional: ``mix64`` of the raw per-row seeds ``raw`` (a fresh array the caller owns, in
        library ``lib``), in place, in the backend's own kernels; None to use the generic path.
        It must give the generic path's bits."""
        return None

    def sample(self, req: Request, states: Any) -> Any | None:
        """Optional fused select+draw of ``qrita.sample``: int64 ``[B]`` tokens in the request's
        library, for per-row stream states ``states`` (``qrita.core.rng``); None to use the
        generic path.  It must draw the generic path's tokens."""
        return None


def int_option(options: dict, name: str, default: int, *, pow2: bool = False, choices=None, minimum: int = 1) -> int:
    """A validated integer knob of ``options`` (None or absent: ``default``): an integer (not a bool) of at
    least ``minimum``, a power of two with ``pow2``, one of ``choices`` when given; else QritaValueError."""
    value = options.get(name)
    if value is None:
        return default
    ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    ok = ok and (value >= minimum or choices is not None)
    ok = ok and not (pow2 and value & (value - 1)) and (choices is None or value in choices)
    if not ok:
        want = (f"one of {choices}" if choices else "a power of two" if pow2
                else "a positive integer" if minimum == 1 else f"an integer >= {minimum}")
        raise QritaValueError(f"options[{name!r}] must be {want} (or left out for the default), got {value!r}")
    return int(value)
