"""Launch-geometry sweep of the Triton backend's full-row kernels (span pass, miss rounds).

    PYTHONPATH=. python3 benchmarks/sweep_triton.py --out $OUT/sweep.json

Times ``qrita.select`` (CUDA-graph medians) at B=1024 and B=1, V=131072 (Zipf/Gaussian, fp32/bf16) for
each option set, after checking that threshold, count and ties equal the default's (the sets in
``MASKED_SETS``: ``qrita.top_k_top_p`` out of place, its bits against the default's).  Each row is written to
``--out`` as it comes.  A developer probe:
the chosen defaults go into ``qrita/backends/triton/launch.py``.
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from gpu_check import failing_rows, graph_time, make_logits  # same folder: run as a script

import qrita

ORACLE_ROWS = 64  # rows of a differing case checked against the oracle (float64 on the CPU)


def oracle_check(x, k, p, sel, rows) -> str:
    """'ok' when the first differing ``rows`` of ``sel`` are within SPEC's top-p window, else the failing batch rows."""
    bad, first = failing_rows(x, k, p, sel, rows[:ORACLE_ROWS])
    return f"FAIL: batch rows {bad}: {first[:300]}" if bad else "ok"


SPAN_CONFIGS = [{}, dict(search_warps=8), dict(search_warps=4), dict(num_pivots=15), dict(num_pivots=7),
                dict(span_block=2048), dict(span=32768), dict(span=32768, search_warps=8)]
ROUND_CONFIGS = [{}, dict(mass_lanes=True), dict(mass_lanes=True, miss_pivots=7), dict(miss_pivots=7),
                 dict(span=32768)]
SMALL_CONFIGS = [{}, dict(search_warps=8), dict(span=8192)]
# (dist, dtype, B, k, p, configs)
CASES = [("zipf", torch.float32, 1024, 50, None, SPAN_CONFIGS),
         ("zipf", torch.float32, 1024, None, 0.9, ROUND_CONFIGS),
         ("gauss", torch.float32, 1024, None, 0.9, ROUND_CONFIGS[:2]),
         ("zipf", torch.float32, 1024, 100, 0.9, SPAN_CONFIGS[:3] + SPAN_CONFIGS[6:7]),
         ("zipf", torch.bfloat16, 1024, 50, None, SPAN_CONFIGS[:4]),
         ("zipf", torch.float32, 1, 50, None, SMALL_CONFIGS),
         ("zipf", torch.float32, 1, None, 0.9, SMALL_CONFIGS[:2]),
         ("gauss", torch.bfloat16, 1, None, 0.9, [{}, dict(mass_lanes=True)]),
         ("gauss", torch.bfloat16, 1024, None, 0.9, [{}, dict(mass_lanes=True)]),
         ("llm", torch.bfloat16, 1024, None, 0.9, [{}, dict(mass_lanes=True)]),
         ("zipf", torch.bfloat16, 1024, None, 0.9, [{}, dict(mass_lanes=True)])]
# --set layout: the span pass's load layout (default "strided") against the vector layout
LAYOUT = [{}, dict(span_layout="vector")]
LAYOUT_CASES = [("zipf", torch.float32, 1024, 50, None, LAYOUT), ("gauss", torch.float32, 1024, 50, None, LAYOUT),
                ("llm", torch.float32, 1024, None, 0.9, LAYOUT), ("zipf", torch.float32, 1024, 100, 0.9, LAYOUT),
                ("gauss", torch.bfloat16, 1024, 50, None, LAYOUT), ("zipf", torch.bfloat16, 1024, None, 0.9, LAYOUT),
                ("llm", torch.float32, 64, 50, None, LAYOUT), ("zipf", torch.float32, 1, 50, None, LAYOUT)]
# --set topp: top-p options, one cut against two (the default, kernels.row_cut_key) and miss-round
# lanes half in value (kernels.lane_taus), alone and together
TOPP = [{}, dict(two_cuts=False), dict(value_lanes=True), dict(two_cuts=False, value_lanes=True)]
TOPP_CASES = [(d, t, B, None, p, TOPP) for d in ("llm", "zipf", "gauss") for t in (torch.float32, torch.bfloat16)
              for B, p in ((1024, 0.9), (1024, 0.5), (1, 0.9))]
# --set split: shorter spans (more programs a row, the slot kept at 8192 keys) and the cut's launch, at small B
SPLIT = [{}, dict(span=8192, span_cap=512), dict(span=4096, span_cap=256), dict(span=2048, span_cap=128),
         dict(cut_pass=False), dict(span=4096, span_cap=256, cut_pass=False)]
