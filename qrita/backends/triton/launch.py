"""Host side of the Triton backend: shapes, scratch and launches (no host sync)."""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np
import torch
import triton

from ...core import search as core_search
from ...core.keys import KEY_CONSTANTS
from ...core.lut import TOPK_DELTA, TOPP_DELTA
from ...core.spec import NUM_PIVOTS, SAMPLE_SIZE, TIES_ALL, TOPK_LUT_STEPS_PER_OCTAVE
from ...errors import QritaValueError
from ..base import Request, SelectResult, int_option
from . import kernels

DTYPE_CODE = {"float32": kernels.F32.value, "float16": kernels.F16.value, "bfloat16": kernels.BF16.value}
TORCH_DTYPE = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}

# Geometry.  A row is cut into spans of SPAN entries.  No top-k result depends on
# the span (every consumer of a row's candidates is order-independent and exact), so
# span_of may look at B for a top-k alone without breaking batch invariance; a top-p
# request keeps MAX_SPAN (its softmax partials are float sums over spans).
MAX_SPAN = 16384
WIDE_SPAN = 32768  # top-k alone at B >= WIDE_SPAN_MIN_ROWS
WIDE_SPAN_MIN_ROWS = 256
WIDE_SPAN_MAX_K = 1024
SMALL_SPAN = 4096  # top-k alone at B <= SMALL_SPAN_MAX_ROWS: four times the programs a row
SMALL_SPAN_MAX_ROWS = 16
BLOCK = 1024  # entries per iteration of the span pass (1024 won the H200 sweep of 9b05172)
SPAN_CAP = 1024  # candidate slot per span of the row (6.25%); a row holds n_spans * SPAN_CAP, more is a miss
# the slot per span of the wide geometry when the scalar k is at most WIDE_CAP_MAX_K (span_of): a top-k 50 row gathers
# a few hundred keys since the sample cut (Zipf about 690 in 4 spans), and half the slot is half the scratch a row,
# so B=1024 runs in one wave instead of two.  H100 (session 38 call 5, masked out of place, top-k 50, B=1024, the
# same bits): bf16 LLM-like / Gaussian / Zipf 613.0 / 627.7 / 587.3 -> 542.2 / 555.3 / 478.4 us, fp32 659.2 / 662.2
# / 729.2 -> 611.3 / 614.3 / 640.5.  As the default (session 39 call 1, H100, sweep_triton.py --set spancap_masked, 28
# of 28 rows the same bits and none slower): fp32 top-k 50 671.7 / 672.6 / 730.7 -> 623.8 / 625.9 / 652.2 us,
# k100+p0.9 796.0 / 738.0 / 865.7 -> 740.8 / 676.7 / 775.6; bf16 top-k 50 614.1 / 629.6 / 587.7 -> 546.0 / 558.5 /
# 479.5; B=256 within 2 % (one wave either way)
WIDE_SPAN_CAP = 512
WIDE_CAP_MAX_K = 128
# the slot per span of the top-p geometry (span_of's top_p: a top-p without a scalar top-k that every row applies), the
# same at every B: a top-p row's bits may follow its path (hit or miss, what the second cut gathers), and so its
# slot.  The second cut's default share scales with it (two_cut_share_of), so that it still targets rowcap //
# TWO_CUT_SHARE of the full slot (with the share not scaled, Gaussian misses differ in bits inside SPEC's window).
# H100 (session 41, 1024 against 256 in one call, the same bits): sweep_triton.py --set toppslot, select, B=1024,
# LLM-like top-p 0.5 / 0.9 / 0.99 1551 / 594 / 765 -> 508 / 462 / 525 us (p 0.5: 99.9 % of rows hit against 99.4 %,
# whose misses cost the rounds), bf16 p 0.9 615 -> 485, Gaussian / Zipf misses 1684 / 1763 -> 1510 / 1583, B=64
# 88.9 -> 85.5, B=1 30.3 -> 34.0 (slower); harness rows (masked in place / select, fp32): top-p 0.9 B=1024 Zipf 2156
# -> 1968 / 1763 -> 1587, Gaussian 2055 -> 1899 / 1682 -> 1514, LLM-like 974 -> 849 / 600 -> 465; B=1 Zipf 98.4 ->
# 82.6, LLM-like 37.8 -> 33.6; B=16 within 3 %; k100+p0.9 unchanged (a scalar top-k's geometry).  A row whose kept
# set needs more than 256 keys in a span misses (exact either way)
TOPP_SPAN_CAP = 256
# more rows than this: the cut has its own launch (cut_kernel).  H200 (9ca20df, select, LLM-like, B=64):
# top-p 0.9 236 -> 181 us with the cut in the span programs, top-k 50 51.6 us either way
CUT_PASS_MIN_ROWS = 64
STRIDED_MIN_ROWS = 16  # more rows than this: the span pass loads in the strided layout (option span_layout)
REG_SMALL = 512  # candidates searched in a small register tile (the common top-k case)
# the register search of the smallest tile (REG_SMALL) takes each round's lane statistics in one reduction of a
# tuple (kernels.lane_stats_fused: 3 barriers a round in the sm_90 SASS instead of 23-24); option fused_rounds.
# Same bits.  H200 (d2d06b4, docs/bench/h200-2026-12-01/session14/ call A, fp32, V=131072): select LLM-like top-k 50
# B=1024 294.7 -> 276.1 us, k100+p0.9 376.6 -> 338.3, B=64 62.4 -> 58.1; Gaussian k100+p0.9 B=1024 380.2 -> 342.7;
# sampler (V=128256) top-k 50 B=64 62.5 -> 58.5 us; Zipf and top-p alone within 1%.  Not under the interpreter
# (CPU tensors), whose reduction of a tuple is 10-20x slower than the block reductions (a select of 4 x 3000
# entries, k100+p0.9: 1.5 -> 30 s); tests/test_triton_backend.py runs the fused search there by its option
FUSED_ROUNDS = True
# default of the option radix_topk: the register tiles' top-k (REG_SMALL, REG_MID) by radix select, a 256-bin histogram
# of one key byte a round (kernels.radix_kth: 4 rounds for 32-bit keys, 2 for 16-bit) instead of the pivot search;
# the same bits (an order statistic).  Off: hardly faster where it wins, slower at B=1024 and on heavy tails.  H200
# (6e6f085, docs/bench/h200-2026-12-02/session17/ call C, LLM-like unless named, pivot -> radix, us): select top-k 50
# B=1 19.4 -> 19.0 (the finish 7.9 -> 7.4: its search is not what bounds it), B=64 33.5 -> 32.5, k100+p0.9 B=64
# 44.8 -> 43.4; Zipf top-k 50 B=1 30.6 -> 33.1, B=1024 658.8 -> 688.7; the sampler k100+p0.9 B=64 V=151936 65.3 ->
# 64.1, B=1024 536.4 -> 587.8
RADIX_TOPK = False
REG_MID = 4096  # a mid-size tile (heavy-tailed rows: e.g. ~2800 candidates for top-k 50 of Zipf logits)
CB = 1024  # keys per chunk of a search over memory (== SPAN_CAP: one chunk per span)
SCRATCH_BYTES = 12 << 20  # scratch budget per wave (candidates and partials)
MISS_PIVOTS = 15  # pivots per parallel miss round (16 lanes: 4 bits of key a round)
ROUND_BLOCK = 256  # entries per block of a miss round (one column of lane accumulators per entry)
# blocks loaded per iteration of a miss round (bytes in flight; the bits do not depend on it).  H200
# (6d6eaf6, select, top-p 0.9, B=1024): 4 -> 8 -> 16 gives Gaussian fp32 2776 -> 2715 -> 2684 us, bf16
# 2729 -> 2597 -> 2587 us, Zipf 2531 -> 2520 -> 2509 us; 8 takes most of it with half the loop code
ROUND_UNROLL = 8
# default of the option two_cuts (kernels.row_cut_key).  H200 (8c9b7bb, select, B=1024, V=131072): top-p 0.9
# LLM-like fp32 1746 -> 1273 us and bf16 1822 -> 1262 us (the rows hit), Zipf fp32 3182 -> 2818 us, top-p 0.5
# Zipf 2509 -> 2036 us, B=1 LLM-like 65.7 -> 55.0 us; slower where rows miss both ways: Gaussian top-p 0.9
# 3034 -> 3600 us, LLM-like top-p 0.5 1491 -> 1545 us (docs/bench/h200-2026-12-01/session7/)
TWO_CUTS = True
# the second cut gathers about rowcap // TWO_CUT_SHARE keys (option two_cut_share).  H200 (f1fd968, select,
# B=1024, V=131072, fp32; share 4 -> 32): top-p 0.9 LLM-like 1282 -> 667 us, Zipf 2788 -> 2573 us, Gaussian
# 3591 -> 3054 us; top-p 0.5 Zipf 2003 -> 1292 us (its rows now hit), Gaussian 2508 -> 2042 us, LLM-like
# 1524 -> 1526 us (docs/bench/h200-2026-12-01/session8/)
TWO_CUT_SHARE = 32
# default of the option sample_lanes (kernels.sample_taus).  H100 A/B (84d1834, session 31 call 2, select, B=1024,
# V=131072, CUDA-graph medians, default -> sample lanes, every differing answer checked against the oracle): top-p 0.9
# Gaussian fp32 2704 -> 1878 us, bf16 2571 -> 1811, Zipf fp32 2535 -> 2415, bf16 2328 -> 2290; top-p 0.99 Gaussian
# 2637 -> 1867, Zipf 2845 -> 2474; LLM-like (rows hit) 617.6 -> 616.1; B=16 Gaussian 179.3 -> 103.3, B=1 Gaussian
# 96.7 -> 80.9, B=1 Zipf 82.6 -> 85.9 (docs/bench/h100-2026-12-05/session31/)
SAMPLE_LANES = True
LANE_SAMPLES = 1024  # entries of the strided sample that places a top-p row's first miss lanes
# default of the option sample_cut (entries of the sample, 0 = off): above CUT_PASS_MIN_ROWS rows (cut_kernel), a
# top-k row's cut is raised to the order statistic of a sample (runs of 32 neighbours spread over the row) that
# leaves fewer than k candidates with probability below 1e-5 (kernels.sample_cut_key), where that is higher than
# the Gaussian cut: about 700 candidates for top-k 50 of 131072 on any distribution, against 1600-2800 for a Zipf
# row's Gaussian cut; a top-p row's second (gathering) cut likewise (Zipf top-p 0.9: about 1700 keys instead of
# 3800, interpreter).  H100 A/B, session 33 call 2 (select, V=131072, B=1024 fp32 unless said, CUDA-graph
# medians, the same bits; docs/bench/h100-2026-12-06/session33/): Zipf top-k 50 645.1 -> 435.7 us (2048: 383.1,
# 4096: 334.2), top-p 0.9 2413.5 -> 2071.6, top-p 0.5 1259.1 -> 851.9, k100+p0.9 881.2 -> 601.3, bf16 top-k 50
# 620.5 -> 420.6, B=256 top-k 50 304.7 -> 181.7; the cut kernel's extra work costs rows whose Gaussian cut is
# already tight 2-5 %: Gaussian / LLM-like top-k 50 284.8 -> 298.8 / 288.3 -> 301.8, LLM-like top-p 0.9 616.6 ->
# 633.3, k100+p0.9 407.5 -> 419.8 (single entries V // 1024 apart, call 1, cost them 40 us: a DRAM sector each)
SAMPLE_CUT = 1024
SAMPLE_CUT_CHOICES = (0, 512, 1024, 2048, 4096)
# default of the option sample_wide (entries, 0 = off; above sample_cut): a row whose sample_cut entries do not skip
# (at least n of them above the model cut: Zipf rows) takes the order statistic of this many entries instead
# (kernels.sample_cut_key), rows that skip (Gaussian, LLM-like) read only the first sample.  Session 35 call 1
# (H100, select, B=1024, fp32): sample_cut=4096 for every row gave Zipf top-k 50 436.8 -> 339.3 us, k100+p0.9
# 603.3 -> 471.9, bf16 top-k 50 423.6 -> 315.8, but Gaussian / LLM-like top-k 50 285.8 -> 297.0 / 290.1 -> 302.7
# (docs/bench/h100-2026-12-06/session35/).  Session 36 call 1 (H100, select, B=1024, --set samplewide): 4096
# kept Zipf's gain, top-k 50 458.2 -> 365.2 us, k100+p0.9 622.3 -> 487.3, bf16 446.4 -> 351.2, B=256 181.8 -> 132.5,
# masked fp32 829.7 -> 731.3, bf16 688.2 -> 585.7, while Gaussian / LLM-like top-k 50 stayed level (295.3 -> 297.8,
# 298.4 -> 298.0; Gaussian k100+p0.9 349.7 -> 360.2); 8192 no better (docs/bench/h100-2026-12-06/session36/)
SAMPLE_WIDE = 4096
# default of the option kp_softmax: a scalar top-k with a top-p computes the row's softmax partials
# and keeps the top-p geometry (True), or skips them and takes the top-k geometry (False, run_select)
KP_SOFTMAX = False
# a top-k (alone, or a scalar one with a top-p: the top-k geometry) over at most this many rows: each
# miss round's last program of a row runs the row's update (option fold_updates; kernels.last_of_row),
# one launch a round instead of two, the same bits.  The folded round needs 255 registers a thread
# (sm_90, Triton 3.6; 77 alone), one program an SM.  H200 (select, V=131072, fp32,
# docs/bench/h200-2026-12-01/session10/): LLM-like top-k 50 B=1 27.3 -> 23.2 us, B=16 32.2 -> 31.7, B=64
# 50.4 -> 86.7 with the finish folded too (registers); k100+p0.9 B=1 32.2 -> 28.2 (finish folded too);
# top-p 0.9 hits B=1 45.6 -> 41.6, but misses got slower (Gaussian B=1 114.9 -> 138.2), so a top-p alone
# keeps the separate updates.  The option fold_finish (the span pass's last program runs the finish)
# gained nothing at B=1 and lost at B=16 (top-k 50 31.7 -> 47.3 us).
FOLD_MAX_ROWS = 16
# default of the option row_loop: under row_rounds, one launch runs every row-mode miss round of a wave, the same
# bits.  H200 (eca5dc6, docs/bench/h200-2026-12-02/session16/ call A, LLM-like, fp32, off -> on): select top-k 50
# V=131072 B=64 39.9 -> 35.3 us, B=1024 294.7 -> 246.4; the sampler at B=64 k100+p0.9 V=151936 72.0 -> 67.1,
# V=128256 64.8 -> 60.0, top-k 50 61.5 -> 56.8, 54.4 -> 49.7
ROW_LOOP = True
# a top-k with a top-p over more than this many rows keeps the span grid for its miss rounds (row_rounds off): under
# row_rounds a row that misses runs its rounds in one program, about 50-70 us a round at V=131072.  H200 (97130fa,
# session16/ call B, sweep_triton.py --set kp_harness, select k100+p0.9, B=1024, the harness's LLM-like rows, 1 of
# 1024 missing): 573.8 us with row_rounds, 391.3 without; Zipf (2 of 1024 missing, session15/ call B) 1298 -> 998
ROW_ROUNDS_KP_MAX_ROWS = 64
# default of the option fold_ties: the row tie pick in the tie count launch, the same index.  H200 (eca5dc6,
# session16/ call A, the sampler, LLM-like, B=64, off -> on): k100+p0.9 V=151936 67.4 -> 67.1 us, V=128256 61.0 ->
# 60.0; top-k 50 57.1 -> 56.8, 50.3 -> 49.7
FOLD_TIES = True
# default of the option fold_pick (sampling): the pick of a token drawn from the row in the launch of its parts, the
# same token.  H200 (97130fa, session16/ call B, the sampler, LLM-like, B=64, off -> on): k100+p0.9 V=151936 66.0 ->
# 65.2 us, V=128256 61.0 -> 59.7; top-k 50 54.6 -> 53.4, 50.1 -> 48.6; B=1024 k100+p0.9 518.7 -> 519.3
FOLD_PICK = True
# default of the option fuse_draw (sampling): the draw from the slot in the slot tie kernel.  Off: no faster, one
# launch fewer notwithstanding (H200, the sampler, LLM-like, B=64, off -> on; eca5dc6, session16/ call A: k100+p0.9
# V=151936 65.8 -> 67.1 us, V=128256 60.2 -> 60.0, top-k 50 54.0 -> 56.8, 49.7 -> 49.7; 97130fa, call B: 65.2 ->
# 64.7, 59.7 -> 57.8, 53.4 -> 52.2, 48.6 -> 48.1): within the noise of one call to the next
FUSE_DRAW = False
# masking: cut tie groups of rows that hit resolved from the slot, not counted from the row (option slot_ties)
SLOT_TIES = False
# default of the option scatter: masking writes a row that hit (and keeps no zero) with the mask value and then its
# kept candidates from the slot, with their token indices (kernels.scatter_kernel): one write of the row, no read.
# Measured slower in session 5 (H200, e6f7768: top-k 50 fp32 B=1024 728 -> 960 us), when the token indices halved
# the rows a wave; sweep_triton.py --set scatter measures it again with smaller slots (option span_cap)
SCATTER = False
# default of the option streams: a call's waves alternate over this many CUDA streams (1 or 2), each with its own
# scratch (half the wave's rows each, so the scratch stays within SCRATCH_BYTES), so that one wave's one-program-a-row
# kernels (cut, finish, updates, tie pick) and compute-bound miss rounds run beside another wave's row passes; the
# same bits (no kernel depends on another wave).  Off until sweep_triton.py --set streams has measured it (session 35)
STREAMS = 1
# defaults of the options mask_reverse and tie_reverse, by key width: the mask of 32-bit rows and the tie counts of
# 16-bit rows run their grids from the end (kernels.grid_cell), so that their first programs read the bytes that
# the pass before them read last, from L2.  H200 (012726e, docs/bench/h200-2026-12-02/session18/ call A, masked out
# of place, B=1024, V=131072): fp32 with mask_reverse top-k 50 Gaussian / LLM-like / Zipf 901 -> 868, 639 -> 606,
# 1064 -> 1022 us, k100+p0.9 LLM-like 706 -> 670, top-p 0.9 LLM-like 1039 -> 997; bf16 top-k 50 (nearly every row
# counts a cut tie group first) with tie_reverse Gaussian 1022 -> 1009, LLM-like 715 -> 707, but with mask_reverse
# 1022 -> 1128 and 715 -> 820 (not understood).  Smaller waves (wave_rows 192, 96) were 10-120% slower
MASK_REVERSE_WIDTHS = (32,)
TIE_REVERSE_WIDTHS = (16,)
# default of the option pdl on NVIDIA sm_90+ (pdl_capable): every kernel of a wave is launched with programmatic
# dependent launch, waits for the kernel before it in its first statement and then lets the next one launch
# (kernels.pdl_start), so that a launch overlaps the drain of the kernel before it; the same bits.  H200 (f9e2089,
# docs/bench/h200-2026-12-02/session18/ call B, CUDA-graph medians, LLM-like fp32 V=131072 unless noted, off -> 1 ->
# 2): select top-k 50 B=1 19.5 -> 17.6 -> 17.6 us (Gaussian 18.2 -> 17.9 -> 16.6), masked 23.1 -> 22.2 -> 20.6;
# top-p 0.9 B=1 37.8 -> 36.5 -> 34.4; top-k 50 B=16 27.7 -> 27.2 -> 26.1; the sampler k100+p0.9 B=64 V=151936
# 64.0 -> 60.7 -> 60.0; top-k 50 B=1024 select 244.6 -> 240.2 -> 240.8, masked 601.8 -> 601.1 -> 597.4
PDL = 2
# default of the option chain_rounds: the span-grid miss rounds of the folded path (fold_updates: a top-k at B <=
# FOLD_MAX_ROWS) in one launch of n_spans * n_rounds programs a row, which take their (round, span) from a row ticket
# and wait for the previous round's update (kernels.round_kernel CHAIN); the same bits.  A row that hit costs one
# launch of no-op programs instead of n_rounds launches (B=1 top-k 50 select: four round launches, 4.3 us of kernel
# time, session 22 call C).  H200 A/B (docs/bench/h200-2026-12-05/session23/ call B, CUDA-graph medians, V=131072,
# default -> chain, same bits in all 29 cases): B=1 top-k 50 select LLM-like 16.8 -> 15.6 us, Gaussian 16.3 -> 14.5,
# Zipf 22.9 -> 20.9; masked 20.4 -> 18.5 (LLM-like); k100+p0.9 select 20.4 -> 18.8.  But B=16 top-k 50 +2.2 to
# +4.1 us, and a row that misses pays its spinning programs (B=1 truncation off 50.7 -> 55.0, B=16 110 -> 127).
# So on by default only for one row with truncation (CHAIN_MAX_ROWS), where most rows hit; None = that rule
CHAIN_ROUNDS = None
# programs of a row-mode round launch (option row_programs; 0: one a row).  Fewer programs that take several rows
# each were meant to cheapen the no-op round launch of a wave of rows that hit (about 8 us of graph time a wave of
# 512 rows on the H200, row_loop's A/B, docs/bench/h200-2026-12-01/session16/ call A), but measured level on an H100
# (84d1834, session 31 call 1, select, 264 programs -> one a row: top-k 50 B=1024 LLM-like 288.1 -> 289.1 us,
# Gaussian 284.8 -> 285.3, Zipf 657.7 -> 651.3; B=256 88.7 -> 88.0; truncation off 1583.1 -> 1583.5): off
ROW_PROGRAMS = 0
CHAIN_MAX_ROWS = 1


