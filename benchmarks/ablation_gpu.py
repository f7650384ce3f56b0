"""GPU ablation of the Qrita method (issue 3): truncation on/off x pivots per round.

Usage, from the repository root:

    PYTHONPATH=. python3 benchmarks/ablation_gpu.py --out $OUT/ablation                        # ~2 min
    PYTHONPATH=. python3 benchmarks/ablation_gpu.py --out $OUT/ablation --full --budget-s 480   # whole matrix
    PYTHONPATH=. python3 benchmarks/ablation_gpu.py --out /tmp/ablation --cpu-smoke            # CPU check

Every cell is ``qrita.select`` (threshold/num_ties/count) or ``qrita.top_k_top_p(inplace=True)``
with one ``options`` variant.  Before it is timed, its first call (which also compiles) is
gated against the sort-based oracle (:mod:`qrita.bench.gate`); a cell whose gate fails gets
no time.  Times come from :mod:`qrita.bench.measure`: the median per call over CUDA-graph
replays, with the input restore of an in-place call captured in the graph and subtracted.
Writes ``ablation.json`` and ``ablation.md`` into ``--out`` after every case.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import qrita
from qrita.bench import measure
from qrita.bench.env import environment, git_commit, library_versions
from qrita.bench.gate import CaseOracle, gate_rows, judge
from qrita.bench.inputs import DISTS, cast, make_logits
from qrita.bench.matrix import SCENARIOS, row_params
from qrita.bench.providers import Prepared, logits_bytes
from qrita.core.spec import NUM_PIVOTS

# name -> (options, column label); "base" is the backend's default.
VARIANTS = {
    "base": ({}, "default"),
    "trunc_off": ({"truncation": False}, "trunc off"),
    "p1": ({"num_pivots": 1}, "P=1"),
    "p3": ({"num_pivots": 3}, "P=3"),
    "p7": ({"num_pivots": 7}, "P=7"),
    "p15": ({"num_pivots": 15}, "P=15"),
    "trunc_off_p1": ({"truncation": False, "num_pivots": 1}, "off, P=1"),
    "trunc_off_p3": ({"truncation": False, "num_pivots": 3}, "off, P=3"),
    "trunc_off_p15": ({"truncation": False, "num_pivots": 15}, "off, P=15"),
}
REQUESTS = ("topk50", "topp0.9", "k100p0.9")  # scenarios of qrita.bench.matrix
MODES = {"select": "qrita.select (threshold, num_ties, count)", "mask": "qrita.top_k_top_p(inplace=True)"}
TIES = "lowest_index"
CPU_TARGET_S = 0.005  # CPU smoke: a few perf_counter calls per cell
SHORT = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def _csv(text: str) -> list[str]:
    return [t.strip() for t in text.split(",") if t.strip()]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="folder for ablation.json and ablation.md")
    ap.add_argument("--backend", default=None, help="qrita backend (default triton; numpy under --cpu-smoke)")
    ap.add_argument("--requests", default=",".join(REQUESTS), help=f"from {', '.join(REQUESTS)}")
    ap.add_argument("--dists", default="zipf,gaussian,llm", help=f"from {', '.join(DISTS)}")
    ap.add_argument("--B", default=None, help="float32 batch sizes (default 1,1024; --full 1,64,1024)")
    ap.add_argument("--bf16-B", default=None, help="bfloat16 batch sizes (default none; --full 1024)")
    ap.add_argument("--V", type=int, default=131072)
    ap.add_argument("--variants", default=",".join(VARIANTS), help=f"from {', '.join(VARIANTS)}")
    ap.add_argument("--modes", default=",".join(MODES), help="select, mask or both")
    ap.add_argument("--full", action="store_true", help="B 1,64,1024 in float32 plus bfloat16 at B=1024")
    ap.add_argument("--budget-s", type=float, default=140.0, help="wall-clock cap; later cells are skipped")
    ap.add_argument("--gate-rows", type=int, default=8, help="rows per case checked against the oracle")
    ap.add_argument("--compile-workers", type=int, default=-1, help="parallel warm-up processes (-1 auto, 0 off)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cpu-smoke", action="store_true", help="tiny matrix (B=2, V=4096) on the CPU, numpy backend")
    args = ap.parse_args(argv)
    if args.cpu_smoke:
        args.B = args.B or "2"
        args.bf16_B = "2" if args.bf16_B is None else args.bf16_B
        args.V = 4096
        args.backend = args.backend or "numpy"
        args.compile_workers = 0
    args.B = [int(b) for b in _csv(args.B or ("1,64,1024" if args.full else "1,1024"))]
    args.bf16_B = [int(b) for b in _csv(args.bf16_B if args.bf16_B is not None else ("1024" if args.full else ""))]
    args.backend = args.backend or "triton"
    for name, chosen, allowed in (
        ("requests", args.requests, REQUESTS),
        ("dists", args.dists, DISTS),
        ("variants", args.variants, VARIANTS),
        ("modes", args.modes, MODES),
    ):
        bad = [c for c in _csv(chosen) if c not in allowed]
        if bad:
            ap.error(f"--{name}: unknown {', '.join(bad)} (choose from {', '.join(allowed)})")
        setattr(args, name, _csv(chosen))
    return args


def plan(args) -> list[tuple[str, int, str]]:
    """``(dtype, B, dist)`` inputs in measuring order: float32 first, then bfloat16."""
    blocks = [("float32", b) for b in args.B] + [("bfloat16", b) for b in args.bf16_B]
    return [(dtype, B, dist) for dtype, B in blocks for dist in args.dists]


# --- warm-up: compile every kernel variant in parallel processes (shared Triton disk cache) ---


def _warm_one(backend: str, device: str, dtype: str, V: int, k, p, options: dict, modes: list[str]) -> float:
    import torch

    started = time.perf_counter()
    x = torch.randn(1, V, device=device).to(getattr(torch, dtype))
    if "select" in modes:
        qrita.select(x, k, p, backend=backend, options=options)
    if "mask" in modes:
        qrita.top_k_top_p(x, k, p, backend=backend, options=options, inplace=True)
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - started


def warm_up(args, dtypes: list[str], device: str = "cuda") -> dict:
    """Call each distinct (dtype, request, truncation, pivots) once at B=1 in a pool of processes.

    The kernels compile side by side into Triton's on-disk cache, which the main process then reads;
    a failure here only means that the cell's first (gate) call compiles it instead.
    """
    tasks = {}
    for dtype in dtypes:
        for req in args.requests:
            k, p = row_params(SCENARIOS[req], 1, args.V)
            for v in args.variants:
                opts = VARIANTS[v][0]
                key = (dtype, req, opts.get("truncation", True), opts.get("num_pivots", NUM_PIVOTS))
                tasks.setdefault(key, (args.backend, device, dtype, args.V, k, p, opts, args.modes))
    workers = args.compile_workers
    if workers < 0:
        workers = min(len(tasks), max(1, (os.cpu_count() or 2) - 2), 12)
    info = {"tasks": len(tasks), "workers": workers, "s": 0.0, "failed": 0, "errors": []}
    if workers == 0 or not tasks:
        return info
    started = time.perf_counter()
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = [pool.submit(_warm_one, *task) for task in tasks.values()]
            for key, fut in zip(tasks, futures, strict=True):
                try:
                    fut.result()
                except Exception as exc:  # the main loop compiles it then (and its gate reports the error)
                    info["failed"] += 1
                    if len(info["errors"]) < 3:
                        info["errors"].append(f"{key}: {type(exc).__name__}: {str(exc)[:200]}")
    except Exception as exc:
        info["errors"].append(f"pool: {type(exc).__name__}: {exc}")
    info["s"] = round(time.perf_counter() - started, 2)
    return info


# --- one cell -------------------------------------------------------------------------------------


def _bits(t):
    import torch

    t = t.contiguous()
    return t.view(torch.uint8) if t.dtype.is_floating_point else t


def _snapshot(mode: str, out) -> list:
    parts = [out.threshold, out.num_ties, out.count] if mode == "select" else [out]
    return [_bits(a).clone() for a in parts]


def run_cell(args, x, k, p, oracle, variant: str, mode: str, base: dict, cuda: bool) -> dict:
    """Gate, then time, one (variant, mode) on input ``x``; ``base`` keeps the default variant's output."""
    import torch

    options = VARIANTS[variant][0]
    if mode == "select":

        def op(t):
            return qrita.select(t, k, p, backend=args.backend, ties=TIES, options=options)

    else:

        def op(t):
            return qrita.top_k_top_p(t, k, p, backend=args.backend, ties=TIES, options=options, inplace=True)

    masked = mode == "mask"
    prep = Prepared(op=op, input=x, inplace=masked, output=mode, bytes_moved=logits_bytes(x, 2 if masked else 1))
    row: dict = {"bytes": prep.bytes_moved}
    work = x.clone() if masked else x
    if cuda:
        torch.cuda.synchronize()
    started = time.perf_counter()
    out = op(work)
    if cuda:
        torch.cuda.synchronize()
    row["first_call_s"] = round(time.perf_counter() - started, 4)  # includes the compile if not warm
    row.update(judge(mode, out, oracle, TIES, strict=True))
    if mode == "select" and out.hit is not None:
        row["hit_rate"] = float(out.hit.float().mean())
    snap = _snapshot(mode, out)
    if variant == "base":
        base[mode] = snap
    if mode in base:  # info only: a legal top-p answer may differ inside the ambiguity window
        row["same_as_base"] = all(torch.equal(a, b) for a, b in zip(snap, base[mode], strict=True))
    del out, work, snap
    if row["gate"] != "pass":
        row["status"] = "FAILED"
        return row
    timing = measure.time_cuda(prep) if cuda else measure.time_cpu(prep, CPU_TARGET_S)
    row.update(timing)
    row["us"] = timing["graph_us"] if timing["graph_us"] is not None else timing["eager_us"]
    row["timing"] = "graph" if timing["graph_us"] is not None else ("eager" if cuda else "cpu")
    row["status"] = "ok"
    return row


