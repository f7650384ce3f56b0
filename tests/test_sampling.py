"""``qrita.sample``, the RNG spec of ``qrita.core.rng`` and ``Selection.probs``.

Statistics: the draws of every runnable backend follow the oracle's
renormalised distribution (chi-square, fixed seeds, so the verdicts are
deterministic).  Reproducibility: a row's token depends only on its seed and
its own logits.  The expected distributions come from ``qrita.reference``
(the sort-based oracle) and plain float64 arithmetic here, never from the code
under test.
"""

from __future__ import annotations

import math
import sys

import numpy as np
import pytest
import scipy.stats
import torch
from backends import Target, to_numpy

import qrita
from qrita import sampling
from qrita.core import rng
from qrita.errors import QritaTypeError, QritaValueError
from qrita.reference import oracle_select
from qrita.selection import Selection

INF = math.inf
NAN = math.nan
N_DRAWS = 20_000
P_MIN = 1e-3  # chi-square verdict: reject below this p-value


# --- helpers -------------------------------------------------------------------------------


def oracle_probs(row, k=None, p=None, ties="lowest_index") -> np.ndarray:
    """float64 ``[V]``: the renormalised probabilities of the oracle's kept set (0 elsewhere)."""
    x = np.asarray(row, dtype=np.float64)
    res = oracle_select(x[None], k, p, ties=ties)
    kept = res.order[0]
    out = np.zeros(x.shape[0])
    if kept.size == 0:
        return out
    vals = x[kept]
    if np.isposinf(vals).any():
        w = np.isposinf(vals).astype(np.float64)
    else:
        w = np.exp(vals - vals.max())
    out[kept] = w / w.sum()
    return out


def tiled_selection(sel: Selection, n: int) -> Selection:
    """A one-row selection repeated over ``n`` rows (broadcast views, no copies)."""
    rows = sel._logits
    if sel._lib == "torch":
        rep = lambda a: a.expand(n)  # noqa: E731
        rows_n = rows.expand(n, -1)
    else:
        xp = np if sel._lib == "numpy" else sys.modules["cupy"]
        rep = lambda a: xp.broadcast_to(a, (n,))  # noqa: E731
        rows_n = xp.broadcast_to(rows, (n, rows.shape[1]))
    return Selection(
        rep(sel._threshold),
        rep(sel._num_ties),
        rep(sel._count),
        logits=rows_n,
        lib=sel._lib,
        dtype=sel._dtype,
        backend=sel.backend,
    )


def draws(target: Target, row, k=None, p=None, *, ties="lowest_index", dtype="float32", n=N_DRAWS):
    """``n`` draws from one row under seeds ``0..n-1`` on ``target``, as numpy int64.

    The backend selects once and the selection is tiled over ``n`` rows (the
    numpy backend takes ~0.3 ms a row, too slow for 20k rows).  The first rows
    are also drawn end to end with ``qrita.sample`` on a real batch, and must
    give the same tokens.
    """
    x = target.array(row, dtype)
    sel = qrita.select(x[None], k, p, backend=target.backend, ties=ties)
    seeds = target.index_array(np.arange(n))
    tokens = to_numpy(sampling.sample_from_selection(tiled_selection(sel, n), seeds=seeds))
    B, V = target.shape(256, x.shape[0])
    batch = target.array(np.broadcast_to(np.asarray(row, np.float64), (B, V)), dtype)
    direct = qrita.sample(batch, k, p, seeds=target.index_array(np.arange(B)), backend=target.backend, ties=ties)
    np.testing.assert_array_equal(to_numpy(direct), tokens[:B])
    return tokens


def assert_follows(tokens, probs, p_min=P_MIN):
    """Chi-square goodness of fit of the token counts to ``probs``; nothing outside its support."""
    tokens = np.asarray(tokens)
    counts = np.bincount(tokens, minlength=probs.shape[0])
    support = probs > 0
    assert counts[~support].sum() == 0, f"drew tokens outside the kept set: {np.flatnonzero(counts * ~support)}"
    assert (tokens >= 0).all()
    if support.sum() == 1:
        return
    result = scipy.stats.chisquare(counts[support], probs[support] * tokens.shape[0])
    assert result.pvalue > p_min, f"chi-square p-value {result.pvalue:.2e} (counts {counts[support]})"


