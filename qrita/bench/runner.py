"""The benchmark loop and its command line (``qrita bench``, ``python -m qrita.bench``)."""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from . import matrix
from .matrix import PRESETS, SCENARIOS, Case

CHECKPOINT_S = 30.0
SLOW_CALL_S = 3.0  # a provider whose first call takes longer is timed by that call alone
HEARTBEAT_S = 30.0


@dataclass
class Config:
    preset: str | None = None
    device: str = "auto"  # auto | cpu | cuda
    providers: str | None = None
    overrides: dict = field(default_factory=dict)  # scenarios/dists/dtypes/batches/vocabs
    out: Path = Path("bench_results")
    budget_s: float | None = None  # None: the preset's; 0: no budget
    seed: int = 0
    ties: str = "lowest_index"
    gate_rows: int = 8
    plots: bool = True
    progress: str = "auto"  # auto | on | off
    graphs: bool = True
    command: str = ""


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="qrita bench",
        description="Exact top-k/top-p selection: qrita's backends and their peers, gated against the "
        "oracle, timed against the copy-bandwidth roofline.",
    )
    preset = ap.add_mutually_exclusive_group()
    preset.add_argument("--quick", dest="preset", action="store_const", const="quick", help="CPU smoke test (< 1 min)")
    preset.add_argument(
        "--full", dest="preset", action="store_const", const="full", help="the H200 matrix (one 10-minute call)"
    )
    preset.add_argument("--preset", choices=sorted(PRESETS), help="a named preset")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default=None, help="default: the preset's, else auto")
    ap.add_argument(
        "--providers", help="comma-separated names or patterns (qrita-*, torch-sort), or all / qrita / peers"
    )
    ap.add_argument("--scenarios", help=f"from {', '.join(SCENARIOS)}")
    ap.add_argument("--dists", help=f"from {', '.join(matrix.ALL_DISTS)}")
    ap.add_argument("--dtypes", help="from fp32, bf16, fp16 (or float32, bfloat16, float16)")
    ap.add_argument("--batches", help="batch sizes, e.g. 1,64,1024")
    ap.add_argument("--vocabs", help="vocab sizes, e.g. 32000,128256")
    ap.add_argument("--out", default="bench_results", help="output folder (default: ./bench_results)")
    ap.add_argument(
        "--budget-s", type=float, default=None, help="stop starting new cases after this many seconds (0: none)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ties", choices=("lowest_index", "all"), default="lowest_index", help="qrita's tie rule")
    ap.add_argument("--gate-rows", type=int, default=8, help="rows per case compared with the oracle")
    ap.add_argument("--no-plots", action="store_true")
    ap.add_argument("--no-graphs", action="store_true", help="CUDA: eager timing only")
    ap.add_argument("--progress", choices=("auto", "on", "off"), default="auto")
    ap.add_argument("--list", action="store_true", help="list the providers and whether they can run here, then exit")
    return ap


def parse_config(argv: list[str] | None) -> tuple[Config, argparse.Namespace]:
    args = build_parser().parse_args(argv)
    overrides = {
        "scenarios": matrix.parse_list(args.scenarios, "scenarios", tuple(SCENARIOS)),
        "dists": matrix.parse_list(args.dists, "dists", matrix.ALL_DISTS),
        "dtypes": matrix.parse_list(args.dtypes, "dtypes", matrix.DTYPES),
        "batches": matrix.parse_list(args.batches, "batches", cast=int),
        "vocabs": matrix.parse_list(args.vocabs, "vocabs", cast=int),
    }
    for axis in ("batches", "vocabs"):
        if overrides[axis] and min(overrides[axis]) < 1:
            raise ValueError(f"--{axis} must be positive, got {overrides[axis]}")
    cfg = Config(
        preset=args.preset,
        device=args.device or (PRESETS[args.preset]["device"] if args.preset else "auto"),
        providers=args.providers,
        overrides={k: v for k, v in overrides.items() if v},
        out=Path(args.out),
        budget_s=args.budget_s,
        seed=args.seed,
        ties=args.ties,
        gate_rows=args.gate_rows,
        plots=not args.no_plots,
        progress=args.progress,
        graphs=not args.no_graphs,
        command="qrita bench " + " ".join(shlex.quote(a) for a in (argv if argv is not None else sys.argv[1:])),
    )
    return cfg, args