SPLIT_CASES = [("llm", torch.float32, B, k, p, SPLIT if B > 16 else SPLIT[:4]) for B in (1, 16, 64)
               for k, p in ((50, None), (None, 0.9))] + [
    ("llm", torch.float32, 1024, k, p, SPLIT[:3]) for k, p in ((50, None), (None, 0.9))]
# --set batch: the small-batch defaults (launch.span_of, CUT_PASS_MIN_ROWS) against the earlier ones
BATCH = [{}, dict(cut_pass=True), dict(span=16384, span_cap=1024)]
BATCH_CASES = [("llm", torch.float32, B, k, p, BATCH) for B in (1, 16, 64, 128) for k, p in ((50, None), (None, 0.9))]
# --set agg: span-pass slot appends, one atomic per thread and block (kernels.append_keys) against the default
AGG = [{}, dict(append_agg=256)]
AGG_CASES = [("zipf", torch.float32, 1024, 50, None, AGG), ("gauss", torch.float32, 1024, None, 0.9, AGG),
             ("llm", torch.float32, 1024, None, 0.9, AGG), ("zipf", torch.bfloat16, 1024, 50, None, AGG),
             ("zipf", torch.float32, 1024, 100, 0.9, AGG)]
# --set defer: the span pass's slot stores one iteration after their atomics (kernels.append_deferred), on
# the cases of --set agg
DEFER_CASES = [case[:5] + ([{}, dict(append_defer=True)],) for case in AGG_CASES]
# --set share: the second cut's target, rowcap // two_cut_share keys (launch.TWO_CUT_SHARE by default): fewer
# appends, a higher bar for the mass above it.  zipf13 keeps ~1300 entries at top-p 0.9 (a boundary between
# the two cuts of a small share)
SHARE = [{}, dict(two_cut_share=4), dict(two_cut_share=16), dict(two_cut_share=64), dict(two_cut_share=128)]
SHARE_CASES = [(d, torch.float32, 1024, None, p, SHARE) for d in ("llm", "zipf", "gauss", "zipf13")
               for p in (0.9, 0.5)]
# --set share_hi: top-p whose boundary lies in a Gaussian floor's upper tail (LLM-like top-p 0.99: about
# the floor's 550th key), where a small second cut misses and a quarter of the slot hits
SHARE_HI = [{}, dict(two_cut_share=4), dict(two_cut_share=128)]
SHARE_HI_CASES = [("llm", torch.float32, 1024, None, p, SHARE_HI) for p in (0.99, 0.95)] + [
    (d, torch.float32, 1024, None, 0.99, SHARE_HI) for d in ("zipf13", "gauss")]
# --set kp: a scalar top-k with a top-p without the span pass's softmax partials (and with the top-k
# geometry) against the path before (option kp_softmax)
KP = [{}, dict(kp_softmax=True)]
KP_CASES = [(d, torch.float32, B, 100, 0.9, KP) for d in ("llm", "zipf", "gauss") for B in (1024, 64, 1)] + [
    ("llm", torch.bfloat16, 1024, 100, 0.9, KP), ("zipf13", torch.float32, 1024, 1000, 0.9, KP)]
# --set fold: the finish run by the span pass's last program of a row and each update by its round's
# (options fold_finish, fold_updates; the default at B <= launch.FOLD_MAX_ROWS) against separate launches
FOLD_ON = dict(fold_finish=True, fold_updates=True)
FOLD_OFF = dict(fold_finish=False, fold_updates=False)
FOLD = [{}, FOLD_OFF, FOLD_ON, dict(fold_finish=False), dict(fold_updates=False)]
FOLD_CASES = [("llm", torch.float32, B, k, p, FOLD) for B in (1, 16, 64) for k, p in ((50, None), (None, 0.9))] + [
    ("gauss", torch.float32, 1, None, 0.9, FOLD), ("llm", torch.bfloat16, 1, 50, None, FOLD),
    ("zipf", torch.float32, 1, 50, None, FOLD), ("llm", torch.float32, 1, 100, 0.9, FOLD),
    ("gauss", torch.float32, 1024, None, 0.9, [{}, FOLD_ON]), ("llm", torch.float32, 1024, 50, None, [{}, FOLD_ON]),
    ("llm", torch.float32, 16, 100, 0.9, FOLD[:2]), ("zipf", torch.float32, 1, 100, 0.9, FOLD[:2])]
