"""``qrita bench``: the benchmark harness every performance claim of qrita comes from.

It runs a matrix of cases (scenario x logit distribution x dtype x B x V) over
*providers* (each qrita backend's ``select`` and in-place ``top_k_top_p``, plus
peers: PyTorch sort and ``torch.topk`` masking, FlashInfer, vLLM), gates every
provider's output against the sort-based oracle before timing it, and times it
(CUDA-graph and eager medians, against the roofline of the measured copy
bandwidth).  Results go to ``results.json``, ``results.md`` and PNG plots.

Layout: :mod:`.matrix` (what: scenarios, presets), :mod:`.inputs` (logits),
:mod:`.providers` (who: adapters and their registry), :mod:`.gate` (the oracle
check), :mod:`.measure` (timing), :mod:`.report` (outputs), :mod:`.runner`
(the loop and the command line).  ``docs/bench/README.md`` says how to read and
reproduce the numbers.

Importing this package is cheap; torch, matplotlib and the peers are imported
when :func:`main` runs.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """Run ``qrita bench`` with ``argv`` (default ``sys.argv[1:]``); returns the exit status."""
    from .runner import main as _main

    return _main(argv)


__all__ = ["main"]
