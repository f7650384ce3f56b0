"""Launching the Numba-CUDA kernels: zero-copy views, the caller's stream, the split-row path.

Arrays reach the kernels as Numba device arrays built from the caller's memory
(``__cuda_array_interface__``-style descriptions, never synchronised): the
logits as a flat array of raw bits (``uint16``/``uint32``) plus element strides,
so any row stride and int64 offsets work without a copy.  Outputs are allocated
by the caller's library on its device and written in place (torch in, torch
out).  Kernels run on the caller's current stream; nothing is read back to the
host.

Under ``NUMBA_ENABLE_CUDASIM=1`` the same kernels run in Numba's simulator on
numpy arrays (torch CPU tensors go through numpy views).
"""

from __future__ import annotations

import contextlib
import math
import sys

import numpy as np
from numba import cuda

from ... import _arrays
from ...core.spec import TIES_ALL
from ..base import Request, SelectResult, int_option
from . import kernels as kern

# Split path: rows per launch (bounds its scratch: 256 rows * 16 KiB of
# candidates plus partials, about 4.2 MiB) and the most blocks per row.
SPLIT_ROWS = 256
MAX_SPLITS = 64
# Auto split: only while the batch leaves SMs idle, with at least this many
# entries per block.
SPLIT_MIN_ENTRIES = 16 * kern.THREADS
# options["split_waves"]: the automatic split takes floor(2 * SMs / B) blocks a row instead of the ceiling, so that
# the split path's passes run in one wave.  Why: scan_split_kernel holds 48 registers a thread (sm_90), so two
# 512-thread blocks an SM are resident; the ceiling launches 320 blocks at B=64 on 132 SMs (5 a row: 264 run, then
# 56), 288 at B=32 and 393 at B=131 (B=16 takes 16 either way: V // SPLIT_MIN_ENTRIES at V=131072).  The same bits
# (the split path's answers do not depend on the splits).  H100 A/B (docs/bench/h100-2026-12-07/session44/ call 1,
# numba_ab.py --set split_waves, graph medians, ceiling -> floor, the same bits 20/20): LLM-like top-k 50 masked bf16
# B=32 80.7 -> 73.8 us, B=64 104.5 -> 97.0, B=100 135.8 -> 130.3; fp32 B=64 104.4 -> 95.8, B=100 147.0 -> 131.3;
# top-p 0.9 bf16 B=64 144.5 -> 126.8; B=16 level (16 blocks a row either way).  On.
SPLIT_WAVES = True
# A search over a row that missed (too many live keys for the candidate buffer) takes wide rounds
# first (kernels.wide_round: 256 bins a pass, 8 bits of key, where the paper's 3 pivots take 2) until
# the live keys fit or one key is left; options["wide_miss"] = False keeps the 3-pivot rounds.  The
# same answers (both are exact); H100 A/B: top-p rows that miss 1.6-4.5x faster (docs/bench/h100-2026-12-05/session25/)
WIDE_MISS = True
# options["wide_buffer"]: wide rounds over the candidate buffer too (the search of a row that hit),
# while it holds more than kernels.WIDE_MIN_KEYS live keys; off: it cost 30-40 % on Zipf top-k 50 (H100, session 25).
# Measured again in session 47 (H200, docs/bench/h200-2026-12-07/session47/ call 1, numba_ab.py --set wide_buffer, the
# same bits 24/24): only Zipf rows take a wide round; Zipf k100+p0.9 B=1024 select 676 -> 629 us, top-k 50 B=1024
# 376 -> 365, Zipf fp32 top-k 50 B=64 select 104.5 -> 107.0, the rest level.  Still off.
WIDE_BUFFER = False
# options["rank_select"]: a search over a candidate buffer with at most options["rank_live"] live keys
# (<= kernels.RANK_MAX) ranks them in one pass (kernels.rank_select) instead of taking 3-pivot rounds; the
# same answers.  Session 27 (H100, ea31be0, session27/ call B, ab.json, select, fp32, V=131072) ranked every
# key of a buffer of at most 512: top-k 50 B=16 LLM-like 57.8 -> 44.6 us, B=1024 514 -> 473, top-p 0.9 B=16
# 128.5 -> 87.1, but k100+p0.9 B=16 77.1 -> 96.4, so it was off for k+p.  Session 28's rank_kp A/B (H100,
# session28/ call 1, select, B=16, LLM-like; rounds / rank in both stages / in the top-k stage only): k100+p0.9
# 77.5 / 93.6 / 76.9 us, k50+p0.9 70.8 / 59.4 / 61.7, top-k 100 alone 57.1 / 63.8: both stages lose at
# k=100, both win at k=50.  The likely cause: every live key was compared with every key of the buffer
# (250-400, dead ones too; the top-p stage of a k+p row has fewer than k live), a cost that grows as their
# square, a 3-pivot round's as their number.  Now the live keys are packed first and the rank waits for
# at most rank_live of them (3-pivot rounds until then).  H100 A/B (session 28, call 5, ab_rank_live.json,
# select, fp32, same bits in 20 of 20; rank off / rank_live 512 / 256): B=16 LLM-like k100+p0.9 77.4 / 80.8 /
# 68.9 us, Gaussian 80.7 / 75.5 / 65.7; k50+p0.9 71.8 / 56.0 / 55.7, 79.5 / 52.6 / 52.3; top-k 100 56.5 /
# 67.3 / 54.4, 52.3 / 61.8 / 52.4; top-k 50 58.0 / 45.9 / 45.7, 55.1 / 43.1 / 43.3; B=1024 LLM-like
# k100+p0.9 691 / 679 / 668, top-k 50 518 / 481 / 480.  So on for every request, rank_live = 256.
# options["rank_weighted"] = False keeps rank_select out of the searches of masses (top-p), for the A/B that
# tells which of a k+p row's two stages loses (benchmarks/numba_ab.py --set rank_kp)
RANK_SELECT = True
RANK_LIVE = 256
# options["rank_groups"]: rank_select shares a key's comparisons among up to a warp of threads (kernels.RANK_RED_N):
# the same answers.  Why: the split path's finish at B = 1 and 4 spends most of its time ranking (H100, session 44
# call 7: finish_split_kernel 19 us for top-k 50, 5 us of it its fixed cost, 44 us for k100+p0.9).  Written in
# session 44, on since session 45: numba_ab.py --set rank_groups on an H100 (docs/bench/h100-2026-12-07/session45/
# call1), the same bits in all 28 cases, none slower: masked top-k 50 B=1 34.5 -> 31.6 us, k100+p0.9 B=1 57.9 -> 48.3,
# B=16 76.0 -> 66.2, top-k 50 B=1024 840.7 -> 818.9.
RANK_GROUPS = True
# options["kp_mass"]: the top-p stage of a k+p row whose top-k survivors are in the candidate buffer sums their mass
# in one block sum (kernels.mass_above_buf) instead of a 3-pivot pass's twelve (64-bit shared atomics a warp, sixteen
# warps on a slot); the same answers.  Written in session 44, on since session 45 (numba_ab.py --set rank_groups,
# its third variant, H100): masked k100+p0.9 B=1 48.3 -> 46.1 us, B=16 66.2 -> 63.7, B=1024 1013.1 -> 999.8 (LLM-like).
KP_MASS = True
# options["kp_rank"]: a k+p row whose candidates hit and are few enough to rank takes both stages from one ranking
# (kernels.rank_select_kp: each key's count and weight of the keys above it, then the top-p boundary among the
# top-k survivors from those sums) instead of a top-k search, a mass sum and a top-p search; the same answers.
# Why: the top-p stage is about 10 of the 24 us of a k100+p0.9 finish at B = 4 (H100, session 45 call 1's probe),
# and Numba's k100+p0.9 at B = 1 was 2.0-2.1x Triton's.  H200 A/B (docs/bench/h200-2026-12-07/session45/ call 3,
# numba_ab.py --set kp_rank, the same bits 16/16, masked in place): k100+p0.9 B=1 45.2 -> 41.2 us (LLM-like), 47.0 ->
# 43.2 (Gaussian), bf16 47.6 -> 43.7, B=1024 988.8 -> 966.8 and 865.2 -> 853.2; Zipf (its live keys too many to
# rank) and B=4-16 level (within 1 us either way), bf16 B=64 93.6 -> 94.7.  The GPU suites passed with it on.
KP_RANK = True
# options["scan_prefetch"]: the split path's scan (kernels.scan_split_kernel) issues its first tile's loads before the
# cut's sample passes and each next tile's before it processes one (two register tiles taking turns); the same
# answers.  Why: at B = 64 the split scan took 25-27 us for 32 MiB of fp32 rows or 16 MiB of bf16 ones (H100, session
# 46 call 1's profile): a thread had one tile (32 or 16 bytes) in flight and waited for it.  On by default since
# session 46: H100 A/B (docs/bench/h100-2026-12-07/session46/ call 2, numba_ab.py --set scan_prefetch, the same bits
# in all 16 cases): select fp32 B=64 LLM-like 54.2 -> 51.7 us, Zipf 116.1 -> 114.9, B=16 Zipf 63.6 -> 61.3; masked
# 0-5 % faster; bf16 select level but Zipf B=64 105.1 -> 108.0.  With both options on (call 2) the Numba conformance
# suite at real shapes passed (212, none failed); the backend's GPU tests passed 20 of 46 before the call's limit.
SCAN_PREFETCH = True
# options["tie_index"]: the split scan (a tile ahead, as under scan_prefetch) keeps each slotted candidate's entry
# index, and before a masking the finish settles a cut boundary group's index from them (kernels.tie_index_cut)
# where the whole group is among the candidates, so that no kernel reads the row again for it; the same answers.
# Why: bf16 rows cut their boundary group often (ties), and then cut_count_kernel read every row again (10.2 of 85 us
# of bf16 top-k 50 masking at B = 64, H100, session 46 call 1) and the mask block holding the cut scanned its span
# in index order.  On by default since session 46: H100 A/B (call 2, the third variant; the same bits in all 16
# cases), masked in place, against scan_prefetch alone: LLM-like bf16 top-k 50 B=64 93.9 -> 80.0 us, B=16 51.9 ->
# 44.1, fp32 B=64 92.7 -> 88.6, top-p 0.9 B=64 134.9 -> 131.0, k100+p0.9 B=64 110.8 -> 107.8.
TIE_INDEX = True
# options["split_wide"]: on the split path, a top-p-only request's rows that miss take their first
# SPLIT_WIDE_ROUNDS wide rounds, and the gather of their live keys, with every block of the row
# (kernels.wide_hist_kernel / wide_pick_kernel) instead of the one block of the finish; the same
# answers.  On by default: written in session 27 for issue 6's B=16 top-p rows (the finish had spent
# 243 of 275 us reading the row with one block, H100 session 26; LLM-like B=16 89.6 us in all with it, session 27)
SPLIT_WIDE = True
# H100 A/B at ea31be0 (session27/ call B, ab_wide.json, select top-p 0.9, fp32, V=131072, off / 2 / 3 / 4
# rounds): B=16 LLM-like 215 / 85 / 87 / 90 us, Gaussian 446 / 259 / 191 / 120, Zipf 423 / 182 / 114 / 117;
# B=1 LLM-like 203 / 63 / 65 / 67, Gaussian 351 / 154 / 80 / 83, Zipf 411 / 154 / 82 / 85
SPLIT_WIDE_ROUNDS = 4
# options["split_wide_fold"]: the row's last block of a round's pass runs the round's pick (a ticket), so a
# round is one launch instead of two; the same answers.  Written in session 27 (profile at B=16, LLM-like top-p
# 0.9: the three pick launches 7.2 us of kernel time).  H100 A/B (session 28, session28/ call 3, ab_fold.json,
# select top-p 0.9, picks / folded): B=16 LLM-like 101.9 / 97.4 us, B=1 73.1 / 68.5; Gaussian, Zipf within 1 %
SPLIT_WIDE_FOLD = True
# under the simulator only: each split launch's wide-round state (kernels.SW_*), for the tests to compare
SIMULATED_WIDE_STATE: list = []
# options["two_cuts"]: a top-p-only row whose Gaussian model predicts more candidates than the buffer
# holds gathers above a higher cut, the top-k cut for cap // kernels.TWO_CUT_SHARE entries
# (kernels.row_cut), so that rows whose mass sits in a few strong logits hit (LLM-like top-p 0.9 rows:
# about 42000 entries above the one cut, 1-9 needed); the same answers.  H100 A/B (session 28,
# docs/bench/h100-2026-12-05/session28/ call 1, ab_two_cuts.json, select, fp32, V=131072, one cut / two):
# B=1024 LLM-like top-p 0.9 1911 -> 902 us (every row hits), Zipf top-p 0.5 2478 -> 1138, the rest within
# 2 %; but on the split path (B=16, 1), where the split wide rounds already take a missing row's first steps
# with all of its blocks, slower: B=16 LLM-like 0.9 87.9 -> 98.2 (hits), Zipf 0.9 115.9 -> 147.1 (misses
# either way), B=1 LLM-like 66.3 -> 69.6.  On for both paths all the same: a row's Selection.hit must not
# depend on B or on the split (SPEC's batch invariance; session 28's call 5 tried it off on the split path
# and the GPU tests of batch invariance failed on hit alone).  True / False in options forces it.
TWO_CUTS = True
# options["cut_groups"]: the masking's cut index (kernels.cut_index_kernel) counts the entries equal to the
# threshold in a group of chunks at once and scans one chunk in index order; off: every chunk scanned, one
# after another, as before.  For bf16 masking, where nearly every row's boundary group is cut: H100 profile
# (docs/bench/h100-2026-12-05/session28/ call 5), B=64 LLM-like top-k 50, the cut index 65 of 179 us; H200
# (docs/bench/h200-2026-12-05/session29/ calls 1-2, the same bits 12/12): that cut index 62.7 -> 32.7 us,
# bf16 B=64 masked 169.3 -> 139.5 us (LLM-like), 164.6 -> 139.1 (Gaussian), the other cases within 1 %
CUT_GROUPS = True
SIMULATED_SMS = 2  # the SM count sm_count gives under the simulator
# options["cut_in_mask"]: no cut_index_kernel: cut_count_kernel counts the entries equal to the threshold of each
# mask block's span, and the mask block of a row whose cut must be found settles its own cut from
# the counts of the spans before it (kernels.mask_block_cut); the one block that holds the cut scans its span.
# Why: the cut index (one block a row) stays 15-18 us of bf16 masking at B=64 at any segment length (H100,
# session 43's profile): a chain of dependent loads, not bytes.  Only while the rows' spans are at most
# CUT_IN_MASK_SPANS_PER_SM an SM (bf16 B <= 264, fp32 B <= 132 on 132 SMs): the count launches a block a span,
# and reads every row whole.  H100 A/B (docs/bench/h100-2026-12-07/session43/ call 7, top-k 50 masked, the same
# bits 19/19, index -> in mask): bf16 LLM-like B=16 70.5 -> 61.7 us, B=64 118.6 -> 106.7, B=128 163.2 -> 155.7,
# B=256 238.0 -> 227.3, but B=1024 811.9 -> 840.3; fp32 B=64 104.9 -> 104.0, B=256 222.4 -> 229.3 (8192 spans).
# Beyond that the cut index kernel reads each row from its start: session 43's option cut_split (the row's equal
# entries counted in segments first, where a row got 8 or more) is gone since session 45: under cut_in_mask it
# applied only to long rows (V = 2**19 at B 34-66), where it measured level in bf16 and 1-2 us slower in fp32
# (H100, docs/bench/h100-2026-12-07/session45/ call 2, numba_ab.py --set cut_long, the same bits 14/14).
CUT_IN_MASK = True
CUT_IN_MASK_SPANS_PER_SM = 32
# options["mask_counts"]: under cut_in_mask, no cut_count_kernel: a mask block of a row left at CUT_SCAN takes its
# span by a ticket, counts the entries equal to the threshold in it, publishes the count and waits for the row's
# earlier spans' counts (kernels.mask_block_cut); the counts' slots and tickets are zeroed by the zero_kernel the
# split path launches anyway (a zero_kernel of their own on the one-block-a-row path).  The same answers.  Why: with
# tie_index the finish settles nearly every hit row's cut, and the count kernel's B * spans blocks then mostly exit
# at once: 3.3 us of the 5.5 us that fp32 B=64 masking is behind FlashInfer (H100 profile, session 46 call 1); a
# launch less.  On by default since session 48: with it on, the Numba GPU suites passed on an H100
# (docs/bench/h100-2026-12-07/session48/ call 1: backend 46, conformance 80 / 120+40 / 12+12), and the stamps probe
# there (B=64 LLM-like top-k 50 masked in place) took the finish-to-mask gap 4.7 -> 1.6 us (fp32) and 4.3 -> 1.7
# (bf16): first scan block to last mask block 87.2 -> 84.2 and 76.0 -> 73.4 us.  Its A/B (numba_ab.py --set
# mask_counts) has not run yet.
MASK_COUNTS = True
# options["mask_loads"]: mask_kernel loads a thread's MASK_ITEMS entries back to back before it writes any;
# off: each entry loaded, then written, in turn (MASK_ITEMS_OLD a thread).  Why: in place the output is the
# input, so the compiler keeps every load after the previous entry's store: one load in flight a thread.
# H200 (docs/bench/h200-2026-12-05/session29/ call 5), B=1024 LLM-like top-k 50: mask_kernel 503 us for
# bf16 (about 1.1 TB/s of reads and writes), as long as the select kernel before it.  A/B (H100,
# docs/bench/h100-2026-12-05/session29/ call 6, top-k 50 in place, off -> on, the same bits 12/12): B=1024
# fp32 LLM-like 1306 -> 957 us, Gaussian 1301 -> 949, Zipf 1352 -> 1001; bf16 1401 -> 1088, 1417 -> 1104,
# 1317 -> 1002; B=64 fp32 126.4 -> 113.5, 126.2 -> 112.9, 179.0 -> 165.3; bf16 150.6 -> 144.2, 149.5 -> 142.5,
# 168.9 -> 164.0
MASK_LOADS = True
# options["mask_blocks"]: 2, 3 or 4: mask_kernel compiled with launch bounds for that many 512-thread blocks an SM
# (kernels.mask_kernel_b3 / _b4: at most 40 / 32 registers a thread instead of 64), so that more of its loads are in
# flight an SM.  Why: at B = 64 the mask moved its 64 MiB (fp32, read and written) at about 76 % of the rate it
# reaches at B = 1024 (H100 profile, session 46 call 1: 30.6 us against 371 us for 16x the bytes), two blocks an SM
# loading, then writing.  Written in session 48 (no GPU lent): not yet measured, 2 (as before) by default.
MASK_BLOCKS = 2