# --set occupancy: the finish takes 255 registers a thread (sm_90), one program an SM, and at B=1024 runs
# 1024 latency-bound programs in ~8 waves; a register cap (option search_maxnreg, spills) or smaller
# register tiles (reg_cap 2048: 128 registers, the larger slots searched from memory) allow two an SM.
# fused_rounds: the small tile's search rounds in one reduction each (sm_90: 23-24 barriers a round -> 3)
OCC = [{}, dict(fused_rounds=True), dict(search_maxnreg=128), dict(search_maxnreg=168), dict(reg_cap=2048),
       dict(reg_cap=2048, search_maxnreg=128), dict(reg_cap=2048, fused_rounds=True)]
OCC_CASES = [(d, torch.float32, B, k, p, OCC) for d in ("llm", "gauss", "zipf") for B in (1024, 64)
             for k, p in ((50, None), (100, 0.9), (None, 0.9))]
# --set defaults: the fourteenth session's defaults (fused_rounds; search_maxnreg=128 for the top-k geometry above
# 64 rows) against the finish without the register cap and against the thirteenth session's defaults; and for a
# top-k (rows that hit), the cost of three of the four no-op miss rounds (miss_rounds=1)
OLD_SEARCH = dict(fused_rounds=False, search_maxnreg=255)  # 255: no cap (the finish takes 255 registers)
DEF_CASES = [(d, torch.float32, B, k, p, [{}, dict(search_maxnreg=255), OLD_SEARCH, dict(miss_rounds=1)] if B > 64
              and k else [{}, OLD_SEARCH] + [dict(miss_rounds=1)] * bool(k))
             for d in ("llm", "gauss", "zipf") for B in (1024, 64)
             for k, p in ((50, None), (100, 0.9), (None, 0.9))] + [
    ("llm", torch.bfloat16, 1024, k, p, [{}, dict(search_maxnreg=255), OLD_SEARCH]) for k, p in ((50, None), (100, 0.9))
] + [("llm", torch.float32, B, k, p, [{}, OLD_SEARCH]) for B in (1, 16)
     for k, p in ((50, None), (100, 0.9), (None, 0.9))]
# --set rows: miss rounds run one program a row over its spans, then its update (row_rounds, the default of the
# top-k geometry above 16 rows), against one program a span and an update launch
ROW_CASES = [(d, torch.float32, B, k, p, [{}, dict(row_rounds=False)]) for d in ("llm", "zipf", "gauss")
             for B in (1024, 64) for k, p in ((50, None), (100, 0.9))]
# --set rows_miss (not run yet): rows that miss under row_rounds: the first round over the span grid
# (span_rounds_first=1) and the row-mode rounds without the searches' register cap (round_maxnreg=255)
ROW_MISS = [{}, dict(row_rounds=False), dict(span_rounds_first=1), dict(round_maxnreg=255),
            dict(span_rounds_first=1, round_maxnreg=255)]
ROW_MISS_CASES = [("zipf", torch.float32, 1024, 100, 0.9, ROW_MISS), ("zipf", torch.float32, 1024, 50, None, ROW_MISS),
                  ("llm", torch.float32, 1024, 50, None, ROW_MISS), ("llm", torch.float32, 64, 50, None, ROW_MISS),
                  ("llm", torch.float32, 1024, 100, 0.9, ROW_MISS)]
# --set kp_harness (session 16 call B: row_rounds off 573.8 -> 391.3 us, the others within 3%): the harness's
# LLM-like k100+p0.9 select at B=1024 went 456 -> 548 us (fp32) and 429 -> 539 (bf16) between the thirteenth and
# fifteenth sessions' harness runs while Gaussian went 386 -> 292 (docs/bench/h200-2026-12-02/session15/): the
# fourteenth session's defaults one at a time, on the harness's own generators (gpu_check's "h" distributions)
KP_OLD = dict(fused_rounds=False, search_maxnreg=255, row_rounds=False)
KP_H = [{}, dict(search_maxnreg=255), dict(fused_rounds=False), dict(row_rounds=False), KP_OLD]
KP_H_CASES = [("hllm", torch.float32, 1024, 100, 0.9, KP_H), ("hllm", torch.bfloat16, 1024, 100, 0.9, KP_H),
              ("hgauss", torch.float32, 1024, 100, 0.9, KP_H), ("hzipf", torch.float32, 1024, 100, 0.9, KP_H),
              ("hllm", torch.float32, 1024, 50, None, KP_H[:2] + KP_H[4:])]