# --- the RNG spec -----------------------------------------------------------------------------


def test_rng_seed_zero_is_textbook_splitmix64():
    # published outputs of splitmix64 started from state 0
    assert [rng.random_bits(0, i) for i in range(4)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
        0xF88BB8A8724C81EC,
    ]


def test_rng_seed_reduction_and_signed_view():
    assert rng.random_bits(-1, 5) == rng.random_bits(2**64 - 1, 5)
    assert rng.random_bits(2**64 + 3, 7) == rng.random_bits(3, 7)
    assert rng.as_signed64(2**64 - 1) == -1 and rng.as_signed64(5) == 5
    assert rng.mix64(0) == 0 and rng.mix64(1) != 1


def test_uniform_and_gumbel_recipe():
    assert rng.uniform_from_bits(0) == 2.0**-53
    assert rng.uniform_from_bits(2**64 - 1) == 1.0
    assert rng.gumbel_from_bits(2**64 - 1) == INF
    u = rng.uniform_from_bits(0x8000000000000000)
    assert u == 0.5 + 2.0**-53
    assert rng.gumbel_from_bits(0x8000000000000000) == -math.log(-math.log(u))


SEEDS = [0, 1, 2, -1, 2**63, 2**63 - 1, 12345678901234567, -(2**62)]


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_vectorised_bits_equal_the_scalar_spec(lib):
    V = 300
    ref = np.array([[rng.random_bits(s, i) for i in range(V)] for s in SEEDS], dtype=np.uint64)
    states = np.array([rng.stream_state(s) for s in SEEDS], dtype=np.uint64)
    if lib == "torch":
        got = sampling.random_bits(torch.from_numpy(states.view(np.int64).copy()), V, "torch").numpy().view(np.uint64)
    else:
        got = sampling.random_bits(states.copy(), V, "numpy")
    np.testing.assert_array_equal(got, ref)
    # the seed -> state hashing of the array path
    raw = (
        torch.tensor(SEEDS[:2] + [-1], dtype=torch.int64)
        if lib == "torch"
        else np.array(SEEDS[:2] + [2**64 - 1], np.uint64)
    )
    mixed = sampling._mix64(raw, lib)
    mixed = mixed.numpy().view(np.uint64) if lib == "torch" else mixed
    assert mixed.tolist() == [rng.stream_state(s) for s in SEEDS[:2] + [-1]]


@pytest.mark.parametrize("lib", ["numpy", "torch"])
def test_vectorised_gumbel_equals_the_scalar_spec(lib):
    V = 200
    states = np.array([rng.stream_state(s) for s in SEEDS], dtype=np.uint64)
    if lib == "torch":
        g = sampling.gumbel_noise(torch.from_numpy(states.view(np.int64).copy()), V, "torch").numpy()
    else:
        g = sampling.gumbel_noise(states.copy(), V, "numpy")
    ref = np.array([[rng.gumbel_from_bits(rng.random_bits(s, i)) for i in range(V)] for s in SEEDS])
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, ref, rtol=1e-14, atol=0)


def test_fold_in():
    a = rng.fold_in(7, 0)
    assert a == rng.random_bits(7, 2**63)
    assert len({rng.fold_in(7, step) for step in range(100)}) == 100
    assert rng.fold_in(7, 3) != rng.fold_in(8, 3)
    with pytest.raises(ValueError, match="value must be in"):
        rng.fold_in(7, -1)


# --- distribution ----------------------------------------------------------------------------

ROW64 = np.random.default_rng(1).standard_normal(64).astype(np.float32)


@pytest.mark.parametrize(
    "k, p",
    [(12, None), (None, 0.7), (20, 0.8), (1, None), (None, 0.0)],
    ids=["k12", "p0.7", "k20-p0.8", "k1", "p0"],
)
def test_chi_square_follows_oracle(target, k, p):
    assert_follows(draws(target, ROW64, k, p), oracle_probs(ROW64, k, p))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
def test_chi_square_other_dtypes(target, dtype):
    reason = target.supports(dtype)
    if reason:
        pytest.skip(reason)
    values = to_numpy(target.array(ROW64, dtype))
    assert_follows(draws(target, ROW64, 10, 0.95, dtype=dtype, n=8000), oracle_probs(values, 10, 0.95))


