"""Writing a run down: ``results.json``, ``results.md`` and the PNG plots."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from pathlib import Path

from .inputs import DISTS
from .matrix import DTYPES, SCENARIOS

SCHEMA = "qrita-bench/1"

# The fields of every row of results.json, in order (None where not applicable).
ROW_FIELDS = (
    "provider",
    "family",
    "scenario",
    "dist",
    "dtype",
    "B",
    "V",
    "status",  # "ok" | "FAILED" (qrita gate red, not timed) | "error" | "skipped"
    "gate",  # "pass" | "FAILED" | "info" (peers) | None
    "gate_rows",
    "match_rate",  # fraction of gate rows whose kept set equals the oracle's under the provider's ties
    "match_lowest_index",
    "match_all",
    "accepted_rate",  # fraction of gate rows within SPEC.md's top-p window (qrita must be 1.0)
    "graph_us",
    "eager_us",
    "roofline_us",
    "ratio",  # graph_us (eager_us when there is no graph time) / roofline_us
    "bytes_moved",
    "peak_mem_bytes",
    "inplace",
    "output",
    "eager_reps",
    "n_inner",
    "replays",
    "item_s",  # wall time spent on this row (gate + timing), for budgeting presets
    "note",
    "gate_detail",
)


def new_row(**values) -> dict:
    row = dict.fromkeys(ROW_FIELDS)
    row.update(values)
    return row


def _atomic_write(path: Path, text: str):
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def write_json(path: Path, meta: dict, rows: list[dict]):
    _atomic_write(path, json.dumps({"schema": SCHEMA, "meta": meta, "rows": rows}, indent=1, default=str) + "\n")


# --- markdown ---------------------------------------------------------------------------------

_SHORT_DTYPE = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}


def _fmt_us(us: float) -> str:
    if us >= 1000:
        return f"{us:,.0f}"
    if us >= 100:
        return f"{us:.0f}"
    if us >= 10:
        return f"{us:.1f}"
    return f"{us:.2f}"


def _case_order(dist: str, dtype: str, B: int, V: int):
    dists = list(DISTS)
    dtypes = list(DTYPES)
    return (
        dists.index(dist) if dist in dists else len(dists),
        dtypes.index(dtype) if dtype in dtypes else len(dtypes),
        V,
        B,
    )


def cell(row: dict | None) -> str:
    if row is None:
        return ""
    status = row["status"]
    if status == "FAILED":
        return "**FAILED**"
    if status == "error":
        return "error"
    if status == "skipped":
        return "skip"
    us = row["graph_us"] if row["graph_us"] is not None else row["eager_us"]
    if us is None:
        return "?"
    text = _fmt_us(us)
    if row["graph_us"] is None and row.get("roofline_us") is not None:
        text += "e"
    if row["ratio"] is not None:
        ratio = row["ratio"]
        text += f" ({ratio:.2f}×)" if ratio < 10 else f" ({ratio:.1f}×)" if ratio < 100 else f" ({ratio:,.0f}×)"
    rate = row.get("match_rate")
    if row["family"] != "qrita" and rate is not None and rate < 1:
        text += f" [{rate:.0%}]"
    return text


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def markdown(meta: dict, rows: list[dict]) -> str:
    env = meta.get("env", {})
    dev = env.get("device", {})
    ver = env.get("versions", {})
    git = env.get("git", {})
    lines = ["# qrita benchmark", ""]
    name = dev.get("name", "?")
    if dev.get("kind") == "cuda":
        name += (
            f" (sm {dev.get('capability')}, {dev.get('sm_count')} SMs, driver {dev.get('driver')},"
            f" CUDA {dev.get('cuda_runtime')})"
        )
    lines.append(f"- device: {name}")
    libs = ", ".join(f"{k} {v}" for k, v in ver.items() if v)
    lines.append(f"- versions: {libs}")
    commit = git.get("commit") or "unknown"
    lines.append(
        f"- commit `{commit[:12]}`{' (dirty)' if git.get('dirty') else ''}, spec fingerprint "
        f"`{env.get('spec_fingerprint')}`, {env.get('date')}"
    )
    bw = meta.get("copy_bandwidth")
    if bw:
        lines.append(f"- device-to-device copy bandwidth: {bw['bytes_per_s'] / 1e12:.2f} TB/s (bytes read + written)")
    lines.append(
        f"- preset `{meta.get('preset')}`, ties `{meta.get('ties')}`, elapsed {meta.get('elapsed_s', 0):.0f} s"
        f" (budget {meta.get('budget_s')}), `{meta.get('command')}`"
    )
    counts = defaultdict(int)
    for r in rows:
        counts[r["status"]] += 1
    lines.append("- rows: " + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    lines += [
        "",
        "Cells: median µs per call, CUDA-graph replays (`e`: eager only), `(×)`: over the roofline "
        "(bytes that must move / copy bandwidth: read + write of the logits for masked output, one read "
        "for `select` and samplers); `[n%]`: a peer's rows whose kept set differs from the oracle's. "
        "On the CPU: eager perf_counter medians, no roofline.",
        "",
    ]

    providers = list(dict.fromkeys(r["provider"] for r in rows))
    lines += [
        "## Providers",
        "",
        "| provider | what | gate (cases pass/FAILED/error) | exact (own ties) | exact lowest_index / all |",
        "| --- | --- | --- | --- | --- |",
    ]
    info = meta.get("providers", {})
    for p in providers:
        mine = [r for r in rows if r["provider"] == p]
        npass = sum(r["gate"] == "pass" for r in mine)
        nfail = sum(r["status"] == "FAILED" for r in mine)
        nerr = sum(r["status"] == "error" for r in mine)
        judged = [r for r in mine if r["match_rate"] is not None]

        def avg(key, judged=judged):
            vals = [r[key] for r in judged if r[key] is not None]
            return f"{sum(vals) / len(vals):.1%}" if vals else ""

        gate = (
            f"{npass}/{nfail}/{nerr}"
            if mine and mine[0]["family"] == "qrita"
            else f"info ({len(judged)} cases, {nerr} errors)"
        )
        desc = info.get(p, {}).get("description", "")
        lines.append(
            f"| {p} | {desc} | {gate} | {avg('match_rate')} | {avg('match_lowest_index')} / {avg('match_all')} |"
        )
    for p, reason in meta.get("unavailable", {}).items():
        lines.append(f"| {p} | not run: {reason} | | | |")
    lines.append("")

    by_scenario: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_scenario[r["scenario"]].append(r)
    for scenario in [s for s in SCENARIOS if s in by_scenario] + [s for s in by_scenario if s not in SCENARIOS]:
        srows = by_scenario[scenario]
        cols = [p for p in providers if any(r["provider"] == p for r in srows)]
        desc = SCENARIOS[scenario].description if scenario in SCENARIOS else scenario
        lines += [f"## {scenario}: {desc}", ""]
        lines.append("| dist | dtype | B | V | roofline µs | " + " | ".join(cols) + " |")
        lines.append("| --- | --- | ---: | ---: | ---: | " + " | ".join("---:" for _ in cols) + " |")
        cases: dict[tuple, dict[str, dict]] = {}
        for r in srows:
            cases.setdefault((r["dist"], r["dtype"], r["B"], r["V"]), {})[r["provider"]] = r
        for (dist, dtype, B, V), cells in sorted(cases.items(), key=lambda kv: _case_order(*kv[0])):
            roof = [r["roofline_us"] for r in cells.values() if r["roofline_us"] and r["output"] == "mask"]
            roof_txt = _fmt_us(roof[0]) if roof else ""
            lines.append(
                f"| {dist} | {_SHORT_DTYPE.get(dtype, dtype)} | {B} | {V} | {roof_txt} | "
                + " | ".join(cell(cells.get(p)) for p in cols)
                + " |"
            )
        lines.append("")

    problems = [r for r in rows if r["status"] in ("FAILED", "error") or (r["note"] and r["status"] == "ok")]
    if problems:
        lines += ["## Failures, errors and notes", ""]
        for r in problems[:200]:
            what = r["gate_detail"] if r["status"] == "FAILED" else r["note"]
            lines.append(
                f"- {r['status']}: {r['provider']} {r['scenario']} {r['dist']} {r['dtype']} {r['B']}x{r['V']}: {what}"
            )
        if len(problems) > 200:
            lines.append(f"- ... and {len(problems) - 200} more (see results.json)")
        lines.append("")
    skipped = [r for r in rows if r["status"] == "skipped"]
    if skipped:
        why = defaultdict(int)
        for r in skipped:
            why[r["note"]] += 1
        lines += ["## Skipped", ""] + [f"- {n} rows: {reason}" for reason, n in why.items()] + [""]
    mem = [r for r in rows if r.get("peak_mem_bytes") is not None and r["family"] == "qrita"]
    if mem:
        worst = max(mem, key=lambda r: r["peak_mem_bytes"])
        lines += [
            "## Peak extra device memory (qrita)",
            "",
            f"Largest: {_size(worst['peak_mem_bytes'])} ({worst['provider']} {worst['scenario']} "
            f"{worst['dtype']} {worst['B']}x{worst['V']}); torch allocator only.",
            "",
        ]
    return "\n".join(lines)


# --- plots ------------------------------------------------------------------------------------


def _plot_subset(rows: list[dict]) -> tuple[list[dict], str, str]:
    """The rows the plots show: one dtype and one distribution (fp32 Zipf where present)."""
    ok = [r for r in rows if r["status"] == "ok" and (r["graph_us"] or r["eager_us"])]
    if not ok:
        return [], "", ""

    def most(key, prefer):
        values = [r[key] for r in ok]
        return prefer if prefer in values else max(set(values), key=values.count)

    dtype = most("dtype", "float32")
    dist = most("dist", "zipf")
    return [r for r in ok if r["dtype"] == dtype and r["dist"] == dist], dtype, dist


def plots(out_dir: Path, rows: list[dict], meta: dict) -> list[str]:
    """``latency.png`` (µs vs B per provider, one panel per scenario x vocab) and ``roofline.png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    subset, dtype, dist = _plot_subset(rows)
    if not subset:
        return []
    written = []
    # panels need at least two batch sizes to draw a line
    series = defaultdict(set)
    for r in subset:
        series[(r["scenario"], r["V"])].add(r["B"])
    lines_ok = {key for key, batches in series.items() if len(batches) >= 2} or set(series)
    scenarios = [s for s in SCENARIOS if any(key[0] == s for key in lines_ok)]
    vocabs = sorted({key[1] for key in lines_ok})
    # order of the whole run: qrita-X and qrita-X-select sit side by side and get paired tab20 shades
    providers = [p for p in dict.fromkeys(r["provider"] for r in rows) if any(r["provider"] == p for r in subset)]
    colors = {p: plt.cm.tab20(i % 20) for i, p in enumerate(providers)}
    device = meta.get("env", {}).get("device", {}).get("name", "")

    def us(r):
        return r["graph_us"] if r["graph_us"] is not None else r["eager_us"]

    fig, axes = plt.subplots(
        len(scenarios), len(vocabs), figsize=(3.6 * len(vocabs) + 2.5, 2.8 * len(scenarios)), squeeze=False
    )
    for i, s in enumerate(scenarios):
        for j, V in enumerate(vocabs):
            ax = axes[i][j]
            cell_rows = [r for r in subset if r["scenario"] == s and r["V"] == V]
            for p in providers:
                pts = sorted((r["B"], us(r)) for r in cell_rows if r["provider"] == p)
                if pts:
                    ax.plot(*zip(*pts, strict=True), marker="o", ms=3, lw=1.2, color=colors[p], label=p)
            roof = sorted({(r["B"], r["roofline_us"]) for r in cell_rows if r["roofline_us"] and r["output"] == "mask"})
            if roof:
                ax.plot(*zip(*roof, strict=True), ls="--", lw=1, color="black", label="roofline (r+w)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.grid(True, which="both", alpha=0.3)
            ax.set_title(f"{s}, V={V}", fontsize=9)
            if i == len(scenarios) - 1:
                ax.set_xlabel("batch B")
            if j == 0:
                ax.set_ylabel("µs per call")
    _save_figure(plt, fig, axes, f"qrita bench: latency vs batch ({dist}, {dtype}) {device}", 0.97,
                 out_dir / "latency.png")
    written.append("latency.png")

    with_roof = [r for r in subset if r["ratio"] is not None]
    if with_roof:
        scen = [s for s in scenarios if any(r["scenario"] == s for r in with_roof)]
        fig, axes = plt.subplots(1, len(scen), figsize=(4.2 * len(scen) + 2.5, 3.6), squeeze=False)
        for j, s in enumerate(scen):
            ax = axes[0][j]
            for p in providers:
                pts = sorted(
                    (r["B"] * r["V"], r["ratio"]) for r in with_roof if r["scenario"] == s and r["provider"] == p
                )
                if pts:
                    ax.plot(*zip(*pts, strict=True), ls="", marker="o", ms=3, color=colors[p], label=p)
            for level in (1.0, 1.5, 3.0):
                ax.axhline(level, color="grey", lw=0.8, ls=":" if level != 1.0 else "-")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.grid(True, which="both", alpha=0.3)
            ax.set_title(s, fontsize=9)
            ax.set_xlabel("B·V (elements)")
            if j == 0:
                ax.set_ylabel("time / roofline")
        _save_figure(plt, fig, axes, f"qrita bench: roofline ratio ({dist}, {dtype}; lines at 1, 1.5, 3) {device}",
                     0.95, out_dir / "roofline.png")
        written.append("roofline.png")
    return written


def _save_figure(plt, fig, axes, title: str, top: float, path) -> None:
    """One legend for all panels (each label once), a title, and the PNG."""
    handles = {}
    for ax in axes.flat:
        for h, lab in zip(*ax.get_legend_handles_labels(), strict=True):
            handles.setdefault(lab, h)
    fig.legend(list(handles.values()), list(handles.keys()), loc="center right", fontsize=8)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout(rect=(0, 0, 1 - 2.3 / fig.get_figwidth(), top))
    fig.savefig(path, dpi=110)
    plt.close(fig)