# --set kp_rows (session 16): a top-k with a top-p above 64 rows keeps span-grid miss rounds (launch.
# ROW_ROUNDS_KP_MAX_ROWS); row_rounds on again, on the harness's generators
KP_R = [{}, dict(row_rounds=True)]
KP_R_CASES = [(d, t, B, 100, 0.9, KP_R) for d, t, B in (
    ("hllm", torch.float32, 1024), ("hgauss", torch.float32, 1024), ("hzipf", torch.float32, 1024),
    ("hllm", torch.bfloat16, 1024), ("hllm", torch.float32, 256), ("hgauss", torch.float32, 256))]
# --set lanes (session 31 call 2, on an H100, before sample_lanes became the default): a top-p row's first miss
# lanes from a sample of the row (option sample_lanes, the default since, kernels.sample_taus; later rounds in
# value) against the key lanes (sample_lanes=False) and value_lanes, on the harness's
# generators; top-p 0.99 and the split path at B=1 / 16 too (benchmarks/miss_rounds.py counts the rounds); and
# sample lanes with 8 lanes a round instead of 16 (miss_pivots=7: half the evaluating loop's compares and FMAs)
SAMPLE8 = dict(sample_lanes=True, miss_pivots=7)
LANES = [dict(sample_lanes=False), {}, SAMPLE8, dict(value_lanes=True, sample_lanes=False)]
LANES_CASES = [(d, t, 1024, None, 0.9, LANES) for d in ("hgauss", "hzipf", "hllm")
               for t in (torch.float32, torch.bfloat16)] + [(d, torch.float32, B, None, p, LANES[:3]) for d, B, p in (
                   ("hgauss", 1024, 0.99), ("hzipf", 1024, 0.99), ("hgauss", 1, 0.9), ("hgauss", 16, 0.9),
                   ("hzipf", 1, 0.9))]
# --set rowprog (session 31 call 1, on an H100: level): row-mode miss rounds in 264 programs (two a multiprocessor
# of an H100 or H200), each taking several rows (option row_programs), against one program a row (the default); the
# top-k geometry above 16 rows, where every row-mode round launch of rows that hit is a no-op; truncation off makes
# every row miss (the rounds' work, not their launch)
ROWPROG = [dict(row_programs=264), {}]
ROWPROG_CASES = [(d, t, B, 50, None, ROWPROG) for d in ("hllm", "hgauss", "hzipf") for t in (torch.float32,)
                 for B in (1024, 256)] + [
    ("hllm", torch.bfloat16, 1024, 50, None, ROWPROG), ("hllm", torch.float32, 64, 100, 0.9, ROWPROG),
    ("hllm", torch.float32, 64, 50, None, ROWPROG),
    ("hllm", torch.float32, 1024, 50, None, [dict(truncation=False, row_programs=264), dict(truncation=False)])]
# --set samplecut: a top-k row's cut and a top-p row's second (gathering) cut raised to the order statistic of a
# sample (option sample_cut, its entries; 1024 by default since session 33) against the Gaussian cuts alone (0), and
# samples of 2048 and 4096 entries; Zipf rows (top-k 50: about 2250 candidates with the Gaussian cut, 690 with 1024
# entries; top-p 0.9's gathering cut about 3800 keys, 1700; interpreter counts) and Gaussian / LLM-like rows (their
# Gaussian cut is the higher: the sample only costs the cut launch's time; LLM-like top-p rows must keep hitting).
# Session 33 (H100, docs/bench/h100-2026-12-06/session33/): Zipf 13-40 % faster, Gaussian / LLM-like 2-5 % slower.
# The most telling cases first (the budget may not reach the last)
SCUT = [{}, dict(sample_cut=0), dict(sample_cut=2048), dict(sample_cut=4096)]
SCUT_CASES = [(d, torch.float32, 1024, k, p, SCUT[:2]) for d in ("hgauss", "hllm")
              for k, p in ((50, None), (None, 0.9))] + [
    ("hzipf", torch.float32, 1024, 50, None, SCUT), ("hzipf", torch.float32, 1024, None, 0.9, SCUT[:2]),
    ("hzipf", torch.float32, 1024, None, 0.5, SCUT[:2]), ("hzipf", torch.float32, 1024, 100, 0.9, SCUT[:2]),
    ("hzipf", torch.bfloat16, 1024, 50, None, SCUT[:2]), ("hzipf", torch.bfloat16, 1024, None, 0.9, SCUT[:2]),
    ("hzipf", torch.float32, 256, 50, None, SCUT[:2]), ("hllm", torch.float32, 1024, 100, 0.9, SCUT[:2])]