def test_chi_square_has_power(target):
    """The same test rejects a plausible wrong distribution (uniform over the kept set)."""
    tokens = draws(target, ROW64, 12, None)
    probs = oracle_probs(ROW64, 12)
    support = probs > 0
    counts = np.bincount(tokens, minlength=64)[support]
    assert scipy.stats.chisquare(counts, np.full(12, tokens.size / 12)).pvalue < 1e-9


def test_ties_lowest_index_and_all(target):
    row = np.zeros(10)
    assert_follows(draws(target, row, 4, None, n=8000), np.r_[np.full(4, 0.25), np.zeros(6)])
    assert_follows(draws(target, row, 4, None, ties="all", n=8000), np.full(10, 0.1))
    assert_follows(draws(target, row, None, 0.35, n=8000), np.r_[np.full(4, 0.25), np.zeros(6)])


def test_posinf_entries_share_the_mass(target):
    row = np.array([1.0, INF, 50.0, INF, -INF, NAN, INF, 3.0])
    assert_follows(draws(target, row, None, 0.5, n=6000), oracle_probs(row, None, 0.5))
    assert_follows(draws(target, row, 6, None, n=6000), np.array([0, 1, 0, 1, 0, 0, 1, 0]) / 3)


def test_neg_inf_and_nan_never_drawn_and_empty_rows_give_minus_one(target):
    x = target.array(
        [
            [NAN, -INF, 1.0, -INF],
            [NAN, NAN, NAN, NAN],
            [-INF, -INF, -INF, -INF],
            [-INF, 2.0, NAN, 2.0],
        ],
        "float32",
    )
    for seed in range(20):
        tokens = qrita.sample(x, k=3, p=0.9, seeds=seed, backend=target.backend)
        assert str(tokens.dtype).endswith("int64")
        tokens = to_numpy(tokens)
        assert tokens[0] == 2 and tokens[1] == -1 and tokens[2] == -1 and tokens[3] in (1, 3)


def test_generators():
    n = 8000
    probs = oracle_probs(ROW64, 12, 0.9)
    tiled = tiled_selection(qrita.select(ROW64[None], 12, 0.9), n)
    a = sampling.sample_from_selection(tiled, generator=np.random.default_rng(5))
    assert_follows(a, probs)
    np.testing.assert_array_equal(a, sampling.sample_from_selection(tiled, generator=np.random.default_rng(5)))
    assert (a != sampling.sample_from_selection(tiled, generator=np.random.default_rng(6))).any()
    assert_follows(sampling.sample_from_selection(tiled, generator=np.random.RandomState(5)), probs)
    tsel = tiled_selection(qrita.select(torch.from_numpy(ROW64)[None], 12, 0.9), n)
    d = sampling.sample_from_selection(tsel, generator=torch.Generator().manual_seed(5))
    assert_follows(d.numpy(), probs)
    assert torch.equal(d, sampling.sample_from_selection(tsel, generator=torch.Generator().manual_seed(5)))
    # a torch generator may serve numpy logits and the other way round
    assert_follows(sampling.sample_from_selection(tiled, generator=torch.Generator().manual_seed(1)), probs)
    assert_follows(sampling.sample_from_selection(tsel, generator=np.random.default_rng(1)).numpy(), probs)


def test_default_generators_follow_the_library_seed():
    x = np.ascontiguousarray(np.broadcast_to(ROW64, (64, 64)))
    np.random.seed(3)
    a = qrita.sample(x, k=20)
    np.random.seed(3)
    assert (qrita.sample(x, k=20) == a).all()
    assert (qrita.sample(x, k=20) != a).any()
    t = torch.from_numpy(x)
    torch.manual_seed(3)
    b = qrita.sample(t, k=20)
    torch.manual_seed(3)
    assert torch.equal(qrita.sample(t, k=20), b)


# --- reproducibility --------------------------------------------------------------------------


