"""The benchmark harness (``qrita bench``): a tiny quick run, its JSON schema, and its gate."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from qrita.bench import main  # noqa: E402
from qrita.bench import providers as bench_providers  # noqa: E402
from qrita.bench.gate import gate_rows  # noqa: E402
from qrita.bench.inputs import DISTS, make_logits  # noqa: E402
from qrita.bench.matrix import SCENARIOS, expand, row_params  # noqa: E402
from qrita.bench.report import ROW_FIELDS, SCHEMA  # noqa: E402
from qrita.reference import oracle_select  # noqa: E402

TINY = ["--quick", "--vocabs", "2048", "--batches", "3", "--progress", "off"]
PROVIDERS = "qrita-numpy,qrita-numpy-select,torch-sort,torch-topk"


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    status = main(TINY + ["--providers", PROVIDERS, "--out", str(out)])
    return status, out, json.loads((out / "results.json").read_text())


def test_quick_run_passes_and_writes_its_files(quick_run):
    status, out, _ = quick_run
    assert status == 0
    for name in ("results.json", "results.md", "latency.png"):
        assert (out / name).stat().st_size > 0


def test_json_schema(quick_run):
    _, _, doc = quick_run
    assert doc["schema"] == SCHEMA
    meta = doc["meta"]
    keys = ("command", "preset", "device", "env", "providers", "unavailable", "matrix", "copy_bandwidth", "elapsed_s")
    for key in keys:
        assert key in meta, key
    env = meta["env"]
    for key in ("date", "device", "versions", "git", "spec_fingerprint"):
        assert key in env, key
    from qrita.core import spec_fingerprint

    assert env["spec_fingerprint"] == spec_fingerprint()
    assert meta["device"] == "cpu" and meta["copy_bandwidth"] is None
    rows = doc["rows"]
    assert rows
    for row in rows:
        assert tuple(row) == ROW_FIELDS
        assert row["status"] in ("ok", "FAILED", "error", "skipped")
        assert row["scenario"] in SCENARIOS and row["dist"] in DISTS
    # every scenario and distribution ran, in fp32 and 16-bit
    assert {r["scenario"] for r in rows} == set(SCENARIOS)
    assert {r["dist"] for r in rows} == set(DISTS)
    assert {r["dtype"] for r in rows} == {"float32", "bfloat16", "float16"}


def test_qrita_numpy_gate_passes_and_is_timed(quick_run):
    _, _, doc = quick_run
    mine = [r for r in doc["rows"] if r["provider"].startswith("qrita-numpy")]
    assert {r["provider"] for r in mine} == {"qrita-numpy", "qrita-numpy-select"}
    for r in mine:
        assert r["status"] == "ok", r
        assert r["gate"] == "pass" and r["accepted_rate"] == 1.0 and r["match_rate"] == 1.0
        assert r["eager_us"] > 0 and r["graph_us"] is None and r["roofline_us"] is None
    masked = [r for r in mine if r["provider"] == "qrita-numpy"]
    assert all(r["inplace"] and r["output"] == "mask" for r in masked)


def test_peers_report_match_rates(quick_run):
    _, _, doc = quick_run
    peers = [r for r in doc["rows"] if r["family"] == "peer" and r["status"] == "ok"]
    assert {r["provider"] for r in peers} == {"torch-sort", "torch-topk"}
    for r in peers:
        assert r["gate"] == "info"
        assert 0.0 <= r["match_rate"] <= 1.0 and 0.0 <= r["match_all"] <= 1.0
    # torch.topk only serves the k-only scenarios
    assert {r["scenario"] for r in peers if r["provider"] == "torch-topk"} == {"topk50", "topk1000"}
    # distinct fp32 values: top-k by topk is exactly the oracle's set
    exact = [r for r in peers if r["provider"] == "torch-topk" and r["dtype"] == "float32" and r["dist"] == "gaussian"]
    assert exact and all(r["match_rate"] == 1.0 for r in exact)


class _BrokenQrita(bench_providers.Provider):
    """Keeps one token too many: the gate must catch it and the row must not be timed."""

    name = "qrita-broken"
    family = "qrita"
    ties = "lowest_index"

    def supports(self, case, scenario):
        return None if scenario.k_only else "k only"

    def prepare(self, ctx):
        k = int(ctx.k)
        return bench_providers.Prepared(
            op=lambda t: bench_providers.torch_sort_mask(t, k + 1, None),
            input=ctx.x,
            inplace=False,
            output="mask",
            bytes_moved=0,
        )


def test_red_gate_is_failed_and_never_timed(tmp_path, monkeypatch):
    monkeypatch.setattr(bench_providers, "_PEERS", [_BrokenQrita()])
    status = main(
        ["--quick", "--scenarios", "topk50", "--dists", "gaussian", "--dtypes", "fp32"]
        + ["--batches", "4", "--vocabs", "1024", "--providers", "qrita-broken"]
        + ["--out", str(tmp_path), "--progress", "off", "--no-plots"]
    )
    assert status == 1
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert rows and all(r["status"] == "FAILED" and r["gate"] == "FAILED" for r in rows)
    assert all(r["eager_us"] is None and r["graph_us"] is None for r in rows)
    assert "FAILED" in (tmp_path / "results.md").read_text()


def test_budget_skips_cleanly(tmp_path):
    status = main(TINY + ["--providers", "torch-sort", "--budget-s", "1e-9", "--out", str(tmp_path), "--no-plots"])
    assert status == 0
    rows = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert rows and all(r["status"] == "skipped" and "budget" in r["note"] for r in rows)


def test_bad_arguments_exit_2(capsys):
    assert main(["--dtypes", "fp8"]) == 2
    assert main(["--providers", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_inputs_are_deterministic_and_never_zero():
    for dist in DISTS:
        a = make_logits(dist, 3, 4096, seed=1)
        b = make_logits(dist, 3, 4096, seed=1)
        assert a.dtype == torch.float32 and a.shape == (3, 4096)
        assert torch.equal(a, b), dist
        assert not torch.equal(a, make_logits(dist, 3, 4096, seed=2)), dist
        assert int((a == 0).sum()) == 0, dist
        assert bool(torch.isfinite(a).any(dim=1).all()), dist
    grammar = make_logits("grammar", 4, 8192)
    assert float(torch.isinf(grammar).float().mean()) > 0.9


def test_mixed_rows_cover_every_kind():
    k, p = row_params(SCENARIOS["mixed"], 8, 1000)
    assert k.shape == p.shape == (8,)
    has_k, has_p = k < 1000, p < 1.0
    kinds = [(bool(a), bool(b)) for a, b in zip(has_k[:4], has_p[:4], strict=True)]
    assert kinds == [(True, False), (False, True), (True, True), (False, False)]
    rows = gate_rows(1024)
    assert len(rows) <= 8 and set(range(4)) <= set(rows.tolist()) and rows.max() == 1023


def test_torch_sort_matches_oracle_on_distinct_values():
    x = torch.randn(6, 3000, generator=torch.Generator().manual_seed(3), dtype=torch.float64).float()
    for k, p in ((50, None), (None, 0.9), (100, 0.9)):
        kept = bench_providers.torch_sort_mask(x, k, p) > -np.inf
        ref = oracle_select(x, k, p, "all")
        assert np.array_equal(kept.numpy(), ref.mask), (k, p)


def test_presets_expand_without_duplicates():
    from qrita.bench.matrix import PRESETS

    for name, preset in PRESETS.items():
        cases = expand(preset["groups"])
        assert len(cases) == len(set(cases)), name


def test_import_is_light():
    code = "import sys, qrita.bench; print(any(m in sys.modules for m in ('torch', 'matplotlib', 'cupy')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"