# --set slotties (masked, out of place: top_k_top_p, not select): cut tie groups of rows that hit resolved from the
# slot (option slot_ties, session 34: the span pass stores token indices, and the tie count pass reads only the
# rows left pending) against the count from the row (the default); 16-bit rows tie most.  With it the tie count no
# longer sits between the span pass and the mask, so mask_reverse (default for 32-bit rows only) is tried beside
SLOTT = [{}, dict(slot_ties=True), dict(slot_ties=True, mask_reverse=True)]
SLOTT_CASES = [(d, torch.bfloat16, 1024, 50, None, SLOTT) for d in ("hllm", "hgauss", "hzipf")] + [
    ("hllm", torch.float32, 1024, 50, None, SLOTT[:2]), ("hllm", torch.float16, 1024, 50, None, SLOTT),
    ("hllm", torch.bfloat16, 1024, 100, 0.9, SLOTT), ("hllm", torch.bfloat16, 1024, None, 0.9, SLOTT),
    ("hllm", torch.bfloat16, 64, 50, None, SLOTT), ("hgauss", torch.bfloat16, 1, 50, None, SLOTT[:2])]
# --set samplecut4096: the sample cut's 4096 entries (Zipf top-k 50 334.2 against 435.7 us with 1024 on an H100,
# session 33) on the rows whose Gaussian cut is already tight, where a larger sample only costs (session 34's skip
# leaves about 6.5 us of 1024 entries' cost there)
SCUT4 = [{}, dict(sample_cut=4096)]
SCUT4_CASES = [(d, torch.float32, 1024, k, p, SCUT4) for d in ("hgauss", "hllm", "hzipf")
               for k, p in ((50, None), (100, 0.9), (None, 0.9))] + [
    ("hllm", torch.bfloat16, 1024, 50, None, SCUT4), ("hzipf", torch.bfloat16, 1024, 50, None, SCUT4),
    ("hllm", torch.float32, 256, 50, None, SCUT4)]
# --set toppfloor (the prepared triton-topp-floor: no option, so run once with the branch's kernels and once with
# main's): top-p rows whose Gaussian model put the cut above the row's largest entries (sharp: sigma 6; a small p)
# against rows it leaves alone (Gaussian sigma 1, LLM-like, Zipf: the same bits expected)
FLOOR_CASES = [("sharp", t, B, None, p, [{}]) for t, B, p in (
    (torch.float32, 1024, 0.9), (torch.float32, 1024, 0.5), (torch.bfloat16, 1024, 0.9), (torch.float32, 64, 0.9),
    (torch.float32, 1, 0.9))] + [(d, torch.float32, 1024, None, p, [{}]) for d, p in (
        ("hllm", 0.05), ("gauss", 0.05), ("hgauss", 0.9), ("hllm", 0.9), ("hzipf", 0.9))] + [
    ("sharp", torch.float32, 1024, 100, 0.9, [{}])]
# --set samplewide: the option sample_wide (session 35): rows whose 1024-entry sample does not skip (at least n of
# its keys above the Gaussian cut: Zipf rows) take the order statistic of a 4096- or 8192-entry sample; rows that
# skip (Gaussian, LLM-like: interpreter, 16 rows each, none took the wide sample) read 1024 as now.  Zipf top-k 50
# candidates about 760 -> 330 a row (interpreter, V=131072), under the finish's 512-key tile.  sample_cut=4096 for
# every row beside it (session 35 call 1: Zipf 22-25 % faster, the others 4-6 % slower)
SWIDE = [{}, dict(sample_wide=4096), dict(sample_wide=8192), dict(sample_cut=4096)]
SWIDE_CASES = [("hzipf", torch.float32, 1024, 50, None, SWIDE), ("hzipf", torch.float32, 1024, 100, 0.9, SWIDE)] + [
    (d, torch.float32, 1024, k, p, SWIDE[:2]) for d in ("hgauss", "hllm") for k, p in ((50, None), (100, 0.9))] + [
    ("hzipf", torch.bfloat16, 1024, 50, None, SWIDE[:3]), ("hzipf", torch.float32, 1024, None, 0.9, SWIDE[:2]),
    ("hzipf", torch.float32, 256, 50, None, SWIDE[:2]), ("hllm", torch.bfloat16, 1024, 50, None, SWIDE[:2])]