def test_row_token_depends_only_on_seed_and_row():
    gen = np.random.default_rng(7)
    x = gen.standard_normal((40, 500)).astype(np.float32)
    k = gen.integers(1, 60, size=40)
    p = gen.uniform(0.3, 1.0, size=40)
    seeds = gen.integers(-(2**63), 2**63 - 1, size=40, dtype=np.int64)
    full = qrita.sample(x, k, p, seeds=seeds)
    # permuted, partial and mixed batches give each (row, seed) the same token
    perm = gen.permutation(40)
    np.testing.assert_array_equal(qrita.sample(x[perm], k[perm], p[perm], seeds=seeds[perm]), full[perm])
    for b in (0, 13, 39):
        assert qrita.sample(x[b], int(k[b]), float(p[b]), seeds=int(seeds[b])) == full[b]
        assert qrita.sample(x[b : b + 1], k[b : b + 1], p[b : b + 1], seeds=seeds[b : b + 1])[0] == full[b]
    other = gen.standard_normal((7, 500)).astype(np.float32)
    mixed = np.concatenate([other, x[:5], other])
    km = np.concatenate([np.full(7, 3), k[:5], np.full(7, 3)])
    pm = np.concatenate([np.full(7, 0.5), p[:5], np.full(7, 0.5)])
    sm = np.concatenate([np.arange(7), seeds[:5], np.arange(7)])
    np.testing.assert_array_equal(qrita.sample(mixed, km, pm, seeds=sm)[7:12], full[:5])
    tt = torch.from_numpy
    np.testing.assert_array_equal(qrita.sample(tt(x), tt(k), tt(p), seeds=tt(seeds)).numpy(), full)


def test_same_tokens_on_every_target(target):
    """A row's token under a seed is the same on every backend, library and device."""
    gen = np.random.default_rng(9)
    B, V = target.shape(12, 600)
    x = gen.standard_normal((B, V))
    k = gen.integers(1, 40, size=B)
    p = gen.uniform(0.3, 1.0, size=B)
    seeds = gen.integers(-(2**63), 2**63 - 1, size=B, dtype=np.int64)
    want = qrita.sample(x.astype(np.float32), k, p, seeds=seeds, backend="reference")
    got = qrita.sample(
        target.array(x, "float32"),
        target.index_array(k),
        target.float_array(p, "float64"),
        seeds=target.index_array(seeds),
        backend=target.backend,
    )
    np.testing.assert_array_equal(to_numpy(got), want)


def test_same_seed_same_token_and_different_seeds_differ():
    x = np.ascontiguousarray(np.broadcast_to(ROW64, (200, 64)))
    a = qrita.sample(x, p=0.95, seeds=11)
    assert (a == a[0]).all()
    b = qrita.sample(x, p=0.95, seeds=np.arange(200))
    assert len(set(b.tolist())) > 10


def test_row_blocks_do_not_change_the_tokens(monkeypatch):
    gen = np.random.default_rng(8)
    x = gen.standard_normal((37, 100)).astype(np.float32)
    seeds = np.arange(37)
    whole = qrita.sample(x, k=10, p=0.9, seeds=seeds)
    monkeypatch.setattr(sampling, "_BLOCK_ELEMENTS", 300)  # 3 rows a block
    np.testing.assert_array_equal(qrita.sample(x, k=10, p=0.9, seeds=seeds), whole)
    t = qrita.sample(torch.from_numpy(x), k=10, p=0.9, seeds=torch.from_numpy(seeds))
    np.testing.assert_array_equal(t.numpy(), whole)


# --- shapes, libraries, arguments ---------------------------------------------------------------


def test_shapes_and_types():
    assert qrita.sample(np.zeros((0, 5), np.float32), k=2, seeds=1).shape == (0,)
    one = qrita.sample(ROW64, k=3, seeds=4)
    assert isinstance(one, np.ndarray) and one.shape == () and one.dtype == np.int64
    t = qrita.sample(torch.from_numpy(ROW64), k=3, seeds=4)
    assert t.shape == () and t.dtype == torch.int64 and int(t) == int(one)
    x = np.random.default_rng(2).standard_normal((8, 128)).astype(np.float32)
    # non-contiguous rows
    np.testing.assert_array_equal(
        qrita.sample(x[:, ::2], k=5, seeds=np.arange(8)), qrita.sample(x[:, ::2].copy(), k=5, seeds=np.arange(8))
    )
    # seeds of other integer dtypes and libraries (same device); 0-d seeds broadcast
    ref = qrita.sample(x, k=5, seeds=np.arange(8))
    np.testing.assert_array_equal(qrita.sample(x, k=5, seeds=np.arange(8, dtype=np.uint64)), ref)
    np.testing.assert_array_equal(qrita.sample(x, k=5, seeds=torch.arange(8, dtype=torch.int32)), ref)
    np.testing.assert_array_equal(qrita.sample(x, k=5, seeds=np.int64(3)), qrita.sample(x, k=5, seeds=3))
    np.testing.assert_array_equal(qrita.sample(x, k=5, seeds=np.array(3)), qrita.sample(x, k=5, seeds=3))
    np.testing.assert_array_equal(qrita.sample(x, k=5, seeds=torch.tensor(3)), qrita.sample(x, k=5, seeds=3))
    # a seed is taken modulo 2**64
    np.testing.assert_array_equal(qrita.sample(x, k=5, seeds=-1), qrita.sample(x, k=5, seeds=2**64 - 1))