# --- report ----------------------------------------------------------------------------------------


def _fmt(us: float | None) -> str:
    if us is None:
        return "–"
    return f"{us:,.0f}" if us >= 100 else f"{us:.1f}"


def _cell(row: dict | None) -> str:
    if row is None:
        return ""
    if row["status"] != "ok":
        return {"FAILED": "FAILED", "skipped": "skip"}.get(row["status"], "err")
    return _fmt(row["us"]) + ("*" if row["timing"] == "eager" else "")


def _speedup(slow: dict | None, fast: dict | None) -> float | None:
    if slow and fast and slow["status"] == fast["status"] == "ok" and fast["us"] > 0:
        return slow["us"] / fast["us"]
    return None


def markdown(meta: dict, rows: list[dict]) -> str:
    bw = meta.get("copy_bandwidth")
    lines = [
        "# Ablation: truncation on/off x pivots per round",
        "",
        f"`{meta['command']}`  ",
        f"{meta['device_name']}, torch {meta['torch']}, triton {meta['triton']}, commit {meta['git_commit']}, "
        f"{meta['date']}; backend `{meta['backend']}`, V={meta['V']}, ties={TIES}, {meta['elapsed_s']:.0f} s.",
        "",
        "Cells: median µs per call"
        + (
            " over CUDA-graph replays (an in-place call's input restore is captured with it and subtracted); "
            if meta["device"] == "cuda"
            else " (time.perf_counter, CPU); "
        )
        + "`*` eager time (the graph could not be used), `FAILED` the gate failed (no time is reported), "
        "`skip` the time budget was spent, `err` an error (see ablation.json).  Before timing, every cell's "
        f"call was checked against the sort-based oracle on up to {meta['gate_rows']} rows per case.  "
        "`default` is `options={}` (Triton: 3 pivots, truncation on; numpy: adaptive pivots); `P` = pivots per "
        "round; `off` = truncation off (every row searches its whole row).  Speed-ups: `trunc on vs off` = "
        "trunc off / default, `3 vs 1 pivots` = P=1 / P=3 (above 1: the first one is faster).",
    ]
    if bw:
        lines += [
            "",
            f"Device copy bandwidth {bw['bytes_per_s'] / 1e12:.2f} TB/s (read + write); the roofline is one read "
            "of B·V·itemsize for select, a read and a write for in-place masking.",
        ]
    variants = [v for v in VARIANTS if any(r["variant"] == v for r in rows)]
    by_key = {(r["mode"], r["request"], r["dist"], r["dtype"], r["B"], r["variant"]): r for r in rows}
    order = {
        "request": {n: i for i, n in enumerate(REQUESTS)},
        "dist": {n: i for i, n in enumerate(DISTS)},
        "dtype": {"float32": 0, "bfloat16": 1, "float16": 2},
    }
    cases = sorted(
        {(r["request"], r["dist"], r["dtype"], r["B"]) for r in rows},
        key=lambda c: (order["request"][c[0]], order["dist"][c[1]], order["dtype"][c[2]], c[3]),
    )
    for mode in [m for m in MODES if any(r["mode"] == m for r in rows)]:
        head = ["request", "logits", "B", "dtype"] + [VARIANTS[v][1] for v in variants]
        head += ["trunc on vs off", "3 vs 1 pivots", "roofline µs", "default / roofline"]
        if mode == "select":
            head.append("default hit %")
        lines += ["", f"## {MODES[mode]}", "", "| " + " | ".join(head) + " |"]
        lines.append("|" + " --- |" * 4 + " ---: |" * (len(head) - 4))
        gains: dict[str, list[float]] = {"trunc on vs off": [], "3 vs 1 pivots": []}
        for req, dist, dtype, B in cases:
            cell = {v: by_key.get((mode, req, dist, dtype, B, v)) for v in variants}
            trunc = _speedup(cell.get("trunc_off"), cell.get("base"))
            pivots = _speedup(cell.get("p1"), cell.get("p3"))
            for name, value in (("trunc on vs off", trunc), ("3 vs 1 pivots", pivots)):
                if value:
                    gains[name].append(value)
            base = cell.get("base") or {}
            roof = base.get("roofline_us")
            ratio = base["us"] / roof if roof and base.get("status") == "ok" else None
            parts = [SCENARIOS[req].description, dist, str(B), SHORT.get(dtype, dtype)]
            parts += [_cell(cell[v]) for v in variants]
            parts += [f"{s:.2f}×" if s else "–" for s in (trunc, pivots)]
            parts += [_fmt(roof), f"{ratio:.1f}×" if ratio else "–"]
            if mode == "select":
                hit = base.get("hit_rate")
                parts.append(f"{100 * hit:.0f}" if hit is not None else "–")
            lines.append("| " + " | ".join(parts) + " |")
        geo = [
            f"`{name}` {math.exp(sum(map(math.log, vals)) / len(vals)):.2f}× ({len(vals)} rows)"
            for name, vals in gains.items()
            if vals
        ]
        if geo:
            lines += ["", "Geometric-mean speed-ups: " + ", ".join(geo) + "."]
    counts = {s: sum(r["status"] == s for r in rows) for s in ("ok", "FAILED", "skipped", "error")}
    lines += ["", "Cells: " + ", ".join(f"{n} {s}" for s, n in counts.items()) + "."]
    return "\n".join(lines) + "\n"