# --set samplewide_masked (masked, out of place): bf16 top-k 50 masking with the wide sample, and with slot_ties on
# it (session 35 call 1: slot_ties 2-6 % faster on bf16 LLM-like and Gaussian top-k rows, 30 % slower on Zipf rows,
# whose 760 candidates a wide sample takes to about 330)
SWIDE_M = [{}, dict(sample_wide=4096), dict(sample_wide=4096, slot_ties=True)]
SWIDE_M_CASES = [(d, torch.bfloat16, 1024, 50, None, SWIDE_M) for d in ("hzipf", "hllm", "hgauss")] + [
    ("hzipf", torch.float32, 1024, 50, None, SWIDE_M[:2])]
# --set streams / streams_masked: the option streams=2 (session 35): a call's waves alternate over the call's stream
# and a side stream, each with its own scratch (waves of 256 rows instead of 512 at B=1024), so that one wave's
# one-program-a-row kernels (cut, finish, updates) and compute-bound miss rounds run beside the other's row passes
STRM = [{}, dict(streams=2)]
STRM_CASES = [(d, torch.float32, 1024, k, p, STRM) for d, k, p in (
    ("hllm", 50, None), ("hgauss", None, 0.9), ("hzipf", 50, None), ("hzipf", None, 0.9), ("hllm", None, 0.9),
    ("hllm", 100, 0.9), ("hgauss", 50, None))] + [("hllm", torch.bfloat16, 1024, 50, None, STRM)]
STRM_M_CASES = [(d, torch.float32, 1024, k, p, STRM) for d, k, p in (
    ("hllm", 50, None), ("hgauss", None, 0.9), ("hzipf", 50, None), ("hllm", None, 0.9), ("hzipf", None, 0.9))] + [
    ("hllm", torch.bfloat16, 1024, 50, None, STRM), ("hllm", torch.float32, 256, 50, None, STRM)]
# --set b1cut: one row (issue 3's B=1 targets: select <= 15 us; H200 session 29: Gaussian 13.9, LLM-like 16.2, Zipf
# 22.6 us): the cut in the span programs (the default at B <= 64, no sample cut) against the cut kernel (cut_pass: one
# launch more) with the sample cut, and with the wide sample: a Zipf row's ~2250 candidates would become ~330, in
# the finish's 512-key tile
B1CUT = [{}, dict(cut_pass=True), dict(cut_pass=True, sample_wide=4096)]
B1CUT_CASES = [(d, torch.float32, 1, 50, None, B1CUT) for d in ("hzipf", "hllm", "hgauss")] + [
    ("hzipf", torch.float32, 16, 50, None, B1CUT)]
# --set maskblock (masked, out of place): the option mask_block (session 36): 8192 or 16384 entries a mask program
# instead of 4096 (bf16's mask pass took twice fp32's time per byte in call 5's profile; 8192 gives a bf16 program
# fp32's bytes)
MBLK = [{}, dict(mask_block=8192), dict(mask_block=16384)]
MBLK_CASES = [(d, torch.bfloat16, 1024, 50, None, MBLK) for d in ("hllm", "hgauss", "hzipf")] + [
    ("hllm", torch.float32, 1024, 50, None, MBLK), ("hllm", torch.float16, 1024, 50, None, MBLK[:2]),
    ("hllm", torch.bfloat16, 1024, None, 0.9, MBLK[:2]), ("hllm", torch.bfloat16, 64, 50, None, MBLK),
    ("hllm", torch.bfloat16, 256, 50, None, MBLK[:2])]
# --set maskblock_small (masked, out of place): 2048 and 1024 entries a mask program against 4096 (session 37 call 1:
# 8192 and 16384 were slower on every row, and the profile's bf16 mask pass 243 -> 312 us at 8192)
MBLK_S = [{}, dict(mask_block=2048), dict(mask_block=1024)]
MBLK_S_CASES = [(d, torch.bfloat16, 1024, 50, None, MBLK_S) for d in ("hllm", "hgauss", "hzipf")] + [
    ("hllm", torch.float32, 1024, 50, None, MBLK_S), ("hllm", torch.bfloat16, 64, 50, None, MBLK_S),
    ("hllm", torch.bfloat16, 256, 50, None, MBLK_S), ("hllm", torch.float16, 1024, 50, None, MBLK_S),
    ("hllm", torch.bfloat16, 1024, None, 0.9, MBLK_S)]