class DLPackOnly:
    """A DLPack producer that is not a numpy/torch/cupy array."""

    def __init__(self, a):
        self._a = a

    def __dlpack__(self, *args, **kwargs):
        return self._a.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._a.__dlpack_device__()


def test_dlpack_producer_comes_back_as_torch():
    x = np.random.default_rng(3).standard_normal((6, 50)).astype(np.float32)
    out = qrita.sample(DLPackOnly(x), k=5, p=0.8, seeds=torch.arange(6))
    assert isinstance(out, torch.Tensor)
    np.testing.assert_array_equal(out.numpy(), qrita.sample(x, k=5, p=0.8, seeds=np.arange(6)))


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        (dict(seeds=np.arange(3)), QritaValueError, r"seeds must have shape \[B\]=\[4\], got \(3,\)"),
        (dict(seeds=np.zeros(4)), QritaTypeError, "seeds must have an integer dtype, got float64"),
        (dict(seeds=1.5), QritaTypeError, "seeds must be an integer or an integer array"),
        (dict(seeds=True), QritaTypeError, "got bool"),
        (dict(seeds=[1, 2, 3, 4]), QritaTypeError, "seeds must be None, an integer, or an integer array"),
        (dict(seeds=1, generator=np.random.default_rng()), QritaValueError, "pass seeds or generator, not both"),
        (dict(generator=42), QritaTypeError, "generator must be None, a torch.Generator"),
        (dict(k=np.arange(3)), QritaValueError, r"k must have shape \[B\]=\[4\]"),
        (dict(backend="nope"), qrita.UnknownBackendError, "backend must be"),
    ],
)
def test_bad_arguments(kwargs, error, message):
    x = np.zeros((4, 10), np.float32)
    with pytest.raises(error, match=message):
        qrita.sample(x, **kwargs)


def test_bad_arguments_leave_the_generator_alone():
    gen = np.random.default_rng(0)
    with pytest.raises(QritaValueError, match="k must have shape"):
        qrita.sample(np.zeros((4, 10), np.float32), k=np.arange(3), generator=gen)
    assert gen.integers(0, 2**62) == np.random.default_rng(0).integers(0, 2**62)


def test_bad_logits():
    with pytest.raises(QritaTypeError, match="logits must be"):
        qrita.sample([[1.0, 2.0]], seeds=1)
    with pytest.raises(QritaValueError, match="V >= 1"):
        qrita.sample(np.zeros((2, 0), np.float32), seeds=1)
    with pytest.raises(QritaTypeError, match="selection must be a qrita.Selection"):
        sampling.sample_from_selection(np.zeros(3))


def test_import_qrita_loads_no_torch():
    import subprocess

    code = "import sys, qrita, qrita.sampling, qrita.integrations.vllm, qrita.integrations.transformers; "
    code += "print(sorted(m for m in ('torch', 'cupy', 'transformers', 'triton', 'numba') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- Selection.probs / indices against the oracle --------------------------------------------------


def probs_rows(V: int) -> np.ndarray:
    """float64 ``[8, V]``: +inf, many ties, all zero, NaN, -inf, empty, one +inf, float64-only distinctions."""
    gen = np.random.default_rng(11)
    x = gen.standard_normal((8, V))
    x[0, :5] = INF
    x[1] = np.round(x[1] * 2) / 2
    x[2] = 0.0
    x[3, ::3] = NAN
    x[4, ::2] = -INF
    x[5] = -INF
    x[6, 7] = INF
    x[7] = 1.0 + np.arange(V) * 1e-12  # distinct in float64, one value in float32
    return x


