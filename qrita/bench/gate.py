"""The correctness gate: every provider's output on the benchmark input, against the oracle.

Big shapes are judged on a subset of rows (:func:`gate_rows`), with the
sort-based oracle of :mod:`qrita.reference` on the CPU.  Per row we record:

* ``exact[ties]``: the kept set equals the oracle's under ``ties`` ("lowest_index"
  and "all"), compared as index sets;
* ``accepted``: the row passes :func:`qrita.reference.check_mask` (or
  ``check_selection``) under the provider's own tie convention, i.e. it is
  exact up to SPEC.md's top-p ambiguity window (eps = 1e-5 of probability mass).

A qrita provider passes only if every checked row is accepted; a peer is never
failed, its rates are reported.  For a sampler the "kept set" is the drawn
token: it must lie inside the oracle's set.
"""

from __future__ import annotations

import os
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from qrita.reference import OracleMismatch, check_mask, check_selection, mask_from_selection, oracle_select
from qrita.reference.oracle import as_numpy, as_values

TIES_MODES = ("lowest_index", "all")
_POOL: ThreadPoolExecutor | None = None


def _pool() -> ThreadPoolExecutor:
    # numpy's sorts release the GIL, so rows are judged in parallel
    global _POOL
    if _POOL is None:
        _POOL = ThreadPoolExecutor(max_workers=max(1, min(8, (os.cpu_count() or 2))), thread_name_prefix="oracle")
    return _POOL


def gate_rows(B: int, n: int = 8) -> np.ndarray:
    """Rows to judge: all of them for ``B <= n``; else rows 0-3 (one of each "mixed" kind) and evenly spaced ones."""
    if B <= n:
        return np.arange(B)
    spread = np.linspace(0, B - 1, max(n - 4, 1)).round().astype(np.int64)
    return np.unique(np.concatenate([np.arange(4), spread]))[:n]


def take_rows(a, rows: np.ndarray):
    """``a[rows]`` on the host, as numpy (torch, cupy or numpy input; bf16 widened exactly)."""
    if hasattr(a, "index_select"):  # torch
        import torch

        return as_numpy(a.index_select(0, torch.as_tensor(rows, device=a.device)))
    return as_numpy(a[rows] if not hasattr(a, "get") else a[rows].get())


def _row_param(value, r: int):
    if value is None or np.isscalar(value):
        return value
    v = np.asarray(value)[r]
    return int(v) if np.issubdtype(v.dtype, np.integer) else float(v)


class CaseOracle:
    """Oracle answers for the gate rows of one case, computed once (in background threads)."""

    def __init__(self, x, k, p, rows: np.ndarray):
        self.rows = rows
        self.values = as_values(take_rows(x, rows))  # float64 [n, V]
        self.k = [_row_param(k, int(r)) for r in rows]
        self.p = [_row_param(p, int(r)) for r in rows]
        self._futures: dict[tuple[int, str], Future] = {}

    def start(self) -> CaseOracle:
        for i in range(len(self.rows)):
            for ties in TIES_MODES:
                key = (i, ties)
                if key not in self._futures:
                    self._futures[key] = _pool().submit(
                        oracle_select, self.values[i : i + 1], self.k[i], self.p[i], ties
                    )
        return self

    def result(self, i: int, ties: str):
        self.start()
        return self._futures[(i, ties)].result()


def _host_kept(output: str, out, rows: np.ndarray, oracle: CaseOracle):
    """What the provider kept on the gate rows: bool ``[n, V]`` masks, or sampled ids ``[n]``."""
    if output == "mask":
        return take_rows(out, rows) > -np.inf  # NaN compares False
    if output == "probs":
        return take_rows(out, rows) > 0
    if output == "sample":
        return take_rows(out.reshape(-1, 1), rows).reshape(-1).astype(np.int64)
    if output == "select":
        thr = take_rows(out.threshold.reshape(-1, 1), rows).reshape(-1)
        nt = take_rows(out.num_ties.reshape(-1, 1), rows).reshape(-1)
        cnt = take_rows(out.count.reshape(-1, 1), rows).reshape(-1)
        return thr, nt, cnt
    raise ValueError(f"unknown output kind {output!r}")


def judge(output: str, out, oracle: CaseOracle, ties: str, strict: bool) -> dict:
    """Gate one provider's ``out`` on the oracle's rows.

    Returns ``{"gate": "pass"|"FAILED"|"info", "gate_rows", "match_rate",
    "match_lowest_index", "match_all", "accepted_rate", "gate_detail"}``;
    ``strict`` (qrita) fails on any rejected row.
    """
    rows = oracle.rows
    n = len(rows)
    kept = _host_kept(output, out, rows, oracle)
    exact = {t: 0 for t in TIES_MODES}
    accepted = 0
    detail = ""
    for i in range(n):
        ref = {t: oracle.result(i, t) for t in TIES_MODES}
        values = oracle.values[i : i + 1]
        try:
            if output == "sample":
                token = int(kept[i])
                for t in TIES_MODES:
                    exact[t] += bool(0 <= token < values.shape[1] and ref[t].mask[0, token])
                ok = 0 <= token < values.shape[1] and bool(ref[ties].mask[0, token])
                if not ok:
                    raise OracleMismatch([int(rows[i])], [f"row {int(rows[i])}: sampled token {token} is not kept"])
            elif output == "select":
                thr, nt, cnt = kept
                mask = mask_from_selection(values, thr[i : i + 1], nt[i : i + 1])[0]
                for t in TIES_MODES:
                    exact[t] += bool(np.array_equal(mask, ref[t].mask[0]))
                check_selection(
                    values,
                    oracle.k[i],
                    oracle.p[i],
                    ties,
                    thr[i : i + 1],
                    nt[i : i + 1],
                    cnt[i : i + 1],
                    expected=ref[ties],
                )
            else:
                mask = kept[i]
                for t in TIES_MODES:
                    exact[t] += bool(np.array_equal(mask, ref[t].mask[0]))
                check_mask(values, oracle.k[i], oracle.p[i], ties, mask[None], expected=ref[ties])
            accepted += 1
        except OracleMismatch as exc:
            if not detail:
                detail = f"row {int(rows[i])}: " + str(exc).splitlines()[-1].strip()[:300]
    rates = {t: exact[t] / n if n else None for t in TIES_MODES}
    gate = "info"
    if strict:
        gate = "pass" if accepted == n else "FAILED"
    return {
        "gate": gate,
        "gate_rows": n,
        "match_rate": rates[ties],
        "match_lowest_index": rates["lowest_index"],
        "match_all": rates["all"],
        "accepted_rate": accepted / n if n else None,
        "gate_detail": detail,
    }
