"""The vLLM and Hugging Face adapters (``qrita.integrations``).

vLLM: the same masks as qrita's own API under vLLM's conventions, in place.
Hugging Face: the same masks as ``TopKLogitsWarper`` followed by
``TopPLogitsWarper`` wherever those are deterministic (no tie and no rounding
question at the top-p boundary).  The Hugging Face rules are restated here in
plain numpy (``hf_reference``) so that this runs without transformers; where
transformers is installed, the real classes are compared too.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from backends import to_numpy

import qrita
from qrita.errors import QritaTypeError, QritaValueError
from qrita.integrations.vllm import apply_top_k_top_p
from qrita.reference import oracle_select

INF = math.inf


# --- vLLM ---------------------------------------------------------------------------------------


def vllm_batch(target, rng, B=8, V=300):
    B, V = target.shape(B, V)
    x = rng.standard_normal((B, V)) * 2
    k = rng.integers(1, 50, size=B)
    k[::3] = V  # vLLM's "no top-k"
    p = rng.uniform(0.3, 0.99, size=B).astype(np.float32)
    p[1::3] = 1.0  # vLLM's "no top-p"
    return x, k, p


@pytest.mark.parametrize("use_k, use_p", [(True, True), (True, False), (False, True)])
def test_vllm_same_masks_as_qrita_in_place(target, rng, use_k, use_p):
    x, k, p = vllm_batch(target, rng)
    logits = target.array(x, "float32")
    kk = target.index_array(k) if use_k else None
    pp = target.float_array(p) if use_p else None
    want = qrita.top_k_top_p(logits, kk, pp, backend=target.backend)
    before = logits
    out = apply_top_k_top_p(logits, kk, pp, backend=target.backend)
    assert out is before  # in place, and the same object comes back
    np.testing.assert_array_equal(to_numpy(out), to_numpy(want))
    # vLLM's conventions mean what they say: k == V and p == 1 disable the stage on that row
    oracle = oracle_select(x.astype(np.float32), k if use_k else None, p if use_p else None)
    np.testing.assert_array_equal(np.isfinite(to_numpy(out)), oracle.mask)
    if use_k:
        no_k = k == x.shape[1]
        only_p = oracle_select(x.astype(np.float32)[no_k], None, p[no_k] if use_p else None)
        np.testing.assert_array_equal(oracle.mask[no_k], only_p.mask)


def test_vllm_int32_k_and_none():
    x = torch.randn(4, 100)
    k = torch.tensor([5, 100, 1, 100], dtype=torch.int32)
    p = torch.tensor([1.0, 0.5, 1.0, 1.0])
    want = qrita.top_k_top_p(x.clone(), k.long(), p)
    got = apply_top_k_top_p(x, k, p)
    assert got is x and torch.equal(got, want)
    assert torch.isfinite(x[3]).all()  # k == V and p == 1: untouched row
    y = torch.randn(3, 10)
    z = y.clone()
    assert apply_top_k_top_p(y, None, None) is y and torch.equal(y, z)


def test_vllm_bad_arguments_leave_logits_unchanged():
    x = torch.randn(4, 10)
    before = x.clone()
    with pytest.raises(QritaValueError, match=r"k must have shape \[B\]=\[4\]"):
        apply_top_k_top_p(x, torch.tensor([1, 2, 3]), None)
    with pytest.raises(QritaTypeError, match="p must have a floating dtype"):
        apply_top_k_top_p(x, None, torch.tensor([1, 2, 3, 4]))
    assert torch.equal(x, before)


# --- Hugging Face ------------------------------------------------------------------------------


def hf_reference(scores: np.ndarray, top_k: int, top_p: float, m: int = 1, filter_value: float = -INF):
    """``TopKLogitsWarper`` then ``TopPLogitsWarper`` (their published rules, in float64).

    Top-k keeps every score ``>=`` the ``max(top_k, m)``-th largest (skipped for
    ``top_k == 0``).  Top-p (skipped for ``top_p == 1``) sorts ascending and
    removes the scores whose ascending cumulative probability is ``<= 1 - top_p``,
    except the last ``m``.  Returns ``(masked scores, margin)``: ``margin`` per
    row is the distance of the nearest cumulative sum from ``1 - top_p`` (where
    it is tiny, float32 rounding decides; the comparisons skip such rows).
    """
    x = np.array(scores, dtype=np.float64)
    B, V = x.shape
    margin = np.full(B, np.inf)
    if top_k > 0:
        kk = min(max(top_k, m), V)
        kth = -np.sort(-x, axis=1)[:, kk - 1 : kk]
        x = np.where(x < kth, filter_value, x)
    if top_p < 1.0:
        for b in range(B):
            order = np.argsort(x[b], kind="stable")
            vals = x[b, order]
            w = np.exp(vals - vals.max()) if np.isfinite(vals.max()) else np.zeros(V)
            cum = np.cumsum(w) / w.sum()
            remove = cum <= 1 - top_p
            remove[V - m :] = False
            x[b, order[remove]] = filter_value
            decided = (w > 0) & (np.arange(V) < V - m)  # the last m are kept whatever their sums
            if decided.any():
                margin[b] = np.abs(cum[decided] - (1 - top_p)).min()
    return x, margin


HF_CASES = [
    (0, 0.9, 1),
    (50, 1.0, 1),
    (20, 0.8, 1),
    (5, 0.5, 3),
    (0, 0.3, 10),
    (1, 0.9, 1),
    (40, 0.0, 1),
    (0, 0.95, 2),
]


def hf_scores(rng, B=32, V=400):
    x = rng.standard_normal((B, V)).astype(np.float32) * 3
    x[0, :10] = -INF  # already filtered
    return x


def test_warper_semantics_match_hf_rules(rng):
    from qrita.integrations.transformers import QritaLogitsWarper

    x = hf_scores(rng)
    compared = 0
    for top_k, top_p, m in HF_CASES:
        got = QritaLogitsWarper(top_k=top_k, top_p=top_p, min_tokens_to_keep=m)(None, torch.from_numpy(x)).numpy()
        want, margin = hf_reference(x, top_k, top_p, m)
        ok = margin > 5e-5
        assert ok.mean() > 0.7
        np.testing.assert_array_equal(np.isfinite(got[ok]), np.isfinite(want[ok]), err_msg=f"{top_k=} {top_p=} {m=}")
        kept = np.isfinite(got)
        np.testing.assert_array_equal(got[kept], x[kept])  # kept scores keep their bits
        compared += ok.sum()
    assert compared > 200


def test_warper_top_k_ties_kept_like_hf():
    from qrita.integrations.transformers import QritaLogitsWarper

    x = np.array([[3, 1, 2, 2, 2, 0, 2], [1, 1, 1, 1, 1, 1, 1]], np.float32)
    got = QritaLogitsWarper(top_k=2)(None, torch.from_numpy(x))
    want, _ = hf_reference(x, 2, 1.0)
    np.testing.assert_array_equal(got.numpy(), want.astype(np.float32))
    assert torch.isfinite(got[1]).all()


def test_warper_filter_value_and_disabled():
    from qrita.integrations.transformers import QritaLogitsWarper

    x = torch.randn(3, 50)
    got = QritaLogitsWarper(top_k=4, filter_value=-1e4)(None, x)
    assert (got == -1e4).sum() == 3 * 46 and (got != -1e4).sum() == 12
    same = QritaLogitsWarper()(None, x)
    assert same is x  # top_k=0 and top_p=1.0: nothing to do
    assert "top_k=4" in repr(QritaLogitsWarper(top_k=4))


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(top_k=-1), QritaValueError, "top_k must be >= 0"),
        (dict(top_k=2.5), QritaTypeError, "top_k must be an integer"),
        (dict(top_k=True), QritaTypeError, "top_k must be an integer"),
        (dict(top_p=1.5), QritaValueError, r"top_p must be in \[0, 1\]"),
        (dict(top_p=math.nan), QritaValueError, r"top_p must be in \[0, 1\]"),
        (dict(top_p="0.9"), QritaTypeError, "top_p must be a float"),
        (dict(min_tokens_to_keep=0), QritaValueError, "min_tokens_to_keep must be >= 1"),
        (dict(filter_value=None), QritaTypeError, "filter_value must be a real number"),
    ],
)
def test_warper_bad_arguments(kwargs, error, message):
    from qrita.integrations.transformers import QritaLogitsWarper

    with pytest.raises(error, match=message):
        QritaLogitsWarper(**kwargs)


def test_warper_imports_transformers_only_on_use():
    import subprocess
    import sys

    code = (
        "import sys; import qrita.integrations.transformers as m; a = 'transformers' in sys.modules; "
        "m.QritaLogitsWarper; print(a, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "False"
    try:
        import transformers  # noqa: F401

        assert out[1] == "True"
    except ImportError:
        assert out[1] == "False"


# --- against the real transformers classes ------------------------------------------------------------


def test_warper_equals_real_hf_warpers(rng):
    transformers = pytest.importorskip("transformers")
    from qrita.integrations.transformers import QritaLogitsWarper

    assert isinstance(QritaLogitsWarper(top_k=3), transformers.LogitsProcessor)
    x = hf_scores(rng)
    for dtype in (torch.float32, torch.bfloat16):
        scores = torch.from_numpy(x).to(dtype)
        compared = 0
        for top_k, top_p, m in HF_CASES:
            if dtype == torch.bfloat16 and top_p < 1.0:
                continue  # HF sums bf16 probabilities in bf16 (generate() hands warpers float32 scores)
            hf = scores
            if top_k:
                hf = transformers.TopKLogitsWarper(top_k=top_k, min_tokens_to_keep=m)(None, hf)
            if top_p < 1.0:
                hf = transformers.TopPLogitsWarper(top_p=top_p, min_tokens_to_keep=m)(None, hf)
            got = QritaLogitsWarper(top_k=top_k, top_p=top_p, min_tokens_to_keep=m)(None, scores)
            _, margin = hf_reference(scores.float().numpy(), top_k, top_p, m)
            # compare rows whose top-p boundary is neither tied nor within rounding
            ok = (margin > 5e-5) & no_tie_at_top_p_boundary(scores.float().numpy(), top_k, top_p, m)
            assert ok.mean() > 0.7
            np.testing.assert_array_equal(
                torch.isfinite(got)[ok].numpy(),
                torch.isfinite(hf)[ok].numpy(),
                err_msg=f"{dtype} {top_k=} {top_p=} {m=}",
            )
            compared += ok.sum()
        assert compared > 30


def no_tie_at_top_p_boundary(x: np.ndarray, top_k: int, top_p: float, m: int) -> np.ndarray:
    """bool ``[B]``: the last token kept by the rules has no equal among the removed ones."""
    if top_p >= 1.0:
        return np.ones(x.shape[0], bool)
    kept, _ = hf_reference(x, top_k, top_p, m)
    out = np.ones(x.shape[0], bool)
    for b in range(x.shape[0]):
        keep = np.isfinite(kept[b])
        if keep.any():
            out[b] = not np.isin(x[b, ~keep], x[b, keep].min()).any()
    return out