@pytest.mark.parametrize("ties", ["lowest_index", "all"])
def test_probs_and_indices_match_oracle(target, dtype, ties):
    B, V = target.shape(8, 300)
    x_all = probs_rows(V)
    gen = np.random.default_rng(12)
    k_all = gen.integers(1, 80, size=8)
    p_all = gen.uniform(0.2, 1.0, size=8).astype(np.float32)
    for b0 in range(0, 8, B):  # simulated targets take few rows at a time
        x, k, p = x_all[b0 : b0 + B], k_all[b0 : b0 + B], p_all[b0 : b0 + B]
        arr = target.array(x, dtype)
        values = to_numpy(arr)
        sel = qrita.select(arr, target.index_array(k), target.float_array(p), backend=target.backend, ties=ties)
        idx, count = sel.indices()
        probs = to_numpy(sel.probs())
        oracle = oracle_select(values, k, p, ties=ties)
        np.testing.assert_array_equal(to_numpy(idx), oracle.indices())
        np.testing.assert_array_equal(to_numpy(count), oracle.count)
        assert probs.shape == oracle.indices().shape
        for b in range(x.shape[0]):
            n = oracle.order[b].size
            want = oracle_probs(values[b], int(k[b]), float(p[b]), ties=ties)[oracle.order[b]]
            np.testing.assert_allclose(probs[b, :n], want, rtol=1e-5, atol=1e-7)
            assert (probs[b, n:] == 0).all()