# --set scatter (masked, out of place): fill-and-scatter masking (option scatter: a row that hit is only written,
# its kept candidates written back from the slot; measured slower in session 5 on the H200, 728 -> 960 us, when
# the token indices halved the rows a wave) with smaller slots (span_cap: 512 or 256 keys a span instead of 1024;
# top-k 50 gathers a few hundred keys a row since the sample cut, so the rows a wave stay), and span_cap alone
SCAT = [{}, dict(scatter=True), dict(scatter=True, span_cap=512), dict(scatter=True, span_cap=256), dict(span_cap=512)]
SCAT_CASES = [(d, t, 1024, 50, None, SCAT) for t in (torch.bfloat16, torch.float32) for d in ("hllm", "hgauss", "hzipf")
              ] + [("hllm", t, 1024, 100, 0.9, SCAT[:3]) for t in (torch.bfloat16, torch.float32)] + [
    ("hllm", torch.bfloat16, 64, 50, None, SCAT[:3]), ("hllm", torch.float32, 64, 50, None, SCAT[:3]),
    ("hllm", torch.bfloat16, 1024, None, 0.9, SCAT[:3]), ("hzipf", torch.float32, 1024, None, 0.9, SCAT[:2])]
# --set spancap / spancap_masked (select / masked out of place): the wide geometry's slot of WIDE_SPAN_CAP (512) keys a
# span for k <= WIDE_CAP_MAX_K (main's default since session 39) against the full SPAN_CAP (1024)
CAPS = [{}, dict(span_cap=1024)]
CAP_CASES = [(d, t, B, k, p, CAPS) for B in (1024, 256) for t in (torch.float32, torch.bfloat16)
             for d in ("hllm", "hgauss", "hzipf") for k, p in ((50, None), (100, 0.9))] + [
    (d, torch.float32, 1024, k, None, CAPS) for d in ("hzipf", "hllm") for k in (100, 128)]
# --set spancap_topp (select): smaller slots for top-p rows too (not the default: their waves at B=1024 are three,
# 365 rows each; a top-p row's second cut targets rowcap // TWO_CUT_SHARE keys, so the slot changes what it gathers)
CAPS_P = [{}, dict(span_cap=512), dict(span_cap=256)]
CAP_P_CASES = [(d, t, 1024, None, 0.9, CAPS_P) for t in (torch.float32, torch.bfloat16)
               for d in ("hllm", "hgauss", "hzipf")] + [("hllm", torch.float32, 256, None, 0.9, CAPS_P)]
# --set valuecmp (masked, out of place): the mask (1), or the mask and the tie counts (2), comparing float32 values
# against scalars from the threshold key instead of keys (option value_cmp; fewer instructions and registers)
VCMP = [{}, dict(value_cmp=1), dict(value_cmp=2)]
VCMP_CASES = [(d, t, B, 50, None, VCMP) for B in (1024, 64) for t in (torch.bfloat16, torch.float32)
              for d in ("hllm", "hgauss", "hzipf")] + [
    ("hllm", t, 1024, k, p, VCMP) for t in (torch.bfloat16, torch.float32) for k, p in ((100, 0.9), (None, 0.9))] + [
    ("hllm", torch.float16, 1024, 50, None, VCMP)]
# --set toppslot (select): smaller slots for top-p rows with the second cut's target kept (rowcap // two_cut_share keys:
# 256 at V=131072 by default), so that the keys a hit gathers stay the same; one wave of 1024 rows instead of three.
# A default would apply at every B (a row's top-p bits may depend on the path; the slot must not depend on B).  The
# last set keeps the share (session 40's spancap_topp: the second cut then targets a quarter of the keys)
TSLOT = [{}, dict(span_cap=512, two_cut_share=16), dict(span_cap=256, two_cut_share=8), dict(span_cap=256)]
TSLOT_CASES = [("hllm", torch.float32, 1024, None, p, TSLOT) for p in (0.9, 0.5, 0.99)] + [
    (d, torch.float32, 1024, None, 0.9, TSLOT) for d in ("hgauss", "hzipf")] + [
    ("hllm", torch.bfloat16, 1024, None, 0.9, TSLOT), ("hllm", torch.float32, 64, None, 0.9, TSLOT),
    ("hllm", torch.float32, 1, None, 0.9, TSLOT)]
# these time and compare the masked logits
MASKED_SETS = {"slotties", "samplewide_masked", "streams_masked", "maskblock", "maskblock_small", "scatter",
               "spancap_masked", "valuecmp"}