def mask_kernel_of(options: dict):
    """The mask kernel that option ``mask_blocks`` names (checked: 2, 3 or 4 blocks an SM)."""
    blocks = int_option(options, "mask_blocks", MASK_BLOCKS, choices=(2, 3, 4))
    return {2: kern.mask_kernel, 3: kern.mask_kernel_b3, 4: kern.mask_kernel_b4}[blocks]


# options["pairs"]: 16-bit rows of even length, at even offsets with unit stride, are read (and masked) as 32-bit
# words, two entries a load (kernels.paired_buffer); off: one 2-byte load an entry, as before.  Why: the row passes
# keep a few loads in flight a thread (kernels.ITEMS), so a 2-byte entry a load moves half fp32's bytes a load:
# H100 profile (docs/bench/h100-2026-12-05/session28/ call 5), B=64 LLM-like top-k 50, the split scan pass
# 43.6 us for bf16 against 44.0 for fp32, at half the bytes.  Measured (session 38, H100, numba_ab.py --set pairs,
# docs/bench/h100-2026-12-06/session38/): bf16 masking 5-6 % faster at B=64, 14-19 % at B=1024, `select` the same
PAIRS = True
# options["pairs_select"]: with pairs, also the one-block-a-row select kernel (B >= the SM count) reads words; off:
# only the split path, the cut index and the mask.  Why the choice: unpacking the halves costs the 64-register
# select kernel spills (sm_90: 184/240 B a thread against 116/132, compile_check), the split kernels nothing.
# Off: on, `select` was 1.2 % slower on one row (B=16 top-p, 75.3 -> 76.2 us) and no row gained over 1.5 % (session 38)
PAIRS_SELECT = False
# Probe builds only (benchmarks/probe_stamps.py, with kernels.STAMPS set before anything compiles): a dict that
# gets, at each launch of scan_split_kernel, finish_split_kernel and mask_kernel, that launch's stamps array by
# the kernel's name ("scan", "finish", "mask"; the last launch's).  None: the kernels get an int64 2-D array the
# launch has anyway, which they do not write.
PROBE_STAMPS: dict | None = None
# Fixed-point top-p weights: round(exp(x - max) * 2**FRAC_BITS), summed in int64.
FRAC_BITS = 40