def resolve_device(wanted: str) -> str:
    try:
        import torch

        has_cuda = torch.cuda.is_available()
    except ImportError:
        has_cuda = False
    if wanted == "auto":
        return "cuda" if has_cuda else "cpu"
    if wanted == "cuda" and not has_cuda:
        raise RuntimeError("--device cuda: no CUDA device is visible to torch here")
    return wanted


class _Inputs:
    """The current case's logits; regenerated (deterministically) when the case's input changes."""

    def __init__(self, device: str, seed: int):
        self.device, self.seed = device, seed
        self.key = None
        self.base = None
        self.cast: dict[str, object] = {}

    def get(self, case: Case):
        from .inputs import cast, make_logits

        if case.input_key != self.key:
            self.base, self.cast = None, {}
            self.base = make_logits(case.dist, case.B, case.V, device=self.device, seed=self.seed)
            self.key = case.input_key
        if case.dtype not in self.cast:
            self.cast = {case.dtype: cast(self.base, case.dtype)}
        return self.cast[case.dtype]


class _Progress:
    def __init__(self, total: int, mode: str):
        self.total, self.done, self.t0 = total, 0, time.perf_counter()
        self.last_beat = self.t0
        self.bar = None
        enabled = mode == "on" or (mode == "auto" and sys.stderr.isatty())
        if enabled:
            try:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="item", dynamic_ncols=True, file=sys.stderr)
            except ImportError:
                pass
        self.quiet = mode == "off"

    def step(self, label: str, n: int = 1):
        self.done += n
        if self.bar is not None:
            self.bar.set_description_str(label[:60], refresh=False)
            self.bar.update(n)
        elif not self.quiet and time.perf_counter() - self.last_beat >= HEARTBEAT_S:
            self.last_beat = time.perf_counter()
            print(
                f"[qrita bench] {self.done}/{self.total} items, {self.last_beat - self.t0:.0f} s, at {label}",
                file=sys.stderr,
                flush=True,
            )

    def close(self):
        if self.bar is not None:
            self.bar.close()


class _CudaLost(RuntimeError):
    pass