def miss_rounds(width: int) -> int:
    """Parallel miss rounds launched per wave; a row still open after them finishes in one program.

    Each round narrows the key range 16-fold, or gathers the keys left in it once
    their exact count fits the row's slot.  Four rounds for every width: with
    three, 16-bit rows of Gaussian or Zipf logits under top-p 0.9 (V=131072) were
    still open and took the one-program finish (found in the interpreter; bf16
    Gaussian top-p 0.9 at B=1 took 1389 us on the H200 with three rounds).
    """
    return 4


WARPS = (1, 2, 4, 8, 16, 32)
MAXNREG = (64, 80, 96, 128, 168, 200, 255)  # option search_maxnreg (NVIDIA; other targets ignore it)
# default of search_maxnreg for the top-k geometry (a top-k alone, or a scalar one with a top-p) over more than
# SEARCH_MAXNREG_MIN_ROWS rows: the finish's programs then run two an SM instead of one (ptxas spills 672 bytes
# a thread).  H200 (d2d06b4, session14/ call A, select, B=1024, fp32, V=131072): top-k 50 LLM-like / Gaussian
# / Zipf 294.7 / 287.3 / 724.3 -> 267.4 / 261.8 / 692.3 us, k100+p0.9 376.6 / 380.2 / 1063.0 -> 324.6 / 328.4 /
# 1005.0; within 1% at B=64; a top-p alone keeps no cap (Gaussian top-p 0.9 B=1024 2685 -> 2775 us: the updates
# spill)
SEARCH_MAXNREG = 128
SEARCH_MAXNREG_MIN_ROWS = 64