_BITS = {"float32": np.dtype(np.uint32), "float16": np.dtype(np.uint16), "bfloat16": np.dtype(np.uint16)}


def _stamps(arrays, name: str, n_blocks: int, unused):
    """The stamps argument of a launch: ``unused`` (any int64 2-D array) unless a probe asked for them."""
    if PROBE_STAMPS is None:
        return unused
    PROBE_STAMPS[name] = arrays.scratch((n_blocks, 2 * kern.STAMP_SLOTS), "int64")
    return PROBE_STAMPS[name]


def fixed_point_one(V: int) -> int:
    """``2**FRAC_BITS``, lowered for very long rows so that ``V * one < 2**62``."""
    return 1 << min(FRAC_BITS, 62 - max(1, math.ceil(math.log2(V))))


class _DeviceArrays:
    """The buffers of a GPU library (torch, cupy, numba) as Numba device arrays."""

    simulated = False

    def __init__(self, req: Request):
        self.lib = req.lib
        self.like = req.logits
        self.device_index = int(req.device.split(":")[1]) if ":" in req.device else 0
        self.mod = sys.modules.get(req.lib)

    def context(self):
        return cuda.gpus[self.device_index]

    def stream(self):
        """The caller's current stream."""
        if self.lib == "torch":
            ptr = self.mod.cuda.current_stream(self.like.device).cuda_stream
        elif self.lib == "cupy":
            ptr = self.mod.cuda.get_current_stream().ptr
        else:
            ptr = 0
        return cuda.external_stream(ptr) if ptr else cuda.default_stream()

    def _layout(self, a) -> tuple[int, tuple[int, ...], np.dtype]:
        """(data pointer, element strides, dtype of the elements' bits) of an array."""
        if self.lib == "torch":
            return a.data_ptr(), tuple(a.stride()), np.dtype(f"u{a.element_size()}")
        desc = a.__cuda_array_interface__
        dt = np.dtype(desc["typestr"])
        strides = desc.get("strides")
        if strides is None:  # C order
            strides, step = [], dt.itemsize
            for n in reversed(desc["shape"]):
                strides.insert(0, step)
                step *= n
        return desc["data"][0], tuple(s // dt.itemsize for s in strides), dt

    def _numba(self, owner, ptr: int, n: int, dtype: np.dtype):
        desc = {"shape": (n,), "strides": None, "typestr": dtype.str, "data": (ptr, False), "version": 3}
        return cuda.from_cuda_array_interface(desc, owner=owner, sync=False)

    def flat_bits(self, logits, dtype: str):
        """``(flat raw bits, stride_b, stride_v)`` of ``[B, V]`` logits (B > 0)."""
        ptr, (sb, sv), _ = self._layout(logits)
        if sb < 0 or sv < 0:  # why: the flat view starts at row 0, entry 0
            if self.lib == "numba":
                raise NotImplementedError("numba device arrays with negative strides: pass a copy")
            logits = logits.contiguous() if self.lib == "torch" else self.mod.ascontiguousarray(logits)
            ptr, (sb, sv), _ = self._layout(logits)
        B, V = int(logits.shape[0]), int(logits.shape[1])
        return self._numba(logits, ptr, 1 + (B - 1) * sb + (V - 1) * sv, _BITS[dtype]), sb, sv

    def words_of(self, flat):
        """The int32 words over a flat 16-bit buffer of even length, or None where it is not 4-byte aligned."""
        ptr = flat.__cuda_array_interface__["data"][0]
        return None if ptr % 4 else self._numba(flat, ptr, int(flat.shape[0]) // 2, np.dtype(np.int32))

    def vector(self, a, dtype=None):
        """A 1-D array of the library as a contiguous Numba array (``dtype``: reinterpret)."""
        if self.lib == "torch":
            a = a.contiguous()
        elif self.lib == "cupy":
            a = self.mod.ascontiguousarray(a)
        ptr, _, dt = self._layout(a)
        if self.lib == "torch":
            dt = np.dtype(str(a.dtype).replace("torch.", "")) if a.dtype != self.mod.bfloat16 else dt
        return self._numba(a, ptr, int(a.shape[0]), np.dtype(dtype) if dtype is not None else dt)

    def empty(self, shape, dtype: str):
        """A new array of the library on the logits' device (bfloat16: the logits' own dtype)."""
        if self.lib == "torch":
            return self.mod.empty(shape, dtype=getattr(self.mod, dtype), device=self.like.device)
        if self.lib == "cupy":
            with self.mod.cuda.Device(self.device_index):
                return self.mod.empty(shape, dtype=dtype)
        return cuda.device_array(shape, dtype=dtype)

    def scratch(self, shape: tuple[int, ...], dtype: str):
        n = int(np.prod(shape))
        return self.vector(self.empty(n, dtype)).reshape(shape)

    def result(self, thr, nties, count, hit, dtype: str) -> SelectResult:
        return SelectResult(threshold=thr, num_ties=nties, count=count, hit=hit)


class _SimulatedArrays(_DeviceArrays):
    """The simulator's device arrays: numpy arrays (torch CPU tensors via numpy views)."""

    simulated = True

    def __init__(self, req: Request):
        self.lib = req.lib
        self.like = req.logits

    def context(self):
        return contextlib.nullcontext()

    def stream(self):
        return 0

    @staticmethod
    def _fake(a: np.ndarray):
        from numba.cuda.simulator.cudadrv.devicearray import FakeCUDAArray

        return FakeCUDAArray(a)  # no copy: the kernels write straight into ``a``

    def flat_bits(self, logits, dtype: str):
        bits = _arrays.to_numpy_values(logits, self.lib, dtype).view(_BITS[dtype])
        if any(s < 0 or s % bits.itemsize for s in bits.strides):
            bits = np.ascontiguousarray(bits)
        sb, sv = (s // bits.itemsize for s in bits.strides)
        B, V = bits.shape
        flat = np.lib.stride_tricks.as_strided(bits, shape=(1 + (B - 1) * sb + (V - 1) * sv,), strides=(bits.itemsize,))
        return self._fake(flat), sb, sv

    def words_of(self, flat):
        host = flat._ary
        return None if host.ctypes.data % 4 else self._fake(host.view(np.int32))

    def vector(self, a, dtype=None):
        host = a if isinstance(a, np.ndarray) else np.ascontiguousarray(_arrays.to_host(a, self.lib))
        return self._fake(host if dtype is None else host.view(dtype))

    def empty(self, shape, dtype: str):
        return np.empty(shape, dtype=np.uint16 if dtype == "bfloat16" else dtype)

    def scratch(self, shape, dtype: str):
        return self._fake(np.empty(shape, dtype=dtype))

    def result(self, thr, nties, count, hit, dtype: str) -> SelectResult:
        return SelectResult(
            threshold=_arrays.values_from_bits_numpy(thr, self.lib, dtype, self.like),
            num_ties=_arrays.from_numpy(nties, self.lib),
            count=_arrays.from_numpy(count, self.lib),
            hit=_arrays.from_numpy(hit, self.lib),
        )


_SM_COUNT: dict[int, int] = {}


def sm_count(arrays: _DeviceArrays) -> int:
    """The device's SM count (cached per device; ``SIMULATED_SMS`` under the simulator)."""
    if arrays.simulated:
        return SIMULATED_SMS
    if arrays.device_index not in _SM_COUNT:
        _SM_COUNT[arrays.device_index] = int(cuda.get_current_device().MULTIPROCESSOR_COUNT)
    return _SM_COUNT[arrays.device_index]


def choose_splits(req: Request, arrays: _DeviceArrays, forced: int) -> int:
    """Blocks per row: ``forced`` (``options["split"]``) if not 0, else enough to fill the GPU at small B."""
    if forced > 0:
        return min(forced, MAX_SPLITS)
    if arrays.simulated or req.V < 2 * SPLIT_MIN_ENTRIES:
        return 1
    sms = sm_count(arrays)
    if req.B >= sms:
        return 1
    per_row = -(-2 * sms // req.B)  # at least two blocks an SM
    if req.options.get("split_waves", SPLIT_WAVES):
        per_row = 2 * sms // req.B  # at most two blocks an SM: one wave
    return max(1, min(MAX_SPLITS, per_row, req.V // SPLIT_MIN_ENTRIES))


def paired(arrays: _DeviceArrays, req: Request, flat, stride_b: int, stride_v: int):
    """The int32 words over a row buffer (``flat_bits``) whose rows pair (``kernels.paired_buffer``: 16-bit entries,
    even row length, unit stride, rows at even offsets of a 4-byte aligned buffer), else None (also with the
    option ``pairs`` off)."""
    if not req.options.get("pairs", PAIRS) or _BITS[req.dtype].itemsize != 2 or req.V % 2 or stride_v != 1:
        return None
    if req.B > 1 and stride_b % 2:
        return None
    return arrays.words_of(flat)


def _row_arg(arrays: _DeviceArrays, value, dummy):
    """``(array, scalar, mode)`` kernel arguments of a request's ``k`` or ``p``."""
    if value is None:
        return dummy, 0, kern.ARG_NONE
    if isinstance(value, (int, float)):
        return dummy, value, kern.ARG_SCALAR
    return arrays.vector(value), 0, kern.ARG_PER_ROW


def run_select(req: Request) -> SelectResult:
    """``(threshold, num_ties, count, hit)`` of every row, on the caller's device and stream."""
    arrays = _SimulatedArrays(req) if kern.SIMULATED else _DeviceArrays(req)
    with arrays.context():
        thr, nties, count, hit, _cut, _slots = _select_raw(req, arrays, for_mask=False)
    return arrays.result(thr, nties, count, hit, req.dtype)


def _select_raw(req: Request, arrays, for_mask: bool, zeroed_slots: tuple[int, int] | None = None):
    """The select launches; returns the raw output arrays (thresholds as their bits' holders),
    the masking's cut index a row (``kernels.finish_row``: ``CUT_SCAN`` where the row must be read) and an int64
    array of shape ``zeroed_slots`` that is 0 once these launches are done (None without ``zeroed_slots``: option
    ``mask_counts``'s counts and tickets; the split path's zero_kernel clears it with its own slots).
    ``for_mask``: a masking follows (only then does option ``tie_index`` settle cuts: ``select`` has no use for
    them, and the index stores cost its bf16 rows 1-2 us at B = 16-64, H100 session 46 call 2)."""
    B, V, dtype = req.B, req.V, req.dtype
    opts = req.options
    cap = min(int_option(opts, "capacity", kern.CAP), kern.CAP)
    split_wide_rounds = int_option(opts, "split_wide_rounds", SPLIT_WIDE_ROUNDS)
    forced_split = int_option(opts, "split", 0, minimum=0)  # 0: automatic
    rank_live = min(int_option(opts, "rank_live", RANK_LIVE), kern.RANK_MAX)
    mask_kernel_of(opts)  # run_mask's option, checked on every call (select and B = 0 too)
    params = (
        kern.FMT_OF_DTYPE[dtype],
        1 if req.ties == TIES_ALL else 0,
        1 if req.options.get("truncation", True) else 0,
        cap,
        fixed_point_one(V),
        (1 if req.options.get("wide_miss", WIDE_MISS) else 0)
        | (2 if req.options.get("wide_buffer", WIDE_BUFFER) else 0)
        | (4 if req.options.get("rank_select", RANK_SELECT) else 0)
        | (8 if req.options.get("two_cuts", TWO_CUTS) else 0)
        | (16 if req.options.get("rank_weighted", True) else 0)
        | (32 if req.options.get("rank_groups", RANK_GROUPS) else 0)
        | (64 if req.options.get("kp_mass", KP_MASS) else 0)
        | (128 if req.options.get("kp_rank", KP_RANK) else 0)
        | (kern.SCAN_PREFETCH if req.options.get("scan_prefetch", SCAN_PREFETCH) else 0)
        | (kern.TIE_INDEX if for_mask and req.options.get("tie_index", TIE_INDEX) else 0)
        | (rank_live << kern.RANK_LIVE_SHIFT),
    )
    thr = arrays.empty(B, dtype)
    nties = arrays.empty(B, "int32")
    count = arrays.empty(B, "int32")
    hit = arrays.empty(B, "bool")
    cut = arrays.empty(B, "int64")
    slots = None
    if B > 0:
        stream = arrays.stream()
        x, stride_b, stride_v = arrays.flat_bits(req.logits, dtype)
        k_arr, k_scalar, k_mode = _row_arg(arrays, req.k, arrays.scratch((1,), "int64"))
        p_arr, p_scalar, p_mode = _row_arg(arrays, req.p, arrays.scratch((1,), "float32"))
        rows = (k_arr, int(k_scalar), k_mode, p_arr, float(p_scalar), p_mode)
        outs = (arrays.vector(thr, _BITS[dtype]), arrays.vector(nties), arrays.vector(count), arrays.vector(hit),
                arrays.vector(cut))
        splits = choose_splits(req, arrays, forced_split)
        if splits > 1 or req.options.get("pairs_select", PAIRS_SELECT):  # the word view only where it is read
            words = paired(arrays, req, x, stride_b, stride_v)
            x = x if words is None else words
        if splits == 1:
            if zeroed_slots is not None:
                flat = arrays.scratch((int(np.prod(zeroed_slots)),), "int64")
                kern.zero_kernel[1, kern.THREADS, stream](flat)
                slots = flat.reshape(zeroed_slots)
            kern.select_kernel[B, kern.THREADS, stream](x, stride_b, stride_v, V, *rows, *params, *outs)
        else:
            wide_rounds, fold = 0, 1 if req.options.get("split_wide_fold", SPLIT_WIDE_FOLD) else 0
            if req.k is None and req.p is not None and (params[5] & 1) and req.options.get("split_wide", SPLIT_WIDE):
                wide_rounds = split_wide_rounds
            slots = _run_split(arrays, stream, x, stride_b, stride_v, B, V, rows, params, splits, outs, wide_rounds,
                               fold, zeroed_slots)
    return thr, nties, count, hit, cut, slots


def fill_bits(mask_value: float, dtype: str) -> int:
    """Raw bits of ``mask_value`` rounded to ``dtype`` (round to nearest even, as torch does)."""
    if dtype == "float16":
        return int(np.array(mask_value, dtype=np.float16).view(np.uint16))
    u = int(np.array(mask_value, dtype=np.float32).view(np.uint32))
    if dtype == "float32":
        return u
    if (u & 0x7FFFFFFF) > 0x7F800000:  # NaN stays a (quiet) NaN
        return (u >> 16) | 0x40
    return (u + 0x7FFF + ((u >> 16) & 1)) >> 16


def run_mask(req: Request, mask_value: float, out):
    """Fused select + mask: ``mask_value`` wherever an entry is not kept, in place when
    ``out`` is given (it is the logits), else into a new array of the caller's library.

    No ``[B, V]`` scratch: a per-row cut index settles the tie group: the search's own where
    the group is kept whole or not at all, the finish's from the candidates' indices (option
    ``tie_index``), else found in the row: by the mask blocks themselves (option ``cut_in_mask``:
    each counts its span's tied entries, ``mask_counts``, or takes ``cut_count_kernel``'s counts)
    or by ``cut_index_kernel`` reading the row up to it; then ``mask_kernel`` writes.  Returns
    None when the generic path must do it (device arrays with negative strides)."""
    arrays = _SimulatedArrays(req) if kern.SIMULATED else _DeviceArrays(req)
    B, V, dtype = req.B, req.V, req.dtype
    inplace = out is not None
    if not arrays.simulated and inplace and any(s < 0 for s in arrays._layout(req.logits)[1]):
        return None
    with arrays.context():
        if arrays.simulated:  # raw bits in numpy; copied into the caller's array below
            target = np.empty((B, V), dtype=_BITS[dtype])
        elif not inplace:
            target = arrays.empty((B, V), dtype)
        else:
            target = req.logits
        if B == 0:
            _select_raw(req, arrays, for_mask=True)
        else:
            x, sb, sv = arrays.flat_bits(req.logits, dtype)
            if target is req.logits:
                t_flat, tb, tv = x, sb, sv
            elif arrays.simulated:
                t_flat, tb, tv = arrays._fake(target.reshape(-1)), V, 1
            else:
                t_flat, tb, tv = arrays.flat_bits(target, dtype)
            fmt = kern.FMT_OF_DTYPE[dtype]
            sequential = 0 if req.options.get("cut_groups", CUT_GROUPS) else 1
            x_words = paired(arrays, req, x, sb, sv)
            x_cut = x if x_words is None else x_words
            t_words = None if x_words is None else paired(arrays, req, t_flat, tb, tv)
            loads_first = 1 if req.options.get("mask_loads", MASK_LOADS) else 0
            mask_kernel = mask_kernel_of(req.options)
            per_block = kern.THREADS * (kern.MASK_ITEMS if loads_first else kern.MASK_ITEMS_OLD)
            if t_words is not None:
                per_block = kern.THREADS * kern.MASK_PAIRED_ITEMS
            n_blocks = (V + per_block - 1) // per_block
            in_mask = (req.options.get("cut_in_mask", CUT_IN_MASK) and sequential == 0
                       and B * n_blocks <= CUT_IN_MASK_SPANS_PER_SM * sm_count(arrays))
            seg = per_block if in_mask else 0  # in_mask: the equal entries of each mask block's span counted
            lookback = 1 if in_mask and req.options.get("mask_counts", MASK_COUNTS) else 0
            # lookback: each span's published count, and the row's ticket in the last column, 0 before the mask
            thr, nties, _count, _hit, cut, seg_count = _select_raw(
                req, arrays, for_mask=True, zeroed_slots=(B, n_blocks + 1) if lookback else None)
            stream = arrays.stream()
            thr_bits = arrays.vector(thr, _BITS[dtype])
            cut = arrays.vector(cut)  # finish_row's cut index; the kernel scans the rows left at CUT_SCAN
            nties_v = arrays.vector(nties)
            if not lookback:
                seg_count = arrays.scratch((B, n_blocks) if in_mask else (1, 1), "int64")
            if in_mask and not lookback:
                kern.cut_count_kernel[(B, n_blocks), kern.THREADS, stream](
                    x_cut, sb, sv, V, fmt, thr_bits, cut, seg, seg_count
                )
            elif not in_mask:
                kern.cut_index_kernel[B, kern.THREADS, stream](
                    x_cut, sb, sv, V, fmt, thr_bits, nties_v, cut, sequential
                )
            if t_words is not None:  # the mask reads and writes words (its loads back to back)
                x, t_flat = x_words, t_words
            write_in_place = 1 if target is req.logits else 0
            mask_kernel[(B, n_blocks), kern.THREADS, stream](
                x, sb, sv, V, fmt, t_flat, tb, tv, write_in_place, thr_bits, cut, fill_bits(mask_value, dtype),
                loads_first, nties_v, seg, seg_count, lookback, _stamps(arrays, "mask", B * n_blocks, seg_count),
            )
    if not arrays.simulated:
        return target
    masked = _arrays.values_from_bits_numpy(target, req.lib, dtype, req.logits)
    if not inplace:
        return masked
    if req.lib == "torch":
        req.logits.copy_(masked)
    else:
        np.copyto(req.logits, masked)
    return req.logits


def _run_split(arrays, stream, x, stride_b, stride_v, B, V, rows, params, splits, outs, wide_rounds, fold,
               zeroed_slots=None):
    """Several blocks per row, ``SPLIT_ROWS`` rows per launch; partials combined in split order.
    ``wide_rounds``: how many split wide rounds the rows that miss take (top-p alone; 0: none);
    ``fold``: each round's pick runs in its pass's last block of the row.  Returns an int64 array of shape
    ``zeroed_slots``, cleared with the candidates' counters (None without ``zeroed_slots``)."""
    n_rows = min(B, SPLIT_ROWS)
    fmt, _ties, _trunc, cap, one, bins = params
    cand = arrays.scratch((n_rows, cap), "uint32")
    n_slots = 0 if zeroed_slots is None else int(np.prod(zeroed_slots))
    zeroed = arrays.scratch((n_rows + n_slots,), "int64")  # the candidates' counters, then the slots
    cand_count = zeroed[:n_rows]
    slots = None if zeroed_slots is None else zeroed[n_rows:].reshape(zeroed_slots)
    part = arrays.scratch((n_rows, splits, kern.NPART), "int64")
    cut_keys = arrays.scratch((n_rows,), "int64")
    cand_idx = arrays.scratch((n_rows, cap) if bins & kern.TIE_INDEX else (1, 1), "uint32")
    wst = arrays.scratch((n_rows if wide_rounds else 1, kern.SW_SIZE), "int64")
    gh = arrays.scratch((n_rows if wide_rounds else 1, kern.GH_SIZE, kern.WIDE_SLOTS), "int64")
    threads = kern.THREADS
    for row0 in range(0, B, n_rows):
        grid = (min(n_rows, B - row0), splits)
        kern.zero_kernel[1, threads, stream](zeroed)
        kern.scan_split_kernel[grid, threads, stream](
            x, stride_b, stride_v, V, row0, *rows, *params, splits, cand, cand_count, part, cut_keys, cand_idx,
            _stamps(arrays, "scan", grid[0] * splits, wst),
        )
        if rows[5] != kern.ARG_NONE:  # only top-p-only rows take it: none without p (2.0 us at B=64, H100)
            kern.mass_split_kernel[grid, threads, stream](
                x, stride_b, stride_v, V, row0, *rows, *params, splits, part, cut_keys
            )
        if wide_rounds:
            kern.wide_init_kernel[grid[0], threads, stream](
                x, stride_b, stride_v, V, row0, *rows, *params, splits, cand_count, part, cut_keys, wst, gh
            )
            for _ in range(wide_rounds):
                kern.wide_hist_kernel[grid, threads, stream](
                    x, stride_b, stride_v, V, row0, fmt, cap, one, splits, cand, wst, gh, fold
                )
                if not fold:
                    kern.wide_pick_kernel[grid[0], threads, stream](cap, wst, gh)
        if wide_rounds and arrays.simulated:  # for the tests: the rows' state after the rounds
            SIMULATED_WIDE_STATE.append(np.array(wst.copy_to_host() if hasattr(wst, "copy_to_host") else wst))
        kern.finish_split_kernel[grid[0], threads, stream](
            x, stride_b, stride_v, V, row0, *rows, *params, splits, cand, cand_count, part, cut_keys,
            1 if wide_rounds else 0, wst, *outs, cand_idx, _stamps(arrays, "finish", grid[0], wst)
        )
    return slots