class Runner:
    def __init__(self, cfg: Config):
        self.cfg = cfg
        self.t0 = time.perf_counter()
        preset = cfg.preset or "quick"
        self.groups = PRESETS[preset]["groups"]
        budget = cfg.budget_s if cfg.budget_s is not None else (PRESETS[cfg.preset]["budget_s"] if cfg.preset else 0)
        self.budget_s = budget or None
        self.cpu_target_s = PRESETS[preset].get("cpu_target_s", 0.15)
        self.device = resolve_device(cfg.device)
        self.rows: list[dict] = []
        self.copy_bw = None
        self.last_checkpoint = self.t0
        self.fatal = None

    # --- time ---
    def elapsed(self) -> float:
        return time.perf_counter() - self.t0

    def over_budget(self) -> bool:
        return self.budget_s is not None and self.elapsed() >= self.budget_s

    # --- one item ---
    def _row(self, case: Case, provider, **extra) -> dict:
        from .report import new_row

        return new_row(
            provider=provider.name,
            family=provider.family,
            scenario=case.scenario,
            dist=case.dist,
            dtype=case.dtype,
            B=case.B,
            V=case.V,
            **extra,
        )

    def run_item(self, case: Case, provider, x, oracle) -> dict:
        row = self._row(case, provider, status="error")
        started = time.perf_counter()
        try:
            return self._run_item(row, case, provider, x, oracle)
        finally:
            row["item_s"] = round(time.perf_counter() - started, 4)

    def _run_item(self, row: dict, case: Case, provider, x, oracle) -> dict:
        from .gate import judge
        from .measure import cuda_healthy, cuda_sync, time_cpu, time_cuda
        from .providers import Context

        scenario = SCENARIOS[case.scenario]
        k, p = matrix.row_params(scenario, case.B, case.V)
        try:
            ctx = Context(case=case, scenario=scenario, x=x, k=k, p=p, device=self.device, ties=self.cfg.ties)
            prep = provider.prepare(ctx)
            row.update(inplace=prep.inplace, output=prep.output, bytes_moved=prep.bytes_moved, note=prep.note)
            # the gate: one call on a fresh copy (also the first warm-up / JIT)
            work = prep.input.clone() if prep.inplace else prep.input
            if self.device == "cuda":
                cuda_sync()
            started = time.perf_counter()
            out = prep.op(prep.wrap(work))
            if self.device == "cuda":
                cuda_sync()
            gate_call_s = time.perf_counter() - started
            ties = self.cfg.ties if provider.family == "qrita" else provider.ties
            row.update(judge(prep.output, out, oracle, ties, strict=provider.family == "qrita"))
            del out, work
            if row["gate"] == "FAILED":
                row["status"] = "FAILED"
                return row
            second_s = self._second_call_s(prep) if gate_call_s > SLOW_CALL_S else 0.0  # the first may be JIT
            if second_s > SLOW_CALL_S:  # keep the budget for the rest: that one host-timed call it is
                timing = {"eager_us": second_s * 1e6, "eager_reps": 1, "note": "slow: timed by one call"}
            elif self.device == "cuda":
                timing = time_cuda(prep, self.cfg.graphs)
            else:
                timing = time_cpu(prep, self.cpu_target_s)
            note = " ".join(filter(None, [row["note"], timing.pop("note", "")]))
            row.update(timing, note=note)
            if self.copy_bw:
                row["roofline_us"] = prep.bytes_moved / self.copy_bw["bytes_per_s"] * 1e6
                us = row["graph_us"] if row["graph_us"] is not None else row["eager_us"]
                row["ratio"] = us / row["roofline_us"] if row["roofline_us"] else None
            row["status"] = "ok"
        except Exception as exc:  # one provider must never take the run down
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            row["status"] = "error"
            row["note"] = f"{type(exc).__name__}: {first}"[:400]
            if self.device == "cuda":
                broken = cuda_healthy()
                if broken:
                    raise _CudaLost(f"CUDA context lost after {provider.name} on {case.label()}: {broken}") from exc
        return row

    def _second_call_s(self, prep) -> float:
        from .measure import cuda_sync

        work = prep.input.clone() if prep.inplace else prep.input
        if self.device == "cuda":
            cuda_sync()
        started = time.perf_counter()
        prep.op(prep.wrap(work))
        if self.device == "cuda":
            cuda_sync()
        return time.perf_counter() - started

    # --- the loop ---
    def plan(self, providers) -> list[tuple[Case, list]]:
        cases = matrix.expand(self.groups, self.cfg.overrides)
        out = []
        for case in cases:
            scenario = SCENARIOS[case.scenario]
            mine = []
            for prov in providers:
                try:
                    reason = prov.supports(case, scenario)
                except Exception as exc:
                    reason = str(exc)
                if reason is None:
                    mine.append(prov)
            if mine:
                out.append((case, mine))
        return out

    def checkpoint(self, meta: dict, force: bool = False):
        from .report import markdown, write_json

        if not force and time.perf_counter() - self.last_checkpoint < CHECKPOINT_S:
            return
        self.last_checkpoint = time.perf_counter()
        meta["elapsed_s"] = self.elapsed()
        self.cfg.out.mkdir(parents=True, exist_ok=True)
        write_json(self.cfg.out / "results.json", meta, self.rows)
        (self.cfg.out / "results.md").write_text(markdown(meta, self.rows))

    def run(self) -> tuple[dict, list[dict]]:
        from .env import environment
        from .gate import CaseOracle, gate_rows
        from .providers import FLASHINFER_WARMUP, FlashInferMask, FlashInferRenorm, FlashInferSample, choose

        providers, unavailable = choose(self.cfg.providers, self.device)
        flashinfer = (FlashInferMask, FlashInferRenorm, FlashInferSample)
        plan = self.plan(providers)
        fi_runs = {(p.name, case.dtype) for case, provs in plan for p in provs if isinstance(p, flashinfer)}
        if self.device == "cuda" and fi_runs:
            # JIT build in a child process, while we measure the rest; only the modules this run uses
            FLASHINFER_WARMUP.start({n for n, _ in fi_runs}, {d for _, d in fi_runs})
        meta = {
            "command": self.cfg.command,
            "preset": self.cfg.preset,
            "device": self.device,
            "ties": self.cfg.ties,
            "seed": self.cfg.seed,
            "budget_s": self.budget_s,
            "gate_rows": self.cfg.gate_rows,
            "env": environment(self.device),
            "providers": {
                p.name: {"family": p.family, "description": p.description, "ties": p.ties} for p in providers
            },
            "unavailable": unavailable,
            "matrix": {"groups": self.groups, "overrides": self.cfg.overrides, "cases": len(plan)},
            "copy_bandwidth": None,
        }
        if self.device == "cuda":
            from .measure import copy_bandwidth

            try:
                self.copy_bw = meta["copy_bandwidth"] = copy_bandwidth()
            except Exception as exc:  # no roofline then, but still the times
                meta["copy_bandwidth_error"] = f"{type(exc).__name__}: {exc}"

        total = sum(len(provs) for _, provs in plan)
        progress = _Progress(total, self.cfg.progress)
        inputs = _Inputs(self.device, self.cfg.seed)
        oracles: dict[Case, CaseOracle] = {}
        deferred: list[tuple[Case, object]] = []

        def oracle_for(case: Case, x):
            if case not in oracles:
                k, p = matrix.row_params(SCENARIOS[case.scenario], case.B, case.V)
                oracles[case] = CaseOracle(x, k, p, gate_rows(case.B, self.cfg.gate_rows)).start()
            return oracles[case]

        def skip(case, prov, why):
            self.rows.append(self._row(case, prov, status="skipped", note=why))
            progress.step(case.label())

        def run_case(i: int, case: Case, provs: list, allow_defer: bool):
            if self.fatal or self.over_budget():
                for prov in provs:
                    skip(case, prov, self.fatal or f"time budget ({self.budget_s:.0f} s) spent")
                return
            try:
                x = inputs.get(case)
                oracle = oracle_for(case, x)
                if i + 1 < len(plan):  # judge the next case on the same input in the background
                    nxt = plan[i + 1][0]
                    if nxt.input_key == case.input_key and nxt.dtype == case.dtype:
                        oracle_for(nxt, x)
            except Exception as exc:  # e.g. out of memory making the input: this case only
                inputs.key = None
                why = f"preparing the case failed: {type(exc).__name__}: {str(exc).strip()[:200]}"
                for prov in provs:
                    self.rows.append(self._row(case, prov, status="error", note=why))
                    progress.step(case.label())
                if self.device == "cuda":
                    from .measure import cuda_healthy

                    broken = cuda_healthy()
                    if broken:
                        self.fatal = f"CUDA context lost preparing {case.label()}: {broken}"
                return
            for prov in provs:
                if self.fatal or self.over_budget():
                    skip(case, prov, self.fatal or f"time budget ({self.budget_s:.0f} s) spent")
                    continue
                if not prov.ready():
                    if allow_defer:
                        deferred.append((case, prov))
                        continue
                    skip(case, prov, f"{prov.name} was still building (JIT) when the budget ran out")
                    continue
                why = prov.not_ready_reason()
                if why:
                    skip(case, prov, why)
                    continue
                try:
                    self.rows.append(self.run_item(case, prov, x, oracle))
                except _CudaLost as exc:
                    self.fatal = str(exc)
                    self.rows.append(self._row(case, prov, status="error", note=self.fatal))
                progress.step(f"{case.label()} {prov.name}")
            oracles.pop(case, None)
            self.checkpoint(meta)

        def drain():
            """Run the deferred (case, provider) pairs whose providers are ready now."""
            ready = [(c, p) for c, p in deferred if p.ready()]
            if not ready:
                return
            for item in ready:
                deferred.remove(item)
            by_case: dict[Case, list] = {}
            for c, p in ready:
                by_case.setdefault(c, []).append(p)
            for c, ps in by_case.items():
                run_case(len(plan), c, ps, allow_defer=False)

        try:
            for i, (case, provs) in enumerate(plan):
                run_case(i, case, provs, allow_defer=True)
                drain()
            while deferred and not self.over_budget() and not self.fatal:
                if all(p.ready() for _, p in deferred):
                    drain()
                else:
                    time.sleep(1.0)
                    drain()
            for case, prov in deferred:
                skip(case, prov, self.fatal or f"{prov.name} was still building (JIT) when the budget ran out")
            deferred.clear()
        except KeyboardInterrupt:
            meta["interrupted"] = True
        except Exception as exc:  # a harness bug: keep what was measured
            import traceback

            traceback.print_exc()
            self.fatal = f"harness error: {type(exc).__name__}: {exc}"
        finally:
            progress.close()
            FLASHINFER_WARMUP.stop()
            if FLASHINFER_WARMUP.proc is not None:
                meta["flashinfer_warmup"] = FLASHINFER_WARMUP.summary()
            meta["fatal"] = self.fatal
            meta["elapsed_s"] = self.elapsed()
        return meta, self.rows


