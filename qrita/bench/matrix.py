"""What gets measured: scenarios, logit distributions, shapes and the presets.

A *case* is one cell of the matrix: ``(scenario, dist, dtype, B, V)``.  A
preset is an ordered list of sub-matrices ("groups"); the runner measures them
in that order, so the most important numbers come first when a time budget
cuts a run short.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

BATCHES = (1, 4, 16, 64, 128, 256, 512, 1024)
VOCABS = (32000, 128256, 151936, 262144)
DTYPES = ("float32", "bfloat16", "float16")
DTYPE_ALIASES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "f32": "float32", "f16": "float16"}


@dataclass(frozen=True)
class Scenario:
    """A top-k / top-p request: scalar ``k``/``p`` (None = off), or ``mixed`` per-row settings."""

    name: str
    k: int | None = None
    p: float | None = None
    mixed: bool = False
    description: str = ""

    @property
    def k_only(self) -> bool:
        """Only top-k, with one scalar ``k`` (what ``torch.topk`` and ``top_k_mask_logits`` serve)."""
        return not self.mixed and self.k is not None and self.p is None

    @property
    def p_only(self) -> bool:
        return not self.mixed and self.p is not None and self.k is None

    @property
    def has_p(self) -> bool:
        return self.mixed or self.p is not None


SCENARIOS = {
    s.name: s
    for s in (
        Scenario("topk50", k=50, description="top-k 50"),
        Scenario("topk1000", k=1000, description="top-k 1000"),
        Scenario("topp0.9", p=0.9, description="top-p 0.9"),
        Scenario("topp0.5", p=0.5, description="top-p 0.5"),
        Scenario("k100p0.9", k=100, p=0.9, description="top-k 100 then top-p 0.9"),
        Scenario(
            "mixed",
            mixed=True,
            description="per-row settings, by row % 4: k only, p only, k and p, neither",
        ),
    )
}

# Per-row values of the "mixed" scenario, cycled by row // 4.
MIXED_K = (20, 50, 200, 1000)
MIXED_P = (0.5, 0.8, 0.9, 0.95)


def row_params(scenario: Scenario, B: int, V: int):
    """``(k, p)`` of a case in qrita's conventions.

    Scalar scenarios give a Python int/float (or None).  ``mixed`` gives host
    arrays: ``k`` int64 ``[B]`` and ``p`` float32 ``[B]``, where row ``b`` keeps
    by ``b % 4``: 0 top-k only, 1 top-p only, 2 both, 3 neither.  "Off" is
    written ``k = V`` and ``p = 1.0``, which every peer (vLLM, FlashInfer, HF)
    also reads as off.
    """
    if not scenario.mixed:
        return scenario.k, scenario.p
    rows = np.arange(B)
    kind = rows % 4
    cycle = (rows // 4) % 4
    k = np.where((kind == 0) | (kind == 2), np.asarray(MIXED_K)[cycle], V).astype(np.int64)
    k = np.minimum(k, V)
    p = np.where((kind == 1) | (kind == 2), np.asarray(MIXED_P)[cycle], 1.0).astype(np.float32)
    return k, p


@dataclass(frozen=True)
class Case:
    scenario: str
    dist: str
    dtype: str
    B: int
    V: int

    @property
    def input_key(self) -> tuple[str, int, int]:
        """Cases with the same key share one generated logits tensor."""
        return (self.dist, self.B, self.V)

    def label(self) -> str:
        return f"{self.scenario} {self.dist} {self.dtype} {self.B}x{self.V}"


# --- presets -------------------------------------------------------------------------------

ALL_SCENARIOS = tuple(SCENARIOS)
HEADLINE = ("topk50", "topp0.9", "k100p0.9")
ALL_DISTS = ("zipf", "gaussian", "llm", "lowtemp", "grammar")


def _group(scenarios, dists, dtypes, batches, vocabs) -> dict:
    return {
        "scenarios": tuple(scenarios),
        "dists": tuple(dists),
        "dtypes": tuple(dtypes),
        "batches": tuple(batches),
        "vocabs": tuple(vocabs),
    }


PRESETS: dict[str, dict] = {
    # CPU smoke test (CI): every scenario and distribution on small shapes, in well under a minute.
    "quick": {
        "device": "cpu",
        "budget_s": 50.0,
        "cpu_target_s": 0.01,
        "groups": [
            _group(HEADLINE, ("zipf",), ("float32",), (1, 16), (8192,)),
            _group(ALL_SCENARIOS, ALL_DISTS, ("float32",), (4,), (8192,)),
            _group(("topk50", "topp0.9", "k100p0.9", "mixed"), ("zipf",), ("bfloat16", "float16"), (4,), (8192,)),
        ],
    },
    # One 10-minute H200 call.  Groups in priority order.
    "full": {
        "device": "cuda",
        "budget_s": 450.0,
        "groups": [
            # 1. latency vs batch, every vocab (the plots): fp32 Zipf, the headline requests
            _group(HEADLINE, ("zipf",), ("float32",), BATCHES, VOCABS),
            # 2. the points of issue 3's reference table (V = 131072)
            _group(HEADLINE, ("zipf", "gaussian", "llm"), ("float32",), (1, 1024), (131072,)),
            # 3. 16-bit inputs against their fp32 counterparts
            _group(HEADLINE + ("mixed",), ("zipf", "llm"), ("bfloat16", "float16"), (1, 1024), (128256,)),
            _group(("mixed",), ("llm",), ("float32",), (1, 1024), (128256,)),
            # 4. every distribution and scenario at two batch sizes
            _group(ALL_SCENARIOS, ALL_DISTS, ("float32",), (64, 1024), (128256,)),
            # 5. the remaining scenarios across batch sizes
            _group(("topk1000", "topp0.5", "mixed"), ("zipf",), ("float32",), BATCHES, (128256, 262144)),
        ],
    },
}


def expand(groups: list[dict], overrides: dict | None = None) -> list[Case]:
    """The cases of ``groups`` in order, without duplicates.

    ``overrides`` (``scenarios``/``dists``/``dtypes``/``batches``/``vocabs``)
    replace that axis in every group.  Within a group cases are ordered so that
    cases sharing one logits tensor are adjacent.
    """
    overrides = {name: values for name, values in (overrides or {}).items() if values}
    seen: set[Case] = set()
    cases: list[Case] = []
    for group in groups:
        g = {**group, **overrides}
        for V, B, dist, dtype, scenario in itertools.product(
            g["vocabs"], g["batches"], g["dists"], g["dtypes"], g["scenarios"]
        ):
            case = Case(scenario=scenario, dist=dist, dtype=dtype, B=int(B), V=int(V))
            if case not in seen:
                seen.add(case)
                cases.append(case)
    return cases


def parse_list(text: str | None, kind: str, known=None, cast=str) -> tuple | None:
    """Parse ``"a,b,c"`` for a CLI option; checks names against ``known``."""
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    if kind == "dtypes":
        items = [DTYPE_ALIASES.get(t, t) for t in items]
    if known is not None:
        unknown = [t for t in items if t not in known]
        if unknown:
            raise ValueError(f"--{kind} must be from {', '.join(known)}, got {', '.join(unknown)}")
    try:
        return tuple(cast(t) for t in items)
    except ValueError as exc:
        raise ValueError(f"--{kind} must be a comma-separated list of integers, got {text!r}") from exc
