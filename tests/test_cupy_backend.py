"""The cupy backend on a GPU (``PYTHONPATH=. python3 -m pytest tests/test_cupy_backend.py -m gpu``).

Everything is judged exactly by the sort-based oracle (``qrita.reference``); at
real shapes the oracle checks sampled rows.  Beyond the shared conformance suite
(``tests/test_conformance.py``, which picks this backend up by itself) this file
covers what is specific to the CUDA kernels: real vocabularies, ``B*V > 2**31``,
adversarial rows at scale, cupy arrays and mixed torch/cupy calls, determinism,
batch invariance, the split-row path against one block per row, no host sync,
CUDA-graph capture and the scratch bound.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import qrita
from qrita.reference import check_mask, check_selection, mask_from_selection

pytestmark = pytest.mark.gpu

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():  # pragma: no cover - CPU machines
    pytest.skip("needs a CUDA device", allow_module_level=True)
cupy = pytest.importorskip("cupy")

from qrita.backends.cupy import BACKEND, _launch  # noqa: E402

if BACKEND.unavailable_reason() is not None:  # pragma: no cover
    pytest.skip(f"cupy backend unavailable: {BACKEND.unavailable_reason()}", allow_module_level=True)

DTYPES = ("float32", "float16", "bfloat16")
TIES = ("lowest_index", "all")
INF, NAN = math.inf, math.nan


# --- helpers -------------------------------------------------------------------------------------


def tdt(dtype):
    return getattr(torch, dtype)


def llm_like(gen, B, V, n_outliers=32, device="cuda"):
    """Gaussian noise floor plus a few strong outliers per row (generated on the GPU)."""
    x = torch.randn(B, V, device=device, generator=gen) * 2.0
    cols = torch.randint(0, V, (B, n_outliers), device=device, generator=gen)
    bump = torch.rand(B, n_outliers, device=device, generator=gen) * 7.0 + 8.0
    x.scatter_add_(1, cols, bump)
    return x


@pytest.fixture
def gen(request):
    g = torch.Generator(device="cuda")
    g.manual_seed(abs(hash(request.node.name)) % 2**31)
    return g


def host(a):
    """Any array as numpy (floats exactly, as float64)."""
    if isinstance(a, torch.Tensor):
        t = a.detach().cpu()
        return t.double().numpy() if t.is_floating_point() else t.numpy()
    if isinstance(a, cupy.ndarray):
        h = a.get()
        return h.astype(np.float64) if h.dtype.kind == "f" else h
    return np.asarray(a)


def raw_bits(a):
    if isinstance(a, torch.Tensor):
        t = a.detach().contiguous()
        return t.view({2: torch.int16, 4: torch.int32, 1: torch.uint8}[t.element_size()]).cpu().numpy()
    return cupy.ascontiguousarray(a).view(f"uint{a.itemsize * 8}").get()


def rows_arg(v, rows):
    if v is None or isinstance(v, (int, float)):
        return v
    return host(v)[rows]


def judge(x, k, p, ties="lowest_index", rows=None, options=None, mask=True):
    """select (and top_k_top_p) on ``x``; the oracle checks ``rows`` (default: all)."""
    sel = qrita.select(x, k, p, backend="cupy", ties=ties, options=options)
    B = x.shape[0]
    rows = np.arange(B) if rows is None else np.asarray(sorted(set(int(r) % B for r in rows)))
    values = host(x[torch.as_tensor(rows, device=x.device)] if isinstance(x, torch.Tensor) else x[cupy.asarray(rows)])
    thr, nt, cnt = (host(getattr(sel, f))[rows] for f in ("threshold", "num_ties", "count"))
    check_selection(values, rows_arg(k, rows), rows_arg(p, rows), ties, thr, nt, cnt)
    if mask:
        out = qrita.top_k_top_p(x, k, p, backend="cupy", ties=ties, options=options)
        sub = out[torch.as_tensor(rows, device=x.device)] if isinstance(out, torch.Tensor) else out[cupy.asarray(rows)]
        kept = host(sub) != -INF
        np.testing.assert_array_equal(kept, mask_from_selection(values, thr, nt))
        check_mask(values, rows_arg(k, rows), rows_arg(p, rows), ties, kept)
    return sel


def same_selection(a, b, what=""):
    for f in ("threshold", "num_ties", "count"):
        assert np.array_equal(raw_bits(getattr(a, f)), raw_bits(getattr(b, f))), f"{what}: {f} differs"


# --- real shapes ----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("k", "p"), [(50, None), (None, 0.9), (50, 0.95), (1, None), (4096, 0.99)])
@pytest.mark.parametrize(
    ("B", "V"), [(1, 32000), (3, 128256), (16, 151936), (64, 262144), (1024, 32000), (1024, 128256)]
)
def test_real_shapes(dtype, k, p, B, V, gen):
    x = llm_like(gen, B, V).to(tdt(dtype))
    judge(x, k, p, rows=[0, 1, B // 2, B - 1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ties", TIES)
def test_every_row_of_a_large_batch(dtype, ties, gen):
    B, V = 512, 32000
    x = (torch.round(llm_like(gen, B, V) * 4) / 4).to(tdt(dtype))
    k = torch.randint(-50, V + 50, (B,), device="cuda", generator=gen)
    p = torch.rand(B, device="cuda", generator=gen) * 1.2 - 0.1
    judge(x, k, p, ties=ties)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_more_than_2_pow_31_entries(dtype, gen):
    B, V = 16400, 131072
    assert B * V > 2**31
    x = torch.randn(B, V, device="cuda", dtype=tdt(dtype), generator=gen)
    x[B - 1, 12345] = 100.0
    x[B - 2, :] = 0.5  # all equal at the far end: ties resolved by index there too
    rows = [0, B // 2, B - 2, B - 1]
    sel = judge(x, 50, 0.9, rows=rows, mask=False)
    assert host(sel.count)[B - 2] == 45  # 50 equal survivors, then the first 45 reach p = 0.9
    out = qrita.top_k_top_p(x, 50, None, backend="cupy")
    assert out[B - 1, 12345].item() == 100.0
    kept_far = host(out[B - 2]) != -INF
    assert kept_far[:50].all() and not kept_far[50:].any()
    del out
    qrita.top_k_top_p(x, 50, 0.9, backend="cupy", inplace=True)
    assert (host(x[B - 1]) != -INF).sum() == host(sel.count)[B - 1]


# --- adversarial rows at scale ----------------------------------------------------------------------


def _adversarial(B, V, rng):
    x = rng.standard_normal((B, V)) * 2.0
    x[0] = 0.25  # all equal
    x[1] = np.round(x[1] * 2) / 2  # heavy duplicates
    x[2, :] = -INF
    x[2, 17] = 3.0  # a single keepable entry
    x[3, :] = NAN
    x[3, ::7] = -INF  # nothing keepable
    x[4, rng.choice(V, 5, replace=False)] = INF  # +inf share the top-p mass
    x[5, 1234 % V] = 300.0  # a dominant token (exp underflow elsewhere)
    x[6, :] = 0.0
    x[6, ::2] = -0.0  # signed zeros
    x[7, rng.choice(V, V // 2, replace=False)] = NAN
    return x


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize("V", [32000, 128256])
@pytest.mark.parametrize(
    ("k", "p"), [(1, None), (50, None), ("V-1", None), (None, 0.5), (None, 1 - 1e-7), (None, 0.0), (20, 0.8)]
)
def test_adversarial_rows(dtype, ties, V, k, p):
    rng = np.random.default_rng(V + len(str(k)) + int(1000 * (p or 0)))
    k = V - 1 if k == "V-1" else k
    x = torch.from_numpy(_adversarial(8, V, rng)).to(tdt(dtype)).cuda()
    judge(x, k, p, ties=ties)
    judge(x, k, p, ties=ties, options={"truncation": False}, mask=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_all_equal_rows_keep_the_lowest_indices(dtype):
    B, V = 4, 151936
    x = torch.full((B, V), 1.5, device="cuda", dtype=tdt(dtype))
    for k in (1, 7, 4096, 5000, V - 1):
        out = qrita.top_k(x, k, backend="cupy")
        kept = host(out) != -INF
        assert kept[:, :k].all() and not kept[:, k:].any(), k
    sel = qrita.select(x, 100, None, backend="cupy", ties="all")
    assert (host(sel.count) == V).all()


@pytest.mark.parametrize("dtype", DTYPES)
def test_per_row_k_and_p_with_disabled_rows(dtype, gen):
    B, V = 16, 128256
    x = llm_like(gen, B, V).to(tdt(dtype))
    k = torch.tensor([0, -1, V, V + 5, 1, 50, V - 1, 2**40, 10, 0, 3, 7, 100, 4096, 5000, 1], device="cuda")
    p = torch.tensor(
        [NAN, 0.5, 1.0, 0.9, 0.0, -1.0, 0.999, 0.3, 1.5, 0.95, NAN, 1e-9, 0.99, 0.9, 0.5, 0.7],
        device="cuda",
        dtype=torch.float32,
    )
    for ties in TIES:
        judge(x, k, p, ties=ties)
        judge(x, k, p.double(), ties=ties, mask=False)
        judge(x, k, None, ties=ties, mask=False)
        judge(x, None, p, ties=ties, mask=False)


# --- libraries and layouts --------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_cupy_arrays_in_and_out(dtype, gen):
    B, V = 8, 151936
    x = cupy.from_dlpack(llm_like(gen, B, V).to(tdt(dtype)))
    sel = judge(x, 50, 0.9)
    for f in ("threshold", "num_ties", "count", "hit"):
        assert isinstance(getattr(sel, f), cupy.ndarray), f
    assert sel.threshold.dtype == x.dtype
    out = qrita.top_k_top_p(x, 50, 0.9, backend="cupy")
    assert isinstance(out, cupy.ndarray) and out.dtype == x.dtype and out.shape == x.shape
    k = cupy.full((B,), 50, dtype=cupy.int64)
    p = cupy.full((B,), 0.9, dtype=cupy.float32)
    same_selection(qrita.select(x, k, p, backend="cupy"), sel, "per-row cupy k/p")


def test_mixed_torch_and_cupy_arguments(gen):
    B, V = 8, 32000
    xt = llm_like(gen, B, V).half()
    xc = cupy.from_dlpack(xt)
    k_c = cupy.full((B,), 40, dtype=cupy.int64)
    p_t = torch.full((B,), 0.8, device="cuda")
    a = qrita.select(xt, k_c, p_t, backend="cupy")  # torch logits, cupy k
    b = qrita.select(xc, k_c, p_t, backend="cupy")  # cupy logits, torch p
    assert isinstance(a.threshold, torch.Tensor) and isinstance(b.threshold, cupy.ndarray)
    same_selection(a, b, "torch vs cupy logits")
    judge(xt, k_c, p_t, mask=False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_strided_views_and_in_place(dtype, gen):
    B, V = 6, 128256
    values = torch.round(llm_like(gen, B, V) * 4) / 4
    want = qrita.top_k_top_p(values.to(tdt(dtype)), 50, 0.9, backend="cupy")
    parent = torch.full((B, 2 * V + 3), NAN, device="cuda", dtype=tdt(dtype))
    view = parent[:, 3::2]  # row stride and column stride both != contiguous
    view.copy_(values.to(tdt(dtype)))
    judge(view, 50, 0.9)
    before = raw_bits(parent)
    out = qrita.top_k_top_p(view, 50, 0.9, backend="cupy", inplace=True)
    assert out is view
    after = raw_bits(parent)
    outside = np.ones(parent.shape, dtype=bool)
    outside[:, 3::2] = False
    assert np.array_equal(after[outside], before[outside]), "wrote outside the view"
    assert np.array_equal(raw_bits(view), raw_bits(want))
    transposed = values.to(tdt(dtype)).t().contiguous().t()  # column stride B
    same_selection(
        qrita.select(transposed, 50, 0.9, backend="cupy"),
        qrita.select(values.to(tdt(dtype)), 50, 0.9, backend="cupy"),
        "transposed",
    )


def test_mask_value_and_out_of_place(gen):
    B, V = 4, 32000
    x = llm_like(gen, B, V).bfloat16()
    before = raw_bits(x)
    for mv in (-INF, -1000.0, 0.0, -1e9):
        out = qrita.top_k_top_p(x, 20, 0.9, backend="cupy", mask_value=mv)
        sel = qrita.select(x, 20, 0.9, backend="cupy")
        keep = host(sel.mask())
        ob, xb = raw_bits(out), raw_bits(x)
        assert np.array_equal(ob[keep], xb[keep])
        fill = torch.tensor(mv, dtype=torch.bfloat16).view(torch.int16).item()
        assert (ob[~keep] == fill).all()
    assert np.array_equal(raw_bits(x), before), "out of place touched the input"


# --- guarantees ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("k", "p"), [(50, None), (None, 0.9), (50, 0.9)])
def test_deterministic(dtype, k, p, gen):
    for B, V in ((64, 151936), (2, 262144)):  # one block per row, and the split path
        x = (torch.round(llm_like(gen, B, V) * 16) / 16).to(tdt(dtype))
        first = qrita.select(x, k, p, backend="cupy")
        first_out = raw_bits(qrita.top_k_top_p(x, k, p, backend="cupy"))
        for _ in range(10):
            same_selection(qrita.select(x, k, p, backend="cupy"), first, "repeat")
            assert np.array_equal(raw_bits(qrita.top_k_top_p(x, k, p, backend="cupy")), first_out)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("k", "p"), [(20, None), (None, 0.9), (20, 0.8)])
def test_batch_invariant(dtype, k, p, gen):
    V = 128256
    rows = (torch.round(llm_like(gen, 3, V) * 8) / 8).to(tdt(dtype))
    big = llm_like(gen, 300, V).to(tdt(dtype))
    ref = qrita.select(rows, k, p, backend="cupy")
    for r in range(3):
        alone = qrita.select(rows[r], k, p, backend="cupy")  # B = 1: split path
        mixed = torch.cat([big[:150], rows[r : r + 1], big[150:]])  # B = 301: one block per row
        in_big = qrita.select(mixed, k, p, backend="cupy")
        for f in ("threshold", "num_ties", "count"):
            want = raw_bits(getattr(ref, f))[r]
            assert raw_bits(getattr(alone, f)).reshape(-1)[0] == want, f"row {r} alone: {f}"
            assert raw_bits(getattr(in_big, f))[150] == want, f"row {r} in a batch of 301: {f}"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("ties", TIES)
@pytest.mark.parametrize(
    ("k", "p", "options"),
    [
        (50, None, {}),
        (None, 0.9, {}),
        (30, 0.8, {}),
        (None, 0.95, {"truncation": False}),
        (7, None, {"truncation": False}),
    ],
)
def test_split_rows_equal_one_block_per_row(dtype, ties, k, p, options, gen):
    B, V = 4, 262144
    x = (torch.round(llm_like(gen, B, V) * 8) / 8).to(tdt(dtype))
    one = qrita.select(x, k, p, backend="cupy", ties=ties, options={**options, "split": 1})
    one_out = raw_bits(qrita.top_k_top_p(x, k, p, backend="cupy", ties=ties, options={**options, "split": 1}))
    for S in (2, 7, 64):
        many = qrita.select(x, k, p, backend="cupy", ties=ties, options={**options, "split": S})
        same_selection(many, one, f"split {S}")
        out = raw_bits(qrita.top_k_top_p(x, k, p, backend="cupy", ties=ties, options={**options, "split": S}))
        assert np.array_equal(out, one_out), f"split {S}: masked logits differ"
    judge(x, k, p, ties=ties, options=options, mask=False)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("B", "V"), [(2, 128256), (64, 151936), (8, 5003)])
@pytest.mark.parametrize(
    ("k", "p", "ties"), [(50, None, "lowest_index"), (None, 0.9, "lowest_index"), (20, 0.8, "all"), (4096, 0.99, "all")]
)
def test_fast_paths_equal_the_default(dtype, B, V, k, p, ties, gen):
    """options={"fast_paths": True} (vectorised row scans and masking, the default) and False
    (scalar loads, one chunk in flight) give the same bits."""
    x = (torch.round(llm_like(gen, B, V) * 8) / 8).to(tdt(dtype))
    for extra in ({}, {"truncation": False}):
        fast, slow = {**extra, "fast_paths": True}, {**extra, "fast_paths": False}
        kw = dict(backend="cupy", ties=ties)
        same_selection(qrita.select(x, k, p, options=fast, **kw), qrita.select(x, k, p, options=slow, **kw), "fast")
        want = raw_bits(qrita.top_k_top_p(x, k, p, options=slow, **kw))
        assert np.array_equal(raw_bits(qrita.top_k_top_p(x, k, p, options=fast, **kw)), want)
        y = x.clone()
        qrita.top_k_top_p(y, k, p, options=fast, inplace=True, **kw)
        assert np.array_equal(raw_bits(y), want)
        judge(x, k, p, ties=ties, options=fast, rows=[0, B - 1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("B", "V"), [(3, 131072), (16, 262144), (40, 32000)])
@pytest.mark.parametrize(
    ("k", "p", "ties"), [(None, 0.9, "lowest_index"), (50, None, "all"), (100, 0.9, "lowest_index")]
)
def test_crowded_bins_and_carried_words(dtype, B, V, k, p, ties, gen):
    """Search rounds that crowd a few bins (Gaussian, coarse ties) and all-equal rows whose bins
    sum to nearly 2^62 in fixed point, so the low words of a bin's mass carry into the high
    words; with truncation on and off (every row searched from the whole row)."""
    x = torch.randn(B, V, device="cuda", generator=gen)
    x[1::3] = torch.round(x[1::3] * 2) / 2
    x[2::3] = 0.25
    x = x.to(tdt(dtype))
    for extra in ({}, {"truncation": False}):
        judge(x, k, p, ties=ties, options=extra, rows=[0, 1, 2, B - 1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("B", "V"), [(2, 131072), (64, 151936), (16, 32000)])
@pytest.mark.parametrize("p", [0.9, 0.5, 0.999])
def test_second_cut_gives_the_same_bits(dtype, B, V, p, gen):
    """Top-p rows gathering above the second, count-based cut (the default) or the top-p cut
    (options={"second_cut": False}): the same bits; LLM-like rows at p = 0.9 hit with it."""
    x = llm_like(gen, B, V).to(tdt(dtype))
    x[1::4] = torch.randn(x[1::4].shape, device="cuda", generator=gen).to(x.dtype)  # rows that miss
    kw = dict(backend="cupy")
    on, off = qrita.select(x, None, p, **kw), qrita.select(x, None, p, options={"second_cut": False}, **kw)
    same_selection(on, off, "second cut")
    if p == 0.9:
        assert bool(on.hit[0]), "an LLM-like top-p 0.9 row should hit above the second cut"
    want = raw_bits(qrita.top_k_top_p(x, None, p, options={"second_cut": False}, **kw))
    assert np.array_equal(raw_bits(qrita.top_k_top_p(x, None, p, **kw)), want)
    judge(x, None, p, rows=[0, 1, B - 1])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("B", "V"), [(2, 131072), (64, 131072), (16, 151936)])
@pytest.mark.parametrize(("k", "p"), [(300, None), (300, 0.9), (100, None)])
def test_top_k_rows_that_miss_gather_again(dtype, B, V, k, p, gen):
    """Gaussian rows whose first 1024 entries (the sample) are 1.25x wider: the cut holds fewer than
    k candidates, the second one (for 4k) enough.  The same bits as without second cuts (which
    then search the whole row), on the split path (B=2, 16) and one block per row (B=64).

    The sample is the 1024 mid-quantiles of N(0, 1.25^2), shuffled per row, so that its sigma is
    1.25 whatever the draw (random samples made a rare row's second cut hold fewer than 300:
    H200 session 20 call B, one of 64 rows): for k = 300 the first cut then expects about 82
    entries of the row above it and the second about 560."""
    x = torch.randn(B, V, device="cuda", generator=gen)
    mid = torch.special.ndtri((torch.arange(1024, device="cuda", dtype=torch.float64) + 0.5) / 1024)
    order = torch.rand(B, 1024, device="cuda", generator=gen).argsort(dim=1)
    x[:, :1024] = (1.25 * mid.float())[order]
    x = x.to(tdt(dtype))
    kw = dict(backend="cupy")
    on, off = qrita.select(x, k, p, **kw), qrita.select(x, k, p, options={"second_cut": False}, **kw)
    same_selection(on, off, "regather")
    assert not host(off.hit).any(), "the first cut should hold fewer than k"
    if k == 300:
        assert host(on.hit).all(), "the second cut should hold k"
    want = raw_bits(qrita.top_k_top_p(x, k, p, options={"second_cut": False}, **kw))
    assert np.array_equal(raw_bits(qrita.top_k_top_p(x, k, p, **kw)), want)
    judge(x, k, p, rows=[0, 1, B - 1])


needs_clusters = pytest.mark.skipif(not _launch.M.has_clusters(0), reason="no thread-block clusters (sm_90+ CUDA)")


def _cluster_rows(gen, B, V, dtype):
    """Rows for the cluster combine: Gaussian (top-p misses), coarse ties, all equal, LLM-like,
    a row of -inf with one finite entry, and NaN / +inf sprinkled in."""
    x = torch.randn(B, V, device="cuda", generator=gen)
    x[1::5] = torch.round(x[1::5] * 2) / 2
    x[2::5] = 0.25
    x[3::5] = llm_like(gen, len(range(3, B, 5)), V)
    x[4::5] = -INF
    x[4::5, V // 2] = 1.0
    x[0, 7] = NAN
    x[0, V - 1] = INF if B > 5 else x[0, V - 1]
    return x.to(tdt(dtype))


@needs_clusters
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("B", "V"), [(2, 131072), (16, 151936), (5, 5003), (7, 262144), (1, 32000)])
@pytest.mark.parametrize(
    ("k", "p", "ties"),
    [(None, 0.9, "lowest_index"), (50, None, "all"), (100, 0.9, "lowest_index"), (None, 0.999, "all"),
     (4096, 0.5, "all"), (1, None, "lowest_index")],
)
def test_cluster_combine_gives_the_same_bits(dtype, B, V, k, p, ties, gen):
    """The split path's combine by clusters of blocks (the default on sm_90+) and by one block a
    row (options={"cluster": False}): the same selection, the same masked bits out of place and
    in place, with truncation on and off (every row searched over its whole length), on
    contiguous rows and on a column-strided view; the oracle judges a few rows."""
    x = _cluster_rows(gen, B, V, dtype)
    strided = torch.empty(B, 2 * V, device="cuda", dtype=x.dtype)[:, ::2]
    strided.copy_(x)
    for src in (x, strided):
        for extra in ({}, {"truncation": False}):
            on, off = {**extra, "cluster": True}, {**extra, "cluster": False}
            kw = dict(backend="cupy", ties=ties)
            same_selection(qrita.select(src, k, p, options=on, **kw), qrita.select(src, k, p, options=off, **kw),
                           f"cluster {extra}")
            want = raw_bits(qrita.top_k_top_p(src, k, p, options=off, **kw))
            assert np.array_equal(raw_bits(qrita.top_k_top_p(src, k, p, options=on, **kw)), want)
            y = src.clone()
            qrita.top_k_top_p(y, k, p, options=on, inplace=True, **kw)
            assert np.array_equal(raw_bits(y), want), "in place"
    judge(x, k, p, ties=ties, rows=[0, 1, 2, 3, 4, B - 1])
    judge(strided, k, p, ties=ties, options={"truncation": False}, rows=[0, B - 1], mask=False)


@needs_clusters
def test_cluster_combine_of_cupy_arrays_with_per_row_arguments(gen):
    """cupy inputs, per-row k and p with disabled rows, through the cluster combine."""
    B, V = 12, 131072
    x = cupy.asarray(_cluster_rows(gen, B, V, "float32"))
    k = cupy.asarray([0, 50, -1, V + 5, 100, 1, 0, 3000, 50, 7, 0, 20], dtype=cupy.int64)
    p = cupy.asarray([0.9, 1.0, 0.5, 0.0, -1.0, 0.95, 1.5, 0.99, 0.3, 0.9, 0.7, 1.0], dtype=cupy.float32)
    kw = dict(backend="cupy")
    same_selection(qrita.select(x, k, p, options={"cluster": True}, **kw),
                   qrita.select(x, k, p, options={"cluster": False}, **kw), "cupy")
    want = raw_bits(qrita.top_k_top_p(x, k, p, options={"cluster": False}, **kw))
    assert np.array_equal(raw_bits(qrita.top_k_top_p(x, k, p, options={"cluster": True}, **kw)), want)
    judge(x, k, p, options={"truncation": False})


@pytest.mark.parametrize("dtype", DTYPES)
def test_no_host_sync(dtype, gen):
    B, V = 32, 128256
    x = llm_like(gen, B, V).to(tdt(dtype))
    k = torch.full((B,), 50, device="cuda")
    p = torch.full((B,), 0.9, device="cuda")
    small = x[:2]
    for args in ((x, 50, 0.9), (x, k, p), (small, 50, 0.9), (x, None, 0.95)):
        qrita.top_k_top_p(*args, backend="cupy")  # warm-up: compile and load outside the check
        qrita.select(*args, backend="cupy")
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        for args in ((x, 50, 0.9), (x, k, p), (small, 50, 0.9), (x, None, 0.95)):
            qrita.select(*args, backend="cupy")
            qrita.top_k_top_p(*args, backend="cupy")
            qrita.top_k_top_p(args[0].clone(), *args[1:], backend="cupy", inplace=True)
    finally:
        torch.cuda.set_sync_debug_mode("default")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("B", [2, 64])
def test_cuda_graph_capture(dtype, B, gen):
    V = 128256
    x = llm_like(gen, B, V).to(tdt(dtype))
    k = torch.randint(1, 200, (B,), device="cuda", generator=gen)
    p = torch.rand(B, device="cuda", generator=gen) * 0.5 + 0.5
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up on a side stream, as torch's docs do
        for _ in range(2):
            qrita.top_k_top_p(x, k, p, backend="cupy")
            qrita.select(x, k, p, backend="cupy")
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = qrita.top_k_top_p(x, k, p, backend="cupy")
        sel = qrita.select(x, k, p, backend="cupy")
        masked_in_place = x.clone()
        qrita.top_k_top_p(masked_in_place, k, p, backend="cupy", inplace=True)
    for _ in range(2):
        x.copy_(llm_like(gen, B, V).to(tdt(dtype)))
        graph.replay()
        torch.cuda.synchronize()
        eager = qrita.select(x, k, p, backend="cupy")
        same_selection(sel, eager, "graph replay")
        want = raw_bits(qrita.top_k_top_p(x, k, p, backend="cupy"))
        assert np.array_equal(raw_bits(out), want)
        assert np.array_equal(raw_bits(masked_in_place), want)


def test_hits_on_gaussian_rows(gen):
    # (top-p on flat Gaussian rows keeps a large share of the row: more candidates than fit)
    x = torch.randn(8, 128256, device="cuda", generator=gen)
    for k, p in ((50, None), (1000, None), (50, 0.9)):
        sel = qrita.select(x, k, p, backend="cupy")
        assert host(sel.hit).all(), (k, p)
        assert not host(qrita.select(x, k, p, backend="cupy", options={"truncation": False}).hit).any()


@pytest.mark.parametrize(("B", "V"), [(1, 262144), (16, 262144), (1024, 262144), (4096, 151936)])
def test_scratch_stays_small(B, V):
    for k, p in ((50, None), (None, 0.9), (50, 0.9)):
        req, _ = qrita.api.make_request(torch.empty((B, V), device="cuda", dtype=torch.float16), k, p)
        assert _launch.scratch_bytes(req) <= _launch.SCRATCH_LIMIT
    x = torch.randn(B, V, device="cuda", dtype=torch.float16)
    qrita.top_k_top_p(x, 50, 0.9, backend="cupy")  # warm-up
    torch.cuda.synchronize()
    base = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    sel = qrita.select(x, 50, 0.9, backend="cupy")
    torch.cuda.synchronize()
    outputs = B * (2 + 4 + 4 + 1)
    assert torch.cuda.max_memory_allocated() - base <= _launch.SCRATCH_LIMIT + outputs + 4 * 2**20
    del sel