def _summary(meta: dict, rows: list[dict], written: list[str], out: Path) -> str:
    from collections import Counter

    counts = Counter(r["status"] for r in rows)
    lines = [
        f"qrita bench: {len(rows)} rows ({', '.join(f'{v} {k}' for k, v in sorted(counts.items()))}) "
        f"in {meta['elapsed_s']:.0f} s on {meta['env']['device'].get('name')}",
    ]
    if meta.get("copy_bandwidth"):
        lines.append(f"copy bandwidth {meta['copy_bandwidth']['bytes_per_s'] / 1e12:.2f} TB/s")
    by_provider: dict[str, Counter] = {}
    for r in rows:
        by_provider.setdefault(r["provider"], Counter())[r["status"]] += 1
    for name, c in by_provider.items():
        lines.append(f"  {name:28s} " + ", ".join(f"{v} {k}" for k, v in sorted(c.items())))
    for name, reason in meta.get("unavailable", {}).items():
        lines.append(f"  {name:28s} not run: {reason[:120]}")
    if meta.get("fatal"):
        lines.append(f"FATAL: {meta['fatal']}")
    lines.append(f"wrote {', '.join(written)} to {out}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``qrita bench``.  Exit 0 when every qrita row that ran passed its gate, 1 otherwise, 2 on bad usage."""
    try:
        cfg, args = parse_config(argv)
    except ValueError as exc:
        print(f"qrita bench: {exc}", file=sys.stderr)
        return 2
    if args.list:
        from .providers import all_providers

        try:
            device = resolve_device(cfg.device)
        except RuntimeError:
            device = "cpu"
        for prov in all_providers():
            reason = prov.unavailable_reason(device)
            print(f"{prov.name:28s} {'ok' if reason is None else 'unavailable: ' + reason}  ({prov.description})")
        return 0
    try:
        runner = Runner(cfg)
        meta, rows = runner.run()
    except (RuntimeError, ValueError) as exc:
        print(f"qrita bench: {exc}", file=sys.stderr)
        return 2
    from .report import markdown, plots, write_json

    cfg.out.mkdir(parents=True, exist_ok=True)
    write_json(cfg.out / "results.json", meta, rows)
    (cfg.out / "results.md").write_text(markdown(meta, rows))
    written = ["results.json", "results.md"]
    if cfg.plots:
        try:
            written += plots(cfg.out, rows, meta)
        except Exception as exc:  # plots are a convenience; the data is already written
            print(f"qrita bench: plots failed: {type(exc).__name__}: {exc}", file=sys.stderr)
    print(_summary(meta, rows, written, cfg.out))
    bad = [r for r in rows if r["family"] == "qrita" and r["status"] in ("FAILED", "error")]
    return 1 if bad or meta.get("fatal") else 0