SETS = {"geometry": CASES, "layout": LAYOUT_CASES, "topp": TOPP_CASES, "split": SPLIT_CASES, "batch": BATCH_CASES,
        "agg": AGG_CASES, "share": SHARE_CASES, "defer": DEFER_CASES, "kp": KP_CASES,
        "share_hi": SHARE_HI_CASES, "fold": FOLD_CASES, "occupancy": OCC_CASES,
        "defaults": DEF_CASES, "rows": ROW_CASES, "rows_miss": ROW_MISS_CASES, "kp_harness": KP_H_CASES,
        "kp_rows": KP_R_CASES, "lanes": LANES_CASES, "rowprog": ROWPROG_CASES, "samplecut": SCUT_CASES,
        "slotties": SLOTT_CASES, "samplecut4096": SCUT4_CASES,
        "toppfloor": FLOOR_CASES, "samplewide": SWIDE_CASES,
        "samplewide_masked": SWIDE_M_CASES, "streams": STRM_CASES, "streams_masked": STRM_M_CASES,
        "b1cut": B1CUT_CASES, "maskblock": MBLK_CASES,
        "maskblock_small": MBLK_S_CASES, "scatter": SCAT_CASES,
        "spancap": CAP_CASES, "spancap_masked": CAP_CASES, "spancap_topp": CAP_P_CASES,
        "valuecmp": VCMP_CASES, "toppslot": TSLOT_CASES}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="sweep.json")
    ap.add_argument("--budget-s", type=float, default=200)
    ap.add_argument("--match", default="", help="only cases whose 'dist dtype B=..' name contains this")
    ap.add_argument("--set", default="geometry", choices=sorted(SETS), help="which list of cases")
    args = ap.parse_args()
    rows = []
    t0 = time.time()
    for dist, dtype, B, k, p, configs in SETS[args.set]:
        if args.match not in f"{dist} {str(dtype)[6:]} B={B} k={k} p={p}":
            continue
        x = make_logits(dist, B, 131072, dtype)
        masked = args.set in MASKED_SETS
        # the default's answer, once a case: the selection, or (masked sets) the masked logits' bits
        if masked:
            base = qrita.top_k_top_p(x, k, p, backend="triton").view(torch.int32 if dtype == torch.float32
                                                                      else torch.int16)
        else:
            base = qrita.select(x, k, p, backend="triton")
        for opts in configs:
            if time.time() - t0 > args.budget_s:
                break
            if masked:
                rows.append(masked_row(x, base, dist, dtype, B, k, p, opts))
                print(rows[-1], flush=True)
                write(args.out, rows)
                continue
            try:
                sel = qrita.select(x, k, p, backend="triton", options=opts)
                same = bool(torch.equal(sel.count, base.count) and torch.equal(sel.num_ties, base.num_ties)
                            and torch.equal(sel.threshold, base.threshold))
                us = graph_time(lambda o=opts: qrita.select(x, k, p, backend="triton", options=o))
                row = dict(dist=dist, dtype=str(dtype), B=B, k=k, p=p, options=opts, us=round(us, 1), same=same,
                           hit=float(sel.hit.float().mean()))
                if not same:  # both answers must be the oracle's (top-p may differ inside SPEC's window)
                    diff = (sel.count != base.count) | (sel.num_ties != base.num_ties)
                    diff |= sel.threshold != base.threshold
                    rows_d = diff.nonzero().flatten().tolist()
                    row.update(n_diff=len(rows_d), oracle=oracle_check(x, k, p, sel, rows_d),
                               oracle_default=oracle_check(x, k, p, base, rows_d))
            except Exception as exc:  # noqa: BLE001 - a probe: report and go on
                row = dict(dist=dist, dtype=str(dtype), B=B, k=k, p=p, options=opts,
                           error=f"{type(exc).__name__}: {str(exc)[:200]}")
            rows.append(row)
            print(row, flush=True)
            write(args.out, rows)  # each row as it comes: a run cut by its time limit keeps what it measured
    write(args.out, rows)


def write(path, rows) -> None:
    with open(path, "w") as f:
        json.dump(rows, f, indent=1)


def masked_row(x, base, dist, dtype, B, k, p, opts) -> dict:
    """One masked case (out of place): the median time with ``opts`` and whether its bits equal ``base``
    (the default's masked logits, viewed as integers)."""
    row = dict(dist=dist, dtype=str(dtype), B=B, k=k, p=p, options=opts, mode="masked")
    try:
        got = qrita.top_k_top_p(x, k, p, backend="triton", options=opts).view(base.dtype)
        row.update(us=round(graph_time(lambda: qrita.top_k_top_p(x, k, p, backend="triton", options=opts)), 1),
                   same=bool(torch.equal(got, base)))
        if not row["same"]:
            row.update(n_diff=int((got != base).any(dim=1).sum()))
    except Exception as exc:  # noqa: BLE001 - a probe: report and go on
        row.update(error=f"{type(exc).__name__}: {str(exc)[:200]}")
    return row


if __name__ == "__main__":
    main()