def _register_cap(maxnreg: int) -> dict:
    """Launch keywords for a register cap (0: none).  Triton's AMD backend has no such option: it raises."""
    return dict(maxnreg=maxnreg) if maxnreg and torch.version.hip is None else {}


SPAN_WARPS = 8
# a scalar top-k with a top-p whose slot keeps token indices (sampling), over STRIDED_MIN_ROWS < B <= CUT_PASS_MIN_ROWS
# rows: four-warp span programs.  H200, sampler k100+p0.9, LLM-like, B=64, V=151936: 92.4 -> 83.4 us (40976fc,
# docs/bench/h200-2026-12-01/session11/), 91.7 -> 83.5 (session12/), 80.0 -> 71.3 (ea85c49,
# docs/bench/h200-2026-12-02/session15/ call B, where this span pass took 43.9 us against 32.9 for select's, which
# keeps no indices), 81.1 -> 72.1 (call C; V=128256 65.0 -> 65.5, no gain); top-k 50 alone 58.9 -> 59.6 us (so
# eight warps there), select k100+p0.9 32.9 -> 32.5 us of span pass.  Why eight warps lose here is not known:
# Triton 3.6 gives this variant and the top-k sampler's the same 48 registers a thread at eight warps (five
# programs an SM: 660 places for the 640 programs of 64 rows at V=151936), 72 at four
KP_IDX_SPAN_WARPS = 4


def span_warps_of(B: int, kp: bool, with_idx: bool) -> int:
    """Warps of a span-pass program (the option span_warps when given; no bit depends on it)."""
    if kp and with_idx and STRIDED_MIN_ROWS < B <= CUT_PASS_MIN_ROWS:
        return KP_IDX_SPAN_WARPS
    return SPAN_WARPS


def pdl_capable(dev: torch.device) -> bool:
    """Whether kernels on ``dev`` may take programmatic dependent launch: a CUDA (not ROCm) device of
    compute capability 9.0 or later, not under the interpreter."""
    from . import _interpreted

    if dev.type != "cuda" or torch.version.hip is not None or _interpreted():
        return False
    return torch.cuda.get_device_capability(dev)[0] >= 9