def write(out: Path, meta: dict, rows: list[dict], t0: float) -> None:
    out.mkdir(parents=True, exist_ok=True)
    meta["elapsed_s"] = round(time.perf_counter() - t0, 1)
    (out / "ablation.json").write_text(json.dumps({"meta": meta, "rows": rows}, indent=1, default=str) + "\n")
    (out / "ablation.md").write_text(markdown(meta, rows))


# --- main -------------------------------------------------------------------------------------------


def main(argv=None) -> int:
    t0 = time.perf_counter()
    args = parse_args(sys.argv[1:] if argv is None else argv)
    import torch

    cuda = not args.cpu_smoke
    if cuda and not torch.cuda.is_available():
        print("no CUDA device visible to torch (use --cpu-smoke for a CPU check)", file=sys.stderr)
        return 2
    device = "cuda" if cuda else "cpu"
    inputs = plan(args)
    versions = library_versions()
    meta = {
        "command": "python3 benchmarks/ablation_gpu.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "device": device,
        "device_name": torch.cuda.get_device_name(0) if cuda else "CPU",
        "torch": versions["torch"],
        "triton": versions["triton"],
        "git_commit": os.environ.get("QRITA_GIT_COMMIT") or git_commit()["commit"],
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "backend": args.backend,
        "V": args.V,
        "ties": TIES,
        "gate_rows": args.gate_rows,
        "budget_s": args.budget_s,
        "matrix": {k: getattr(args, k) for k in ("requests", "dists", "B", "bf16_B", "variants", "modes")},
        "variants": {v: VARIANTS[v][0] for v in args.variants},
        "env": environment(device),
    }
    if cuda:
        meta["warmup"] = warm_up(args, sorted({dtype for dtype, _, _ in inputs}))
        print(f"warm-up: {meta['warmup']}", flush=True)
        meta["copy_bandwidth"] = measure.copy_bandwidth()
    rows: list[dict] = []
    fatal = None
    for dtype, B, dist in inputs:
        x, why = None, None
        try:
            x = cast(make_logits(dist, B, args.V, device=device, seed=args.seed), dtype)
            params = {req: row_params(SCENARIOS[req], B, args.V) for req in args.requests}
            oracles = {r: CaseOracle(x, *params[r], gate_rows(B, args.gate_rows)).start() for r in args.requests}
        except Exception as exc:  # e.g. out of memory: this input only
            why = f"making the input failed: {type(exc).__name__}: {str(exc).strip()[:200]}"
        for req in args.requests:
            base: dict = {}
            for variant in args.variants:
                for mode in args.modes:
                    row = {"request": req, "dist": dist, "dtype": dtype, "B": B, "V": args.V, "variant": variant}
                    row.update(options=VARIANTS[variant][0], mode=mode, status="skipped")
                    rows.append(row)
                    if fatal or why or time.perf_counter() - t0 > args.budget_s:
                        row["status"] = "error" if why and not fatal else "skipped"
                        row["note"] = fatal or why or f"time budget ({args.budget_s:.0f} s) spent"
                        continue
                    started = time.perf_counter()
                    try:
                        row.update(run_cell(args, x, *params[req], oracles[req], variant, mode, base, cuda))
                    except Exception as exc:  # one cell must not take the run down
                        row.update(status="error", note=f"{type(exc).__name__}: {str(exc).strip()[:300]}")
                        broken = measure.cuda_healthy() if cuda else None
                        if broken:
                            fatal = f"CUDA context lost: {broken}"
                    row["cell_s"] = round(time.perf_counter() - started, 3)
                    if row.get("us") is not None and meta.get("copy_bandwidth"):
                        row["roofline_us"] = row["bytes"] / meta["copy_bandwidth"]["bytes_per_s"] * 1e6
                        row["ratio"] = row["us"] / row["roofline_us"]
                    print(
                        f"{req:9s} {dist:9s} {SHORT[dtype]} B={B:<5d} {variant:14s} {mode:6s} "
                        f"{row['status']:7s} {_fmt(row.get('us')):>9s} us",
                        flush=True,
                    )
        del x
        if cuda:
            torch.cuda.empty_cache()
        write(args.out, meta, rows, t0)
    write(args.out, meta, rows, t0)
    counts = {s: sum(r["status"] == s for r in rows) for s in ("ok", "FAILED", "skipped", "error")}
    print(f"done in {meta['elapsed_s']:.0f} s: {counts}; wrote {args.out / 'ablation.json'} and ablation.md")
    return 1 if counts["FAILED"] or counts["error"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
