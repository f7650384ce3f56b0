"""Drop-in adapters for the places qrita's users already are.

* :mod:`qrita.integrations.vllm`: ``apply_top_k_top_p(logits, k, p)`` with
  vLLM's signature and conventions.
* :mod:`qrita.integrations.transformers`: ``QritaLogitsWarper``, a Hugging
  Face ``LogitsProcessor`` equivalent to ``TopKLogitsWarper`` followed by
  ``TopPLogitsWarper``.

Neither module imports vLLM; the transformers adapter imports ``transformers``
only when its class is first used.  ``import qrita.integrations`` imports
neither adapter.
"""