def test_probs_of_one_row():
    sel = qrita.select(ROW64, k=4)
    probs = sel.probs()
    idx, count = sel.indices()
    assert probs.shape == (4,) and idx.shape == (4,) and int(count) == 4
    np.testing.assert_allclose(probs, oracle_probs(ROW64, 4)[idx], rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("k, p", [(100, 0.9), (50, None)], ids=["k100p0.9", "k50"])
def test_gpu_triton_small_batch_scalar_k_draws(k, p, monkeypatch):
    """Triton at 16 < B <= 64 with a scalar k (a top-p over the top-k survivors: four-warp span programs,
    launch.span_warps_of): the reference's tokens, the eight-warp span pass's tokens, batch independence, no
    host sync and a CUDA-graph replay."""
    pytest.importorskip("triton")
    from qrita.backends.triton import launch as triton_launch

    gen = np.random.default_rng(29)
    B, V = 64, 151936
    x = gen.standard_normal((B, V)).astype(np.float32) * 2
    for r in range(B):  # a few strong logits a row, as in LLM-like rows
        x[r, gen.integers(0, V, 20)] = 12.0 + 4.0 * gen.random(20)
    seeds = np.arange(B) * 7 + 1
    want = qrita.sample(x, k, p, seeds=seeds, backend="reference")
    xt, sd = torch.from_numpy(x).cuda(), torch.from_numpy(seeds).cuda()
    got = qrita.sample(xt, k, p, seeds=sd, backend="triton")
    assert (got.cpu().numpy() == want).mean() > 0.99  # rows inside the top-p ambiguity window may differ
    assert torch.equal(qrita.sample(xt[:24], k, p, seeds=sd[:24], backend="triton"), got[:24])
    _no_sync(lambda: qrita.sample(xt, k, p, seeds=sd, backend="triton"))
    graph, out = _graph(lambda: qrita.sample(xt, k, p, seeds=sd, backend="triton"))
    out.fill_(-7)
    graph.replay()
    assert torch.equal(out, got)
    monkeypatch.setattr(triton_launch, "KP_IDX_SPAN_WARPS", triton_launch.SPAN_WARPS)
    assert torch.equal(qrita.sample(xt, k, p, seeds=sd, backend="triton"), got)


# --- GPU (device machine) ---------------------------------------------------------------------------


def _no_sync(fn):
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        return fn()
    finally:
        torch.cuda.set_sync_debug_mode(0)


def _graph(fn):
    """Capture ``fn`` in a CUDA graph after a warm-up on a side stream; return ``(graph, output)``."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        fn()
        fn()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    return graph, out


@pytest.mark.gpu
def test_gpu_draw_no_sync_graph_and_same_tokens_as_cpu():
    """The sampling step alone on CUDA (selection from the oracle): no host sync, graph-capturable, CPU tokens."""
    dev = torch.device("cuda")
    gen = np.random.default_rng(21)
    x = gen.standard_normal((96, 4000)).astype(np.float32)
    x[0, :3] = INF
    x[1] = -INF
    k = gen.integers(1, 200, size=96)
    p = gen.uniform(0.3, 1.0, size=96)
    seeds = gen.integers(-(2**63), 2**63 - 1, size=96, dtype=np.int64)
    cpu_sel = qrita.select(torch.from_numpy(x), torch.from_numpy(k), torch.from_numpy(p), backend="reference")
    want = qrita.sample(x, k, p, seeds=seeds, backend="reference")
    sel = Selection(
        cpu_sel._threshold.to(dev),
        cpu_sel._num_ties.to(dev),
        cpu_sel._count.to(dev),
        logits=torch.from_numpy(x).to(dev),
        lib="torch",
        dtype="float32",
        backend="reference",
    )
    sd = torch.from_numpy(seeds).to(dev)
    got = _no_sync(lambda: sampling.sample_from_selection(sel, seeds=sd))
    np.testing.assert_array_equal(got.cpu().numpy(), want)
    _no_sync(lambda: sampling.sample_from_selection(sel, generator=torch.Generator(device=dev).manual_seed(1)))
    _no_sync(lambda: sampling.sample_from_selection(sel))
    _no_sync(lambda: sampling.sample_from_selection(sel, seeds=5))
    graph, out = _graph(lambda: sampling.sample_from_selection(sel, seeds=sd))
    out.fill_(-7)
    graph.replay()
    np.testing.assert_array_equal(out.cpu().numpy(), want)
    # the default CUDA generator advances on every replay
    graph, out = _graph(lambda: sampling.sample_from_selection(sel))
    graph.replay()
    first = out.clone()
    graph.replay()
    assert not torch.equal(first, out)


@pytest.mark.gpu
def test_gpu_draw_cupy():
    cupy = pytest.importorskip("cupy")
    gen = np.random.default_rng(22)
    x = gen.standard_normal((32, 1000)).astype(np.float32)
    seeds = np.arange(32, dtype=np.int64)
    ref = qrita.select(x, 50, 0.9, backend="reference")
    want = sampling.sample_from_selection(ref, seeds=seeds)
    sel = Selection(
        cupy.asarray(ref._threshold),
        cupy.asarray(ref._num_ties),
        cupy.asarray(ref._count),
        logits=cupy.asarray(x),
        lib="cupy",
        dtype="float32",
        backend="reference",
    )
    got = sampling.sample_from_selection(sel, seeds=cupy.asarray(seeds))
    assert isinstance(got, cupy.ndarray) and got.dtype == cupy.int64
    np.testing.assert_array_equal(got.get(), want)
    assert (sampling.sample_from_selection(sel).get() >= 0).all()
    assert (sampling.sample_from_selection(sel, generator=np.random.default_rng(0)).get() >= 0).all()


@pytest.mark.gpu
def test_gpu_sample_large_rows_no_sync_graph(target):
    """GPU-sized rows on every CUDA target: CPU tokens per seed; torch: no host sync, CUDA-graph capture."""
    gen = np.random.default_rng(23)
    B, V = 256, 32000
    x = gen.standard_normal((B, V)).astype(np.float32) * 2
    k = gen.integers(1, 300, size=B)
    p = gen.uniform(0.3, 1.0, size=B)
    want = qrita.sample(x, k, p, seeds=np.arange(B), backend="reference")
    xs, ks, ps, sd = (
        target.array(x, "float32"),
        target.index_array(k),
        target.float_array(p),
        target.index_array(np.arange(B)),
    )
    got = qrita.sample(xs, ks, ps, seeds=sd, backend=target.backend)
    assert (to_numpy(got) == want).mean() > 0.99  # rows inside the top-p ambiguity window may differ
    if target.lib != "torch":
        return
    _no_sync(lambda: qrita.sample(xs, ks, ps, seeds=sd, backend=target.backend))
    graph, out = _graph(lambda: qrita.sample(xs, ks, ps, seeds=sd, backend=target.backend))
    out.fill_(-7)
    graph.replay()
    assert torch.equal(out, got)
