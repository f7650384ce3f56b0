"""vLLM's ``apply_top_k_top_p(logits, k, p)``, backed by :func:`qrita.top_k_top_p`.

vLLM conventions, which qrita's own rules already cover (SPEC.md "Inputs"):

* ``logits``: ``[B, V]`` float tensor; masked **in place** and returned.
* ``k``: None or an integer tensor ``[B]`` on the logits' device; ``k == V``
  (vLLM's fill value for "no top-k") disables top-k on that row, as does
  ``k <= 0``.
* ``p``: None or a float tensor ``[B]``; ``p == 1`` disables top-p on that row.
* Both None: the logits are returned untouched.

Ties: qrita's default ``ties="lowest_index"`` gives exactly ``k`` tokens, as
a stable sort would.  vLLM's PyTorch sort path keeps the whole top-k boundary
tie group instead; pass ``ties="all"`` for that (its top-p cut of a tie group
depends on the sort, qrita keeps the whole group).  Top-p agrees with vLLM's
"remove while the ascending cumulative mass <= 1 - p" rule outside SPEC.md's
ambiguity window (see ``docs/sampling.md``).
"""

from __future__ import annotations

from ..api import top_k_top_p

__all__ = ["apply_top_k_top_p"]


def apply_top_k_top_p(logits, k, p, *, backend: str = "auto", ties: str = "lowest_index"):
    """Mask ``logits`` ``[B, V]`` in place to the tokens top-k then top-p keep; return ``logits``.

    k: None or an integer tensor ``[B]`` (``k == V`` or ``k <= 0``: no top-k).
    p: None or a float tensor ``[B]`` (``p >= 1``: no top-p).
    backend, ties: as for :func:`qrita.top_k_top_p`.
    """
    if k is None and p is None:
        return logits
    return top_k_top_p(logits, k=k, p=p, backend=backend, ties=ties, inplace=True)