def two_cut_share_of(span_cap: int) -> int:
    """The second cut's default share for a top-p slot of ``span_cap`` keys a span: TWO_CUT_SHARE scaled with the
    slot, so that the cut targets as many keys as with SPAN_CAP (rowcap // share keys)."""
    return max(1, TWO_CUT_SHARE * span_cap // SPAN_CAP)


def span_of(V: int, B: int, wide: bool, top_k_only: bool = False, k: int | None = None,
            top_p: bool = False) -> tuple[int, int]:
    """(entries per span, slot keys per span) (one span for V <= span).

    A small scalar top-k alone over many rows (``wide``) takes spans twice as
    long: half the programs, and the slot of ``n_spans * SPAN_CAP`` keys still
    holds several times what its cut gathers (H200, top-k 50, Zipf, B=1024,
    V=131072: 862 -> 720 us).  Top-p cuts gather more, and small batches need
    the programs.  A top-k alone over at most SMALL_SPAN_MAX_ROWS rows of more than MAX_SPAN takes
    spans of SMALL_SPAN, four times the programs, with the slot per span cut in
    proportion so that a row's slot stays ``V / 16`` keys (H200, 9ca20df, select,
    top-k 50, LLM-like, V=131072: B=1 38.8 -> 27.4 us, B=16 41.7 -> 32.4 us; at
    B=64 the default is faster).  For top-k the span changes no bit: counts are
    exact and every consumer of the slot is order-independent.  A top-p request
    keeps one span whatever B is: its softmax partials are float sums over spans.
    The wide geometry of a scalar ``k`` of at most WIDE_CAP_MAX_K keeps WIDE_SPAN_CAP
    slot keys a span (a row that gathers more misses, and stays exact).  The top-p
    geometry (``top_p``) keeps TOPP_SPAN_CAP whatever B is.
    """
    if top_p:
        return MAX_SPAN, TOPP_SPAN_CAP
    if wide and B >= WIDE_SPAN_MIN_ROWS:
        return WIDE_SPAN, WIDE_SPAN_CAP if k is not None and k <= WIDE_CAP_MAX_K else SPAN_CAP
    if top_k_only and B <= SMALL_SPAN_MAX_ROWS and V > MAX_SPAN:
        return SMALL_SPAN, SPAN_CAP * SMALL_SPAN // MAX_SPAN
    return MAX_SPAN, SPAN_CAP


@functools.lru_cache(maxsize=16)
def _luts(device: str):
    return (
        torch.tensor(TOPK_DELTA, dtype=torch.float32, device=device),
        torch.tensor(TOPP_DELTA, dtype=torch.float32, device=device),
    )


FLT_MIN = 2.0**-126  # the smallest normal float32


def planned_p(p: float) -> float:
    """The scalar ``p`` as the kernels read it (a float32), so that the plan (which kernels run, which row
    statistics they keep) and the kernels agree on whether a row cuts.  Per-row p needs nothing: the plan does
    not read its values.

    - A p in (0, FLT_MIN) is 0 or subnormal in float32: 5e-324 was planned as a top-p and run as p <= 0 (no count
      of the maximum's ties: a wrong answer).  Raised to FLT_MIN, both see a top-p, with the same answer (the best
      token alone holds at least 1/V of the mass).
    - A p in (1 - 2**-25, 1) is 1.0 in float32, which the kernels take as no top-p (every keepable entry: the
      smallest key and its count needed), while the plan took a top-p that cuts (``all_search``: nobody needs the
      smallest key), and the threshold came back -FLT_MAX with no ties (found by the property test, session 43:
      three rows of zeros, p = 0.9999999999999998).  Rounded, keeping every entry is within SPEC's top-p window.
    """
    if 0.0 < p < FLT_MIN:
        return FLT_MIN
    if FLT_MIN <= p < 1.0:
        return float(np.float32(p))
    return p


def _per_row(value, B: int, device, dtype):
    """(mode, tensor, scalar): 0 = absent, 1 = scalar, 2 = per-row tensor."""
    if value is None:
        return 0, None, 0
    if isinstance(value, (int, float)):
        return 1, None, value
    return 2, value.to(device=device, dtype=dtype).contiguous(), 0


class WaveScratch(NamedTuple):
    """The scratch of the waves that one stream runs (``run_select``): every buffer is indexed by the row's slot in
    its wave and left as the next wave needs it (the counters and tickets at zero)."""

    cand: torch.Tensor  # int32 [wave, n_spans, span_cap]: each row's candidate slot
    cidx: torch.Tensor  # ... their token indices (masking from the slot, sampling), else cand
    part_i: torch.Tensor  # int64 [wave, n_spans, 8]: span partials
    part_f: torch.Tensor  # float32 [wave, n_spans, 4]
    rpart_i: torch.Tensor  # int32 [wave, n_spans, npm]: miss-round partials (then the tie counts)
    rpart_f: torch.Tensor  # float32 [wave, n_spans, npm]
    part_low: torch.Tensor  # int64 [wave, n_spans, 2] (two cuts: counts above the low cut), else part_i
    cut: torch.Tensor  # int64 [wave, 2]: (gathering cut, low cut) keys
    ctr: torch.Tensor  # int32 [wave] zeros: slot counters
    ticket: torch.Tensor  # int32 [wave] zeros: round tickets (fold_updates)
    chain_tk: torch.Tensor  # int32 [wave] zeros (chain_rounds), else ctr
    chain_done: torch.Tensor  # int32 [wave] zeros (chain_rounds), else ctr
    pick_ticket: torch.Tensor | None  # int32 [sample_wave(B, V)] zeros: run_sample's row tickets (fold_pick)


def _wave_scratch(wave: int, n_spans: int, span_cap: int, npm: int, with_idx: bool, two_cuts: bool, pick: bool,
                  chain: bool, B: int, V: int, dev) -> WaveScratch:
    """One stream's :class:`WaveScratch` for waves of ``wave`` rows."""
    cand = torch.empty((wave, n_spans, span_cap), dtype=torch.int32, device=dev)
    part_i = torch.empty((wave, n_spans, 8), dtype=torch.int64, device=dev)
    # a row's slot counter (atomic positions in its compact candidate slot): zero here;
    # every kernel that uses it leaves it at zero for the next (span pass -> finish ->
    # rounds -> updates -> next wave)
    # and each row's round ticket (option fold_updates: the round's last program of a row runs
    # its update), left at zero the same way; one fill for both
    # (sampling, fold_pick) and the tickets of run_sample's part programs, one a row of its wave
    n_pick = sample_wave(B, V) if pick else 0
    # (chain_rounds) each row's round tickets and the count of its rounds updated, in the same fill
    n_chain = 2 * wave if chain else 0
    ctrs = torch.zeros(2 * wave + n_pick + n_chain, dtype=torch.int32, device=dev)
    ctr = ctrs[:wave]
    return WaveScratch(
        cand=cand,
        cidx=torch.empty((wave, n_spans, span_cap), dtype=torch.int32, device=dev) if with_idx else cand,
        part_i=part_i,
        part_f=torch.empty((wave, n_spans, 4), dtype=torch.float32, device=dev),
        rpart_i=torch.empty((wave, n_spans, npm), dtype=torch.int32, device=dev),
        rpart_f=torch.empty((wave, n_spans, npm), dtype=torch.float32, device=dev),
        part_low=torch.empty((wave, n_spans, 2), dtype=torch.int64, device=dev) if two_cuts else part_i,
        cut=torch.empty((wave, 2), dtype=torch.int64, device=dev),
        ctr=ctr,
        ticket=ctrs[wave:2 * wave],
        chain_tk=ctrs[2 * wave + n_pick:3 * wave + n_pick] if chain else ctr,
        chain_done=ctrs[3 * wave + n_pick:] if chain else ctr,
        pick_ticket=ctrs[2 * wave:2 * wave + n_pick] if pick else None,
    )


_SIDE_STREAMS: dict = {}


def _fork_streams(dev, n: int) -> list:
    """The streams a call's waves alternate over (option ``streams``): [] for one (the current stream, nothing
    forked) or off CUDA; else the current stream and a side stream of the device (one per device, kept), which
    first waits for the current one (what it has queued: the inputs, the scratch's zero fill), so that a CUDA
    graph capture forks into it."""
    if n == 1 or dev.type != "cuda":
        return []
    main = torch.cuda.current_stream(dev)
    side = _SIDE_STREAMS.get(dev)
    if side is None:
        side = _SIDE_STREAMS[dev] = torch.cuda.Stream(dev)
    side.wait_stream(main)
    return [main, side]


def _join_streams(streams: list) -> None:
    """Back on the call's stream, which waits for the side stream's waves (a capture joins it there)."""
    if streams:
        torch.cuda.set_stream(streams[0])
        streams[0].wait_stream(streams[1])


def run_select(x: torch.Tensor, req: Request, *, mask: tuple | None = None, states: torch.Tensor | None = None):
    """Launch the selection kernels; returns (SelectResult in torch, aux for sampling).

    ``select`` alone stops at the thresholds.  Masking and sampling also need, for
    rows whose tie group is cut, the index of the last kept tie, and they use each
    candidate's token index, kept beside its key in the wave's slot:

    - ``mask = (mask_value, target)``: write the masked logits into ``target``
      (``x`` itself in place).  With the option ``scatter``, a row that hit is
      filled with ``mask_value`` and its kept candidates are written back from the
      slot (one write of the row, no read); otherwise every row is read and masked.
    - ``states`` (int64 ``[B]`` stream states of ``qrita.core.rng``): draw each row
      that hit from its slot; ``run_sample`` draws the other rows from the row.
    """
    B, V = req.B, req.V
    dev = x.device
    kc = KEY_CONSTANTS[req.dtype]
    opts = req.options
    num_pivots = int_option(opts, "num_pivots", NUM_PIVOTS)
    np_lanes = triton.next_power_of_2(num_pivots + 1)
    truncation = bool(opts.get("truncation", True))
    npm = triton.next_power_of_2(int_option(opts, "miss_pivots", MISS_PIVOTS) + 1)
    n_rounds = int_option(opts, "miss_rounds", miss_rounds(kc.width))
    span_warps_opt = int_option(opts, "span_warps", 0, choices=WARPS)  # 0: the default below (span_warps_of)
    round_warps = int_option(opts, "round_warps", 8, choices=WARPS)
    # top-p miss rounds accumulate lane masses, not lane counts.  H200 sweeps, top-p 0.9, B=1024: fp32 Zipf
    # 4950 -> 3354 us (e0a14ca); bf16 Gaussian / LLM-like / Zipf 4539 / 2489 / 4960 -> 3337 / 2044 / 3562 us (8e158f5)
    mass_lanes = bool(opts.get("mass_lanes", True))
    # top-p rows whose model predicts a slot overflow gather above a second, count-based cut
    # (kernels.row_cut_key)
    two_cuts_opt = bool(opts.get("two_cuts", TWO_CUTS))
    # the second cut's target, a power of two: rowcap // share keys (fewer keys to append, a higher bar
    # for the mass above it)
    two_cut_share = int_option(opts, "two_cut_share", two_cut_share_of(TOPP_SPAN_CAP), pow2=True)
    # miss-round lanes half in key, half in value (kernels.lane_taus); an option: slower on the H200 in most
    # cases (8c9b7bb: LLM-like top-p 0.9 1746 -> 2399 us)
    value_lanes = bool(opts.get("value_lanes", False)) and npm >= 4
    # a top-p row's first miss round with lanes at ranks of a strided sample of the row around the sample's
    # estimate of the boundary (kernels.sample_taus); the later rounds take value lanes.  Counted on the
    # kernels (benchmarks/miss_rounds.py, interpreter, V=131072, fp32 and bf16): Gaussian top-p 0.9 and 0.99
    # rows are answered in round 2 (an evaluating round, then the gather) instead of round 4, Zipf top-p 0.99
    # in round 2 instead of 3, Zipf top-p 0.9 in round 2 either way (a smaller gather).  By default for a top-p
    # alone (the rows that take the sample lanes, and what the H100 A/B measured); with a top-k the rows' rounds
    # would take value lanes, not measured there: the option turns it on for any request
    sample_default = SAMPLE_LANES and req.p is not None and req.k is None
    sample_lanes = bool(opts.get("sample_lanes", sample_default)) and npm >= 4
    # a top-k row's cut no lower than a sample's order statistic (kernels.sample_cut_key; cut_kernel only)
    sample_cut = int_option(opts, "sample_cut", SAMPLE_CUT, choices=SAMPLE_CUT_CHOICES)
    sample_cut = sample_cut if (req.k is not None or two_cuts_opt) and truncation else 0
    # a larger sample for the rows whose first sample does not skip (kernels.sample_cut_key)
    sample_wide = int_option(opts, "sample_wide", SAMPLE_WIDE, choices=SAMPLE_CUT_CHOICES + (8192,))
    sample_wide = sample_wide if sample_wide > sample_cut > 0 else 0
    # CUDA streams the waves alternate over (each with a scratch of its own; with one, no stream is forked)
    n_streams_opt = int_option(opts, "streams", STREAMS, choices=(1, 2))
    # entries per program of the mask pass (option mask_block; the same bits)
    mask_block = int_option(opts, "mask_block", MASK_BLOCK, choices=MASK_BLOCK_CHOICES)
    value_lanes = value_lanes or sample_lanes
    # span-pass slot appends: one atomic per selected entry (0, the default; ptxas aggregates them per warp),
    # or per column of AGG entries (kernels.append_keys).  H200 (b1e6232): AGG=256 (one atomic per thread
    # and block) is slower, e.g. Zipf top-k 50 733 -> 782 us
    append_agg = int_option(opts, "append_agg", 0, pow2=True) if opts.get("append_agg") else 0
    # span-pass slot stores one iteration after their atomics (kernels.span_kernel, DEFER): the loop
    # need not wait for the atomics' results.  Slower on the H200 in all five cases (f1fd968, select,
    # B=1024): Zipf top-k 50 728 -> 833 us, LLM-like top-p 0.9 1271 -> 1645 us; so off
    append_defer = bool(opts.get("append_defer", False))
    # span-pass load layout (the bits do not depend on it): "strided" (one entry per thread per
    # load, adjacent threads) is the layout of the slot atomics and stores, so the loop has no
    # shared-memory layout conversion; with "vector" (4 adjacent entries per thread) Triton 3.6
    # converts keys and masks through shared memory, 3 barriers an iteration (sm_90 SASS, top-k
    # fp32 loop: 243 -> 220 instructions, bf16 295 -> 244).  H200 (c41af12, select, B=1024): Gaussian
    # top-k 50 fp32 437 -> 373 us, bf16 540 -> 400 us, LLM-like top-p 1867 -> 1788 us, bf16 Zipf
    # top-p 3554 -> 3380 us; slower on Zipf top-k 734 -> 789 us and at B=1 (45 -> 54 us), where the
    # span programs also compute the cut and keep conversions either way.  So: strided above
    # STRIDED_MIN_ROWS rows, vector below.
    span_layout = opts.get("span_layout")
    if span_layout is None:
        span_layout = "strided" if B > STRIDED_MIN_ROWS else "vector"
    if span_layout not in ("strided", "vector"):
        raise QritaValueError(
            f"options['span_layout'] must be 'strided' or 'vector' (or left out for the default), got {span_layout!r}")

    thr_key = torch.empty(B, dtype=torch.int64, device=dev)
    thr_bits = torch.empty(B, dtype=torch.int32, device=dev)
    num_ties = torch.empty(B, dtype=torch.int32, device=dev)
    count = torch.empty(B, dtype=torch.int32, device=dev)
    hit = torch.empty(B, dtype=torch.int8, device=dev)
    cut_idx = torch.empty(B, dtype=torch.int64, device=dev)
    state_i = torch.empty((B, kernels.ST_I.value), dtype=torch.int64, device=dev)
    state_f = torch.empty((B, 4), dtype=torch.float32, device=dev)
    # value_lanes: each open row's lanes for its next miss round, written by the finish and the updates
    lanes = torch.empty((B, npm) if value_lanes else (1,), dtype=torch.int64, device=dev)
    sampling = states is not None
    # fill-and-scatter masking (option "scatter", default SCATTER)
    scatter = mask is not None and bool(opts.get("scatter", SCATTER))
    # masking that resolves a cut tie group of a row that hit from its slot (slot_ties_kernel, as sampling and
    # scatter do): the span pass stores each candidate's token index beside its key, and only the rows left
    # TIE_PENDING (misses, groups over TIE_TILE) count their ties from the row (tie_count_kernel: another read
    # of every such row, the bf16 masking's third pass; session 29, H200: 224 of 953 us at B=1024).  The same
    # index, so the same bits; an option (SLOT_TIES) until a GPU A/B decides the default
    slot_ties = mask is not None and bool(opts.get("slot_ties", SLOT_TIES))
    with_idx = sampling or scatter or slot_ties
    tokens = torch.empty(B, dtype=torch.int64, device=dev) if sampling else None
    # sampling: the slot tie kernel draws the rows that hit and whose last kept tie it knows (drawn: int8, 1 for
    # them), one launch fewer than a draw of its own after the row tie kernels (option fuse_draw; the same tokens:
    # the other rows, a hit with a tie group too large for the slot among them, are drawn from the row)
    fuse_draw = sampling and bool(opts.get("fuse_draw", FUSE_DRAW))
    drawn = torch.empty(B, dtype=torch.int8, device=dev) if fuse_draw else hit
    if B > 0:
        k_mode, k_t, k_s = _per_row(req.k, B, dev, torch.int64)
        p_mode, p_t, p_s = _per_row(req.p, B, dev, torch.float32)
        # fixed Python types: one compiled signature whatever the request
        k_s = max(min(int(k_s), 2**62), -(2**62))
        p_s = planned_p(float(p_s))
        # fixed pointer types whatever the request (one compiled signature)
        k_ptr = k_t if k_t is not None else thr_key
        p_ptr = p_t if p_t is not None else state_f
        topk_lut, topp_lut = _luts(str(dev))
        # test/ablation knobs (powers of two): small spans drive the split-row and
        # buffer paths at interpreter-sized V
        # a scalar top-k that every row applies (1 <= k < V), with a top-p: the top-p runs over the
        # top-k survivors, so the span pass needs no softmax partials (kernels.span_kernel ROW_Z), and
        # no bit depends on the span, as for a top-k alone.  The option kp_softmax keeps them (and the
        # top-p geometry): the path before the eighth session, for A/B runs.
        kp = p_mode != 0 and k_mode == 1 and 1 <= k_s < V and not opts.get("kp_softmax", KP_SOFTMAX)
        topk_geometry = p_mode == 0 or kp  # no bit depends on the span
        span_warps = span_warps_opt or span_warps_of(B, kp, with_idx)
        # each row's update run by the last program of its miss round, and (an option, slower) its finish
        # by the last program of its span pass (FOLD_MAX_ROWS); the same bits
        fold = bool(opts.get("fold_updates", topk_geometry and B <= FOLD_MAX_ROWS))
        # one program a row runs each miss round over the row's spans, then its update (round_kernel ROW_MODE;
        # it takes the place of fold_updates): above FOLD_MAX_ROWS rows for the top-k geometry with truncation,
        # whose rows rarely miss; the same bits.  H200 (f294f7a, docs/bench/h200-2026-12-01/session14/ call C,
        # select, fp32, V=131072): LLM-like top-k 50 B=64 45.8 -> 36.8 us, B=1024 259.5 -> 238.3; k100+p0.9 B=64
        # 56.8 -> 48.4; a row that misses runs its rounds in one program: Zipf k100+p0.9 B=1024 (2 of 1024 rows
        # miss) 996.4 -> 1290.0 us
        # ... but not for a top-k with a top-p over more than ROW_ROUNDS_KP_MAX_ROWS rows (a batch that large
        # likely holds a row that misses, and its rounds in one program cost more than the launches save)
        row_rounds = bool(opts.get("row_rounds", topk_geometry and truncation and B > FOLD_MAX_ROWS
                                   and (not kp or B <= ROW_ROUNDS_KP_MAX_ROWS)))
        fold = fold and not row_rounds
        # the folded span-grid rounds of a wave in one launch (round_kernel CHAIN; it runs the folded update, so it
        # turns fold_updates on); the same bits
        chain_default = topk_geometry and truncation and B <= CHAIN_MAX_ROWS if CHAIN_ROUNDS is None else CHAIN_ROUNDS
        chain = bool(opts.get("chain_rounds", chain_default)) and not row_rounds
        fold = fold or chain
        # (options, not measured yet) how many leading rounds keep the span grid under row_rounds (a row that
        # misses gets its first round over all spans in parallel), and the row-mode rounds' own register cap
        # (by default the searches' cap below)
        span_rounds_first = int_option(opts, "span_rounds_first", 0)
        # the row-mode rounds of a wave in one launch: each program runs its row's rounds one after the other
        # (round_kernel n_loop), the same bits; a launch, not rounds, is what a wave of rows that hit pays
        row_loop = bool(opts.get("row_loop", ROW_LOOP))
        # the row-mode rounds' programs: each takes the wave's rows g, g + G, ... (round_kernel ROW_MODE), so that a
        # wave of rows that hit costs G programs, not one a row (0: one a row); the same bits
        row_programs = int_option(opts, "row_programs", ROW_PROGRAMS, minimum=0)
        # the pick of a cut tie from the row by the last program of its row's tie counts (kernels.tie_count_kernel
        # FOLD), one launch for both; the same index
        fold_ties = bool(opts.get("fold_ties", FOLD_TIES))
        # run_sample: the token of a row drawn from the row by the last of its part programs (kernels.sample_kernel
        # FOLD), one launch for both; the same token
        fold_pick = bool(opts.get("fold_pick", FOLD_PICK))
        fold_finish = bool(opts.get("fold_finish", False))
        # L2 reuse between passes over a wave (the same bits: no consumer depends on the order of programs): a pass
        # over the grid in reverse order first reads what the pass before it read last.  mask_reverse: the mask;
        # tie_reverse: the row tie counts; round_alternate: the span-grid miss rounds, the first reversed (it
        # follows the span pass), the next forward, and so on.  wave_rows: at most this many rows a wave (the
        # wave's rows are then a smaller share of the bytes through L2)
        mask_reverse = bool(opts.get("mask_reverse", kc.width in MASK_REVERSE_WIDTHS))
        tie_reverse = bool(opts.get("tie_reverse", kc.width in TIE_REVERSE_WIDTHS))
        round_alternate = bool(opts.get("round_alternate", False))
        # value_cmp: the mask (1), or the mask and the tie counts (2), compare float32 values against scalars made
        # once a program from the threshold key (kernels.kept_values), instead of keys (several integer steps and
        # 64-bit compares an entry); the same bits
        value_cmp = int_option(opts, "value_cmp", VALUE_CMP, choices=(0, 1, 2))
        keys_kw = dict(KEY_NEG_INF=kc.key_neg_inf, KEY_POS_INF=kc.key_pos_inf)
        mask_cmp_kw = dict(VALUE_CMP=True, **keys_kw) if value_cmp >= 1 else {}
        tie_cmp_kw = dict(VALUE_CMP=True, **keys_kw) if value_cmp >= 2 else {}
        wave_rows = int_option(opts, "wave_rows", B)
        # programmatic dependent launch (NVIDIA sm_90+): each kernel of a wave launches while the one before it
        # drains and waits in kernels.pdl_start (1), or also lets the next one launch once it runs (2); no bit
        # depends on it.  Elsewhere (ROCm, older GPUs, the interpreter) the option is ignored
        pdl = int_option(opts, "pdl", PDL, choices=(0, 1, 2))
        pdl = pdl if pdl_capable(dev) else 0
        pdl_kw = dict(PDL=pdl, launch_pdl=True) if pdl else {}
        # slot entries a step of the draw from the slot (option sample_chunk; the same token)
        sample_chunk = int_option(opts, "sample_chunk", SAMPLE_SLOT_CHUNK, pow2=True)
        wide = topk_geometry and k_mode == 1 and k_s <= WIDE_SPAN_MAX_K
        auto_span, auto_cap = span_of(V, B, wide, top_k_only=topk_geometry and k_mode != 0, k=k_s if wide else None,
                                      top_p=not topk_geometry)
        span = int_option(opts, "span", auto_span, pow2=True)
        # a span given as an option keeps the default slot per span unless span_cap is given too
        span_cap = int_option(opts, "span_cap", auto_cap if opts.get("span") is None else SPAN_CAP, pow2=True)
        block = min(int_option(opts, "span_block", BLOCK, pow2=True), span)
        round_block = min(int_option(opts, "round_block", ROUND_BLOCK, pow2=True), span)
        round_unroll = min(int_option(opts, "round_unroll", ROUND_UNROLL, pow2=True), span // round_block)
        cb = min(CB, span_cap)
        n_spans = triton.cdiv(V, span)
        n_spans_p2 = max(2, triton.next_power_of_2(n_spans))
        slots = n_spans_p2 * span_cap  # the register search loads every slot of a row
        reg_cap = int_option(opts, "reg_cap", slots, pow2=True)
        search_warps = int_option(opts, "search_warps", 8, choices=WARPS)
        # a register cap for the one-program-a-row searches in launches of their own (finish, updates, the
        # rounds of row_rounds; not when folded into the span pass or a span round): the finish takes 255
        # registers a thread (sm_90, Triton 3.6: its largest register tile), one program an SM; 128 allows
        # two (ptxas spills the rest).  On by default for the top-k geometry above SEARCH_MAXNREG_MIN_ROWS rows
        capped = topk_geometry and B > SEARCH_MAXNREG_MIN_ROWS
        maxnreg = int_option(opts, "search_maxnreg", SEARCH_MAXNREG if capped else 0, choices=MAXNREG)
        search_regs = _register_cap(maxnreg)
        row_regs = _register_cap(int_option(opts, "round_maxnreg", maxnreg, choices=MAXNREG))
        reg_small = min(REG_SMALL, reg_cap)
        reg_mid = min(REG_MID, reg_cap)
        # masking and sampling keep each candidate's token index beside its key
        two_cuts = two_cuts_opt and p_mode != 0 and not kp  # (a top-k row never takes the second cut)
        per_span = span_cap * 4 * (1 + with_idx) + 8 * 8 + 4 * 4 + npm * 4 + npm * 4 + 16 * two_cuts
        per_row_bytes = n_spans * per_span + 20
        # waves over n_streams streams (option streams; not with sampling, whose draw after the waves reads the
        # first scratch's pick tickets), each stream's waves in a scratch of their own
        n_streams = 1 if sampling else n_streams_opt
        wave = max(1, min(B, wave_rows, SCRATCH_BYTES // (per_row_bytes * n_streams)))
        n_streams = min(n_streams, triton.cdiv(B, wave))
        scratch = [_wave_scratch(wave, n_spans, span_cap, npm, with_idx, two_cuts, sampling and fold_pick, chain, B, V,
                                 dev) for _ in range(n_streams)]
        pick_ticket = scratch[0].pick_ticket
        # Above a few rows the cut is computed once per row by its own launch; below,
        # every span program computes it (one launch fewer).  Same function, same bits.
        cut_in = B > CUT_PASS_MIN_ROWS if opts.get("cut_pass") is None else bool(opts["cut_pass"])
        # every row searches (a scalar request that cuts): nobody needs the smallest key
        all_search = (k_mode == 1 and 1 <= k_s < V) or (p_mode == 1 and 0.0 < p_s < 1.0)
        # only rows with p <= 0 (the best token and its tie group) use the count of the row maximum
        need_nmax = p_mode == 2 or (p_mode == 1 and p_s <= 0.0)
        common = dict(DTYPE=DTYPE_CODE[req.dtype], W=kc.width)
        search_const = dict(N_SPANS_P2=n_spans_p2, SPAN_CAP=span_cap, CB=cb,
                            REG_CAP=reg_cap, REG_SMALL=reg_small, REG_MID=reg_mid, NP=np_lanes,
                            FUSED_ROUNDS=bool(opts.get("fused_rounds", FUSED_ROUNDS and dev.type != "cpu")),
                            RADIX=bool(opts.get("radix_topk", RADIX_TOPK)),
                            MAX_ROUNDS=core_search.max_rounds(kc.width, num_pivots) + 2, KEY_NEG_INF=kc.key_neg_inf)
        ties_all = 1 if req.ties == TIES_ALL else 0
        slot_const = dict(SPAN_CAP=span_cap, N_SPANS_P2=n_spans_p2)  # the kernels that read a wave's slot
        streams = _fork_streams(dev, n_streams)
        try:
            for i, row0 in enumerate(range(0, B, wave)):
                rows = min(wave, B - row0)
                # this wave's stream's scratch (WaveScratch's fields in order; the pick tickets are read after)
                cand, cidx, part_i, part_f, rpart_i, rpart_f, part_low, cut, ctr, ticket, chain_tk, chain_done, _ = \
                    scratch[i % n_streams]
                if streams:  # this wave's stream (its scratch's)
                    torch.cuda.set_stream(streams[i % n_streams])
                if cut_in:
                    kernels.cut_kernel[(rows,)](
                        x, x.stride(0), x.stride(1), V, row0, k_ptr, k_s, p_ptr, p_s, k_mode, p_mode,
                        topk_lut, topp_lut, cut, n_spans * span_cap, SAMPLE=SAMPLE_SIZE,
                        LUT_STEPS=TOPK_LUT_STEPS_PER_OCTAVE, TOPK_LUT_N=TOPK_DELTA.size, TOPP_LUT_N=TOPP_DELTA.size,
                        TWO_CUTS=two_cut_share if two_cuts else 0, SAMPLE_CUT=sample_cut, SAMPLE_WIDE=sample_wide,
                        **pdl_kw, num_warps=4, **common,
                    )
                kernels.span_kernel[(rows, n_spans)](
                    x, x.stride(0), x.stride(1), V, row0,
                    k_ptr, k_s, p_ptr, p_s, k_mode, p_mode,
                    topk_lut, topp_lut,
                    cand, part_i, part_f, n_spans, ctr, cut, cidx, part_low,
                    ticket, ties_all, int(truncation), state_i, state_f,
                    thr_key, thr_bits, num_ties, count, hit, cut_idx, lanes,
                    SPAN=span, BLOCK=block, KEY_POS_INF=kc.key_pos_inf, FOLD=fold_finish, **search_const,
                    VALUE_LANES=value_lanes, NPM=npm, SAMPLE=SAMPLE_SIZE, LUT_STEPS=TOPK_LUT_STEPS_PER_OCTAVE,
                    SAMPLE_LANES=LANE_SAMPLES if sample_lanes else 0,
                    TOPK_LUT_N=TOPK_DELTA.size, TOPP_LUT_N=TOPP_DELTA.size, HAS_P=p_mode != 0,
                    PREFETCH=bool(opts.get("span_prefetch", False)), CUT_IN=cut_in, NEED_MIN=not all_search,
                    WITH_IDX=with_idx, STRIDED=span_layout == "strided", TWO_CUTS=two_cut_share if two_cuts else 0,
                    AGG=min(append_agg, block), DEFER=append_defer, ROW_Z=not kp, NEED_NMAX=need_nmax,
                    **pdl_kw, num_warps=span_warps,
                    **common,
                )
                if not fold_finish:
                    kernels.finish_kernel[(rows,)](
                        x, x.stride(0), x.stride(1), V, row0,
                        k_ptr, k_s, p_ptr, p_s, k_mode, p_mode, ties_all, int(truncation),
                        cand, part_i, part_f, n_spans, ctr, state_i, state_f,
                        thr_key, thr_bits, num_ties, count, hit, cut_idx, part_low, lanes,
                        TWO_CUTS=two_cuts, VALUE_LANES=value_lanes, NPM=npm, num_warps=search_warps, **search_regs,
                        SAMPLE_LANES=LANE_SAMPLES if sample_lanes else 0,
                        **pdl_kw, **search_const,
                        **common,
                    )
                r = 0
                while r < n_rounds:
                    row_mode = row_rounds and r >= span_rounds_first
                    # row_loop, chain: the rounds left, one launch (chain: n_loop programs a span)
                    n_loop = n_rounds - r if (row_mode and row_loop) or chain else 1
                    r += n_loop
                    last = int(r == n_rounds)
                    grid = (min(rows, row_programs or rows), 1) if row_mode else \
                        (rows, n_spans * (n_loop if chain else 1))
                    kernels.round_kernel[grid](
                        x, x.stride(0), x.stride(1), V, row0,
                        k_ptr, k_s, p_ptr, p_s, k_mode, p_mode,
                        cand, rpart_i, rpart_f, n_spans, ctr, state_i, state_f, lanes,
                        ticket, ties_all, last, thr_key, thr_bits, num_ties, count, hit, cut_idx, n_loop,
                        chain_tk, chain_done, rows,
                        SPAN=span, BLOCK=round_block, UNROLL=round_unroll, NPM=npm, MASS_ONLY=mass_lanes,
                        VALUE_LANES=value_lanes, FOLD=fold, ROW_MODE=row_mode, CHAIN=chain,
                        REVERSE=round_alternate and not (row_mode or chain) and (r - n_loop) % 2 == 0, **pdl_kw,
                        num_warps=round_warps,
                        **(row_regs if row_mode else {}), **search_const, **common,
                    )
                    if fold or row_mode:
                        continue
                    kernels.update_kernel[(rows,)](
                        x, x.stride(0), x.stride(1), V, row0,
                        k_ptr, k_s, p_ptr, p_s, k_mode, p_mode, ties_all,
                        cand, rpart_i, rpart_f, n_spans, ctr, state_i, state_f, last,
                        thr_key, thr_bits, num_ties, count, hit, cut_idx, lanes, -1,
                        NPM=npm, MASS_ONLY=mass_lanes, VALUE_LANES=value_lanes, num_warps=search_warps, **search_regs,
                        **pdl_kw, **search_const, **common,
                    )
                slot_args = (cand, cidx, part_i, n_spans)
                if with_idx:
                    # rows whose tie group is cut: the index of the last kept tie, from the slot
                    # for rows that hit
                    # ... and with fuse_draw, the draw of those rows from the slot (drawn: 1 where it drew)
                    kernels.slot_ties_kernel[(rows,)](
                        *slot_args, ctr, row0, thr_key, num_ties, cut_idx, hit,
                        states if fuse_draw else thr_key, tokens if fuse_draw else thr_key, drawn,
                        CHUNK=SLOT_CHUNK, TILE=TIE_TILE, IDX_BITS=24, DRAW=fuse_draw, DRAW_CHUNK=sample_chunk,
                        DTYPE=common["DTYPE"], KEY_POS_INF=kc.key_pos_inf if fuse_draw else 0, num_warps=4, W=kc.width,
                        **pdl_kw, **slot_const,
                    )
                if mask is not None or sampling:
                    # ... and from the row for the others (the span counts go into the round
                    # scratch, spent by now)
                    # (fold_ties: the pick by each row's last counting program, one launch)
                    kernels.tie_count_kernel[(rows, n_spans)](
                        x, x.stride(0), x.stride(1), V, row0, thr_key, cut_idx, rpart_i, n_spans, ticket, num_ties,
                        SPAN=span, BLOCK=block, FOLD=fold_ties, N_SPANS_P2=n_spans_p2, CHUNK=min(TIE_CHUNK, span),
                        REVERSE=tie_reverse, **pdl_kw, **tie_cmp_kw, num_warps=span_warps, **common,
                    )
                    if not fold_ties:
                        kernels.tie_pick_kernel[(rows,)](
                            x, x.stride(0), x.stride(1), V, row0, thr_key, num_ties, cut_idx, rpart_i, n_spans,
                            SPAN=span, N_SPANS_P2=n_spans_p2, CHUNK=min(TIE_CHUNK, span), **pdl_kw,
                            num_warps=search_warps, **common,
                        )
                if mask is not None:
                    mask_value, target = mask
                    kernels.mask_kernel[(rows, triton.cdiv(V, mask_block))](
                        x, x.stride(0), x.stride(1), target, target.stride(0), target.stride(1), V, row0, thr_key,
                        cut_idx, hit, float(mask_value), BLOCK=mask_block, SCATTER=scatter, REVERSE=mask_reverse,
                        **pdl_kw, **mask_cmp_kw, num_warps=8, **common,
                    )
                    if scatter:
                        kernels.scatter_kernel[(rows,)](
                            *slot_args, row0, thr_key, cut_idx, hit, target, target.stride(0), target.stride(1),
                            CHUNK=SLOT_CHUNK, **pdl_kw, num_warps=4, **slot_const, **common,
                        )
                if sampling and not fuse_draw:
                    kernels.sample_slot_kernel[(rows,)](
                        *slot_args, row0, thr_key, cut_idx, hit, states, tokens, CHUNK=sample_chunk,
                        KEY_POS_INF=kc.key_pos_inf, **pdl_kw, num_warps=4, **slot_const, **common,
                    )
        finally:
            _join_streams(streams)
    dtype = TORCH_DTYPE[req.dtype]
    if req.dtype == "float32":
        threshold = thr_bits.view(torch.float32)
    else:
        threshold = thr_bits.to(torch.int16).view(dtype)
    # every row's hit is 0 or 1 (finalize): a bool view, no launch
    result = SelectResult(threshold=threshold, num_ties=num_ties, count=count, hit=hit.view(torch.bool))
    return result, Aux(thr_key, cut_idx, req.dtype, drawn, tokens, pick_ticket if B > 0 else None)


class Aux(NamedTuple):
    """What ``run_sample`` takes from ``run_select`` (masking is done inside ``run_select``)."""

    thr_key: torch.Tensor
    cut_idx: torch.Tensor
    dtype: str
    done: torch.Tensor  # int8 [B]: 1 for the rows drawn from their slot (with sampling), which run_sample skips
    tokens: torch.Tensor | None  # int64 [B], set for the rows drawn from their slot
    # int32 [sample_wave(B, V)] zeros: run_sample's row tickets (option fold_pick), None for a pick launch
    pick_ticket: torch.Tensor | None = None


TIE_CHUNK = 4096  # entries per step of the prefix sum that finds a cut tie in a row
TIE_TILE = 256  # a cut tie group of at most this many entries is resolved from the slot
SLOT_CHUNK = 1024  # slot entries per step of the kernels that read a slot (ties, scatter)
# ... and of the draw from the slot (sample_slot_kernel): half the noise work of SLOT_CHUNK for rows with fewer
# candidates, in more steps for the others; the same token.  H200 (8fda680, docs/bench/h200-2026-12-02/session15/
# call C, the sampler, LLM-like, 1024 -> 512 / 256): B=64 V=128256 top-k 50 55.0 -> 53.4 / 52.1 us, k100+p0.9
# 65.5 -> 64.5 / 65.0; V=151936 top-k 50 59.4 -> 58.2 / 57.6, k100+p0.9 72.1 -> 70.4 / 70.7; B=1024 V=151936
# k100+p0.9 505.5 -> 503.2 (512)
SAMPLE_SLOT_CHUNK = 512
# entries per program of the mask, every width (the option mask_block, one of MASK_BLOCK_CHOICES).  Session 36 asked
# whether 16-bit rows want larger programs (a 4096-entry bf16 program moves half fp32's bytes); H100 sweeps
# (docs/bench/h100-2026-12-06/session37/ calls 1 and 3, masked top-k 50): 8192 and 16384 7-12 % slower on every
# row, 2048 within 1 % of 4096 either way, 1024 3-4 % slower
MASK_BLOCK = 4096
# default of the option value_cmp: the mask (1), or the mask and the tie counts (2), compare float32 values
# (kernels.kept_block, kernels.is_tie) instead of keys (0); sm_90 SASS of the bf16 mask 1112 -> 800 instructions, 80
# -> 64 registers (fp32 1056 -> 736, 64 -> 61).  H200 (docs/bench/h200-2026-12-06/session40/ call 1, sweep_triton.py
# --set valuecmp, masked out of place, 0 -> 2, the same bits 32/32): bf16 top-k 50 B=1024 LLM-like / Gaussian / Zipf
# 523.8 -> 449.2, 535.2 -> 458.3, 464.7 -> 417.4 us, fp32 510.0 -> 487.4, 513.8 -> 491.7, 542.7 -> 521.4; B=64 bf16
# 62.4 -> 54.9, fp32 Zipf level (138.7 -> 138.9); LLM-like k100+p0.9 bf16 595.4 -> 537.5, top-p 0.9 899.4 -> 832.7.
# Profile (bf16 LLM-like top-k 50): the mask 264.5 -> 206.1 us, the tie counts 100.2 -> 77.1.  The Triton GPU suites
# with 2 as the default passed there (call 1)
VALUE_CMP = 2
MASK_BLOCK_CHOICES = (1024, 2048, 4096, 8192, 16384)
SAMPLE_PART = 16384  # entries per program of the sample pass
SAMPLE_BLOCK = 2048  # entries per step (noise only in steps that keep something)
SAMPLE_SCRATCH_BYTES = 4 << 20  # partials per wave of rows


MIX_BLOCK = 1024


def mix_states(z: torch.Tensor) -> torch.Tensor:
    """``mix64`` of int64 ``z`` in place, in one launch (torch needs about ten elementwise ones)."""
    if z.numel():
        kernels.mix_states_kernel[(triton.cdiv(z.numel(), MIX_BLOCK),)](z, z.numel(), BLOCK=MIX_BLOCK, num_warps=4)
    return z


def run_sample(x: torch.Tensor, aux, count: torch.Tensor, states: torch.Tensor) -> torch.Tensor:
    """int64 ``[B]``: the Gumbel-max token of each row's kept set (``qrita.core.rng``), -1 if empty.

    ``aux`` comes from ``run_select(..., states=states)``, which drew the rows that
    hit from their candidate slots; the other rows are drawn here, from the row.
    """
    assert aux.tokens is not None, "run_select(..., states=...) before run_sample"
    thr_key, cut_idx, dtype, done, out = aux.thr_key, aux.cut_idx, aux.dtype, aux.done, aux.tokens
    kc = KEY_CONSTANTS[dtype]
    B, V = x.shape
    if B == 0:
        return out
    n_parts = triton.cdiv(V, SAMPLE_PART)
    wave = sample_wave(B, V)
    part_v = torch.empty((wave, n_parts, 2), dtype=torch.float64, device=x.device)
    part_i = torch.empty((wave, n_parts, 2), dtype=torch.int64, device=x.device)
    part = min(SAMPLE_PART, triton.next_power_of_2(V))
    block = min(SAMPLE_BLOCK, part)
    np2 = max(2, triton.next_power_of_2(n_parts))
    fold = aux.pick_ticket is not None
    ticket = aux.pick_ticket if fold else thr_key
    for row0 in range(0, B, wave):
        rows = min(wave, B - row0)
        kernels.sample_kernel[(rows, n_parts)](
            x, x.stride(0), x.stride(1), V, row0, thr_key, cut_idx, states, part_v, part_i, n_parts, done,
            ticket, count, out, PART=part, BLOCK=block, DTYPE=DTYPE_CODE[dtype], W=kc.width,
            KEY_POS_INF=kc.key_pos_inf, FOLD=fold, NP2=np2, num_warps=8,
        )
        if not fold:
            kernels.sample_pick_kernel[(rows,)](
                part_v, part_i, count, out, row0, n_parts, done, NP2=np2, num_warps=1,
            )
    return out


def sample_wave(B: int, V: int) -> int:
    """Rows a wave of :func:`run_sample` (its partials stay within SAMPLE_SCRATCH_BYTES)."""
    return max(1, min(B, SAMPLE_SCRATCH_BYTES // (triton.cdiv(V, SAMPLE_PART) * 32)))
