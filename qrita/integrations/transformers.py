"""``QritaLogitsWarper``: Hugging Face ``TopKLogitsWarper`` + ``TopPLogitsWarper`` in one exact pass.

Use it inside ``generate`` with the built-in warpers switched off::

    from transformers import LogitsProcessorList
    from qrita.integrations.transformers import QritaLogitsWarper

    model.generate(..., do_sample=True, top_k=0, top_p=1.0,
                   logits_processor=LogitsProcessorList([QritaLogitsWarper(top_k=50, top_p=0.9)]))

``transformers`` is imported when the class is first looked up, not when this
module is imported; the class subclasses ``transformers.LogitsProcessor`` when
transformers is installed (a plain class with the same call otherwise).

How Hugging Face's rules map onto qrita's (SPEC.md)
---------------------------------------------------
* **Top-k.**  ``TopKLogitsWarper`` keeps every token ``>=`` the k-th largest
  score, with ``k = max(top_k, min_tokens_to_keep)``: the whole boundary tie
  group, i.e. qrita's ``ties="all"``, which this warper uses.  ``top_k=0``
  disables top-k (``generate`` adds no ``TopKLogitsWarper`` then).
* **Top-p.**  ``TopPLogitsWarper`` sorts ascending, and removes every token
  whose ascending cumulative probability is ``<= 1 - top_p``.  For the token
  at descending rank ``r`` that cumulative probability is ``1 - S_{r-1}``
  (``S_j`` the mass of the ``j`` best tokens), so it is removed exactly when
  ``S_{r-1} >= top_p``: the kept tokens are ranks ``1 .. j*`` with
  ``j* = min{j : S_j >= top_p}``, qrita's "shortest prefix reaching p".  The
  probabilities are those renormalised over the top-k survivors in both.
  ``top_p=1.0`` disables top-p (``generate`` adds no ``TopPLogitsWarper``).
* **min_tokens_to_keep** ``m``: top-p never keeps fewer than the ``m`` best
  tokens.  Here: the union of qrita's top-p set with its top-``m`` set.

Where the two can differ (and only there):

* **Ties at the top-p boundary.**  Hugging Face cuts a tie group in the order
  of a non-stable sort (so its answer is not determined); qrita keeps the
  whole group.  The same holds for a tie at the ``min_tokens_to_keep``
  boundary and, with ``top_p=0``, for a tie at the maximum.
* **Boundary equality within rounding.**  Hugging Face compares a float32
  cumulative sum with ``1 - top_p``; qrita decides ``S_j >= p`` in float64
  within SPEC.md's window ``eps = 1e-5``.  When some ``S_j`` lies within
  about ``1e-5`` of ``top_p``, either may keep one token more.
* **NaN and ``-inf`` scores.**  qrita never keeps them, so they become
  ``filter_value``; Hugging Face's top-k leaves NaN in place, and both leave
  ``-inf`` as it is when ``filter_value`` is ``-inf`` (the default).
* **top_p=1.0** used directly (outside ``generate``): Hugging Face's warper
  would still drop tokens whose float32 probability underflows to 0 at the
  bottom of the ranking; here ``top_p=1.0`` means no top-p.
"""

from __future__ import annotations

import math
import numbers

from ..api import select
from ..errors import QritaTypeError, QritaValueError

__all__ = ["QritaLogitsWarper"]  # noqa: F822 (built on first use by __getattr__)


class _QritaLogitsWarper:
    """Top-k then top-p (Hugging Face semantics, exact and deterministic), as a ``LogitsProcessor``.

    top_k: int ``>= 0``; 0 disables top-k.  The effective k is
        ``max(top_k, min_tokens_to_keep)``.
    top_p: float in ``[0, 1]``; 1.0 disables top-p.
    min_tokens_to_keep: int ``>= 1``; top-p keeps at least this many tokens.
    filter_value: the value removed tokens get.
    backend: qrita backend ("auto" picks the fastest one that runs where the scores are).

    ``__call__(input_ids, scores)`` returns a new ``[B, V]`` tensor; kept scores keep their bits.
    """

    def __init__(self, top_k=0, top_p=1.0, min_tokens_to_keep=1, filter_value=-math.inf, *, backend="auto"):
        if isinstance(top_k, bool) or not isinstance(top_k, numbers.Integral):
            raise QritaTypeError(
                f"top_k must be an integer >= 0 (0 disables top-k), got {type(top_k).__name__} {top_k!r}"
            )
        if top_k < 0:
            raise QritaValueError(f"top_k must be >= 0 (0 disables top-k), got {top_k}")
        if isinstance(top_p, bool) or not isinstance(top_p, numbers.Real):
            raise QritaTypeError(
                f"top_p must be a float in [0, 1] (1.0 disables top-p), got {type(top_p).__name__} {top_p!r}"
            )
        if not 0.0 <= float(top_p) <= 1.0:
            raise QritaValueError(f"top_p must be in [0, 1] (1.0 disables top-p), got {top_p}")
        if isinstance(min_tokens_to_keep, bool) or not isinstance(min_tokens_to_keep, numbers.Integral):
            raise QritaTypeError(f"min_tokens_to_keep must be an integer >= 1, got {type(min_tokens_to_keep).__name__}")
        if min_tokens_to_keep < 1:
            raise QritaValueError(f"min_tokens_to_keep must be >= 1, got {min_tokens_to_keep}")
        if isinstance(filter_value, bool) or not isinstance(filter_value, numbers.Real):
            raise QritaTypeError(
                f"filter_value must be a real number, got {type(filter_value).__name__} {filter_value!r}"
            )
        self.top_k = int(top_k)
        self.top_p = float(top_p)
        self.min_tokens_to_keep = int(min_tokens_to_keep)
        self.filter_value = float(filter_value)
        self.backend = backend

    def __repr__(self) -> str:
        return (
            f"QritaLogitsWarper(top_k={self.top_k}, top_p={self.top_p}, "
            f"min_tokens_to_keep={self.min_tokens_to_keep}, filter_value={self.filter_value})"
        )

    def __call__(self, input_ids, scores):
        k = max(self.top_k, self.min_tokens_to_keep) if self.top_k > 0 else None
        p = self.top_p if self.top_p < 1.0 else None
        if k is None and p is None:
            return scores
        keep = select(scores, k=k, p=p, backend=self.backend, ties="all").mask()
        if p is not None and self.min_tokens_to_keep > 1:
            # k >= min_tokens_to_keep, so the m best tokens are among the top-k survivors
            keep = keep | select(scores, k=self.min_tokens_to_keep, backend=self.backend, ties="all").mask()
        return scores.masked_fill(~keep, self.filter_value)


def _build_class():
    try:
        from transformers import LogitsProcessor
    except ImportError:
        bases: tuple[type, ...] = (_QritaLogitsWarper,)
    else:
        bases = (_QritaLogitsWarper, LogitsProcessor)
    return type(
        "QritaLogitsWarper",
        bases,
        {"__module__": __name__, "__qualname__": "QritaLogitsWarper", "__doc__": _QritaLogitsWarper.__doc__},
    )


def __getattr__(name: str):
    # PEP 562: build the class (and import transformers) on first use
    if name == "QritaLogitsWarper":
        cls = _build_class()
        globals()[name] = cls
        return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
