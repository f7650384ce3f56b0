"""Numba-CUDA kernels of the Qrita method (``shared/ALGORITHM.md``).

The flow is the NumPy backend's (``qrita/backends/numpy/select.py``), one thread
block per row:

1. sigma-truncation: mean and std of the first ``SAMPLE_SIZE`` entries, the cut
   ``t = mu + delta * sigma`` from the core LUTs;
2. one pass over the row: the max and the min keepable key with their
   multiplicities, the keepable count, and the candidates ``key > key(t)``
   gathered into a ``cap``-entry buffer in shared memory (overflow = miss);
   top-p-only rows take a second pass for the softmax denominator ``Z``;
3. the pivot search of :mod:`qrita.core.search` (its portable functions run here
   as device functions) over the candidates on a hit, over the row on a miss
   (the live keys are gathered into the buffer as soon as they fit);
4. the tie rules, and ``(threshold, num_ties, count, hit)`` written per row.

Exactness and determinism come from integer arithmetic.  Every value is mapped
to its float32 order key (``qrita.core.keys``; float16/bfloat16 widen exactly),
so the search is on integers, and top-p masses are fixed-point integers
``round(exp(x - max) * one)`` (``one = 2**40`` unless the row is very long).
Every per-pass statistic is therefore a sum, a max or a min of integers: the
block combines them with atomics in any order and gets the same bits, and the
split-row path (several blocks per row, :func:`scan_split_kernel` ...)
combines its per-block partials the same way (a slice a thread, atomics) and gets
the same bits as the one-block path.  Only the sample stats are floats, reduced in a fixed tree.

Under ``NUMBA_ENABLE_CUDASIM=1`` these same kernels run in Numba's simulator
(no warp intrinsics are used; blocks are ``THREADS = 4`` wide there, and the
device functions of this module are called as plain Python functions).
"""

from __future__ import annotations

import math

import numpy as np

# numba-cuda <= 0.30 registers an overload of np.row_stack (an alias of np.vstack) when
# it first compiles a kernel, and numpy 2.5 removed the alias: every compile then fails
# with AttributeError.  Restore the alias it expects (only when it is missing).
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import config as numba_config  # noqa: E402
from numba import cuda, float32, float64, int32, int64, uint32, uint64  # noqa: E402

from ...core import search as core_search  # noqa: E402
from ...core.keys import KEY_CONSTANTS
from ...core.lut import TOPK_DELTA, TOPP_DELTA
from ...core.spec import (
    CANDIDATE_CAPACITY,
    NUM_PIVOTS,
    SAMPLE_SIZE,
    TOPK_LUT_SIZE,
    TOPK_LUT_STEPS_PER_OCTAVE,
    TOPP_LUT_SIZE,
)

SIMULATED = bool(numba_config.ENABLE_CUDASIM)
# Threads per block (a power of two).  The simulator runs one Python thread per
# CUDA thread, so it gets narrow blocks; the kernels are the same.
THREADS = 4 if SIMULATED else 512
CAP = CANDIDATE_CAPACITY  # shared-memory candidate slots; options["capacity"] may use fewer


def _race_free_simulated_shared_arrays() -> None:
    """Make the simulator's ``cuda.shared.array`` safe when a block's threads reach it together.

    numba-cuda's simulator (0.30) keys a block's shared arrays by the caller's source line and
    creates one on first use with an unlocked look-up-then-insert, so two simulated threads that
    reach the line at once can each create their own array, and the block's "shared" memory is
    then split between them (seen as rare wrong answers once the interpreter switches threads
    often).  The replacement does the same look-up under a lock.  Only static shapes (the kernels
    here use no dynamic shared memory; shape 0 goes to the original)."""
    import sys
    import threading

    from numba.core import types as nb_types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    shared = getattr(kernelapi, "FakeCUDAShared", None)
    if shared is None or getattr(shared.array, "_qrita_locked", False):
        return
    original = shared.array
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None or not hasattr(self, "_allocations"):
            return original(self, shape, dtype, alignment)
        caller = sys._getframe(1)
        key = (caller.f_code.co_filename, caller.f_lineno)
        with lock:
            arr = self._allocations.get(key)
            if arr is None:
                np_dtype = numpy_support.as_dtype(dtype) if isinstance(dtype, nb_types.Type) else dtype
                arr = self._allocations[key] = np.empty(shape, np_dtype)
        return arr

    array._qrita_locked = True
    shared.array = array


if SIMULATED:
    _race_free_simulated_shared_arrays()


def device_function(fn):
    """``cuda.jit(device=True)``; under the simulator a plain call (why: the simulator's
    device-call wrapper costs ~50 us a call; kernels already see its fake ``cuda``)."""
    return fn if SIMULATED else cuda.jit(device=True)(fn)


def kernel(fn=None, *, min_blocks=2):
    """``cuda.jit`` with launch bounds ``(THREADS, min_blocks)``.  Why: unbounded, ptxas gives the
    search kernels up to 162 registers and a 512-thread block would not launch; 64 keep
    two blocks an SM resident.  A kernel of one block a row at small B (the split path's
    finish) takes ``min_blocks=1``: 128 registers, where 64 spilled about 700 bytes a thread in
    its search loop (sm_90, ``compile_check --ptxas``).  (The simulator takes no bounds.)"""
    if fn is None:
        return lambda f: kernel(f, min_blocks=min_blocks)
    return cuda.jit(fn) if SIMULATED else cuda.jit(launch_bounds=(THREADS, min_blocks))(fn)


# Probe builds only (benchmarks/probe_stamps.py sets STAMPS before anything compiles): thread 0 of each block of
# scan_split_kernel, finish_split_kernel and mask_kernel writes %globaltimer (ns, one clock for the whole GPU) and
# %clock64 (its SM's cycles) at its phases' ends into the kernel's ``stamps`` argument, a row of 2 * STAMP_SLOTS a
# block.  Off, the branch is a constant False and the stamps code compiles away (the launcher passes a small array
# it has anyway, which no kernel writes).
STAMPS = False
STAMP_SLOTS = 8
# ... and, for finish_split_kernel, the cycles at points inside its search (kernels.sub_stamp: finish_row's start,
# rank_select's packing, ranking and reading done) in its row's last STAMP_SUB columns
STAMP_SUB = 4


def _special_register_64(name):
    """A device function that reads the 64-bit special register ``%name`` (inline PTX)."""
    from llvmlite import ir
    from numba import types
    from numba.cuda.extending import intrinsic

    @intrinsic
    def read(typingctx):
        def codegen(context, builder, signature, args):
            asm = ir.InlineAsm(ir.FunctionType(ir.IntType(64), []), f"mov.u64 $0, %{name};", "=l",
                               side_effect=True)
            return builder.call(asm, [])

        return types.int64(), codegen

    return read


if SIMULATED:  # the simulator runs the kernels as Python: the host's clock for both
    import time

    def global_timer():
        return time.perf_counter_ns()

    sm_clock = global_timer
else:
    global_timer = _special_register_64("globaltimer")
    sm_clock = _special_register_64("clock64")


@device_function
def sub_stamp(hist, slot):
    """Probe builds (``STAMPS``): this SM's cycle count into the block's sub-stamp ``slot``, the slots past
    ``W_SIZE`` of the wide rounds' results (:func:`shared_hist`); thread 0."""
    if STAMPS:
        if cuda.threadIdx.x == 0:
            hist[5][W_SIZE + slot] = sm_clock()


@device_function
def stamp(stamps, i, slot):
    """Probe builds (``STAMPS``): the times of this block's phase ``slot`` into ``stamps[i]``; thread 0."""
    if STAMPS:
        if cuda.threadIdx.x == 0:
            stamps[i, 2 * slot] = global_timer()
            stamps[i, 2 * slot + 1] = sm_clock()


# The portable state machine of qrita.core.search, as device functions (not rewritten).
pivot = cuda.jit(device=True)(core_search.pivot)
classify_pivot = cuda.jit(device=True)(core_search.classify_pivot)
narrow_lo = cuda.jit(device=True)(core_search.narrow_lo)
narrow_hi = cuda.jit(device=True)(core_search.narrow_hi)
topk_num_ties = cuda.jit(device=True)(core_search.topk_num_ties)
STOP = core_search.STOP
BELOW = core_search.BELOW
ABOVE = core_search.ABOVE

# Every dtype is searched in the float32 key space (16-bit values widen exactly).
_KC = KEY_CONSTANTS["float32"]
SIGN = _KC.sign
MASK = _KC.mask
ABS_MASK = _KC.mask ^ _KC.sign
EXP_MASK = _KC.exp_mask
KEY_NEG_INF = _KC.key_neg_inf  # keys above it are keepable
KEY_POS_INF = _KC.key_pos_inf
MAX_ROUNDS = core_search.max_rounds(_KC.width, NUM_PIVOTS)
BIG = 1 << 40  # above every key: "no such key", and the no-cut sentinel
CUT_SCAN = -2  # finish_row's cut index of a row whose boundary group is cut: cut_index_kernel finds it

# Input formats: how the raw bits of one stored value become float32 bits.
FMT_F32 = 0
FMT_F16 = 1
FMT_BF16 = 2
FMT_OF_DTYPE = {"float32": FMT_F32, "float16": FMT_F16, "bfloat16": FMT_BF16}
# Paired 16-bit entries (launch's option pairs): a 16-bit row buffer passed as int32 words, ``x`` of dtype
# int32 (:func:`paired_buffer`), entry ``e`` (a 16-bit offset, as ``base`` and the strides stay) the low half
# of word ``e >> 1`` when ``e`` is even, the high half when odd (little-endian).  Only for rows of even length
# at even offsets with unit stride, so that a word never holds entries of two rows; a thread's whole-tile
# loads (:func:`load_keys`) and the mask (:func:`mask_kernel`) then move two entries a 4-byte access instead
# of one a 2-byte access.  The buffer's type decides, not an argument: each kernel's compiled variant holds
# one of the two load paths only (a runtime test kept both in the fp32 variant, whose select kernel then
# spilled 196 bytes a thread instead of 116, sm_90).

# Per-row k/p argument modes.
ARG_NONE = 0
ARG_SCALAR = 1
ARG_PER_ROW = 2

# Wide miss rounds (option wide_miss, on by default; the kernels' ``bins`` argument): a pass over the row
# that misses counts its live keys into WIDE_BINS bins of equal key width (plus one for the keys
# above them) instead of 3 pivots, so a round takes 8 bits of key off the range instead of 2.
WIDE_BINS = 256
WIDE_SLOTS = WIDE_BINS + 1  # the bins and the one above them (a constant: shared array shapes must be)
WIDE_ROUNDS = 5  # the range is at most 2**32 keys wide and each round takes 8 bits off it
# the bins are scanned in WIDE_CHUNKS chunks of WIDE_CHUNK bins, a thread a chunk (see wide_round)
WIDE_CHUNKS = min(THREADS, 32)
WIDE_CHUNK = (WIDE_SLOTS + WIDE_CHUNKS - 1) // WIDE_CHUNKS
# wide rounds over the candidate buffer (option wide_buffer) only while it holds more live keys than
# this (one a thread): below it a 3-pivot round over the buffer is a load a thread
WIDE_MIN_KEYS = THREADS
# A search over a buffer with at most RANK_MAX live keys ranks them instead (rank_select, bins bit 2):
# RANK_ITEMS keys a thread, each compared with every live key.  One key a thread on the GPU (the buffer
# of a top-k 50 or k100+p0.9 row that hits holds about 100-400 keys; the top-p stage of a k+p row has
# fewer than k live); more in the simulator, whose blocks have 4 threads, so that its tests take this path too.
RANK_ITEMS = 8 if SIMULATED else 1
RANK_MAX = THREADS * RANK_ITEMS
# bins >> RANK_LIVE_SHIFT: rank once at most this many keys are live (launch's option rank_live, <= RANK_MAX);
# the rank's cost grows as the square of the live keys, a 3-pivot round's as their number
RANK_LIVE_SHIFT = 10
# bins bit 256 (launch's option scan_prefetch): scan_split_kernel issues a tile's loads a tile ahead
SCAN_PREFETCH = 256
# bins bit 512 (launch's option tie_index): the split scan (a tile ahead, as under SCAN_PREFETCH) keeps each slotted
# candidate's entry index, and finish_split_kernel settles a cut boundary group's masking index from them
# (tie_index_cut) where all of the group is among the candidates and it has at most TIE_MAX entries
TIE_INDEX = 512
TIE_MAX = 512
# results of a wide round, written by the thread whose chunk of bins holds the answer (see wide_round)
W_STOP, W_LO, W_HI, W_CNT_LO, W_ABOVE, W_N_EQ, W_CNT_ABOVE, W_SIZE = range(8)
W_RES = W_SIZE + STAMP_SUB  # the shared results' slots; past W_SIZE probe builds' sub-stamps (sub_stamp)

# Split wide rounds (launch.SPLIT_WIDE_ROUNDS, option split_wide): a top-p-only row of the split path
# that misses takes its first wide rounds with all of its blocks (wide_hist_kernel fills the row's bins in
# global memory, wide_pick_kernel picks the bin), then gathers its live keys with them; finish_row starts
# from there.  The row's state wst[b, :] (fields SW_*) and its mode (SW_NONE: nothing for the finish to
# take; SW_OPEN: a range, its keys in the row, more wide rounds; SW_ROW: a range, its keys in the row, no
# more wide rounds; SW_FIT: they fit the buffer, to be gathered; SW_GATHERED: in cand[b]; SW_STOP: answered).
(SW_MODE, SW_LO, SW_HI, SW_CNT_LO, SW_TARGET, SW_GMAX, SW_Z, SW_ABOVE, SW_N_EQ, SW_CNT_ABOVE, SW_NGATH,
 SW_TICKET, SW_SIZE) = range(13)
SW_NONE, SW_OPEN, SW_ROW, SW_FIT, SW_GATHERED, SW_STOP = range(6)
# The row's bins in global memory, gh[b, field, m]: count, mass, smallest and largest key.
GH_N, GH_C, GH_MIN, GH_MAX, GH_SIZE = range(5)

# Two cuts (bins bit 3, option two_cuts; row_cut): the higher cut gathers about cap // TWO_CUT_SHARE keys
# (the Triton backend's two_cut_share default, measured there: docs/triton.md).
TWO_CUT_SHARE = 32.0

# Slots of one row of the block accumulator ring (see end_pass).
NS = 4 * NUM_PIVOTS
ACC_SIZE = 3 * NS
# Fields of the split path's per-(row, block) partials.
P_MAX, P_NMAX, P_MIN, P_NMIN, P_NKEEP, P_NCAND, P_Z, P_CMASS, NPART = range(9)


# ---- bits, keys and values ----------------------------------------------------------


@device_function
def f32_from_bits(u):
    """float32 with raw bits ``u`` (an int64 holding 32 bits)."""
    a = cuda.local.array(1, uint32)
    a[0] = u
    return a.view(np.float32)[0]


@device_function
def bits_from_f32(v):
    """Raw bits of the float32 ``v``, as int64."""
    a = cuda.local.array(1, float32)
    a[0] = v
    return int64(a.view(np.uint32)[0])


def paired_buffer(x):
    """Whether ``x`` holds paired 16-bit entries (an int32 buffer: the note after ``FMT_OF_DTYPE``); on the GPU a
    constant of the compiled variant (the overload below), in the simulator a test of the array's dtype."""
    return x.dtype == np.int32


if not SIMULATED:
    from numba.core import types as _nb_types
    from numba.core.extending import overload

    @overload(paired_buffer, target="cuda")
    def _paired_buffer_of_type(x):
        paired = x.dtype == _nb_types.int32
        return lambda x: paired


@device_function
def f32_bits_of(u, fmt):
    """float32 bits of one stored value with raw bits ``u`` (exact widening)."""
    u = int64(u)
    if fmt == FMT_BF16:
        return u << 16
    if fmt == FMT_F16:
        sign = (u & 0x8000) << 16
        e = (u >> 10) & 0x1F
        m = u & 0x3FF
        if e == 0x1F:  # inf / NaN
            return sign | EXP_MASK | (m << 13)
        if e == 0:  # zero or subnormal: m * 2**-24 is exact in float32
            return sign | bits_from_f32(float32(m) * float32(5.9604644775390625e-08))
        return sign | ((e + 112) << 23) | (m << 13)
    return u


@device_function
def out_bits(u, fmt):
    """Raw bits in the input format of a float32 (bits ``u``) that it represents exactly."""
    if fmt == FMT_BF16:
        return u >> 16
    if fmt == FMT_F16:
        sign = (u >> 16) & 0x8000
        a = u & ABS_MASK
        if a >= EXP_MASK:
            return sign | 0x7C00 | ((a & 0x7FFFFF) >> 13)
        if a >= 0x38800000:  # normal float16
            return sign | (((a >> 23) - 112) << 10) | ((a >> 13) & 0x3FF)
        return sign | int64(f32_from_bits(a) * float32(16777216.0))
    return u


@device_function
def key_of_bits(u):
    """Order key of float32 bits (``qrita.core.keys``): NaN -> 0, -0.0 -> key of +0.0.

    On 32 bits and by selects, not branches: a negative value's bits all flipped, a positive
    value's sign set (Numba types integer arithmetic as 64-bit; with ``u`` cut to 32 bits first,
    the compiler keeps each compare one instruction)."""
    v = uint32(u)
    key = v ^ (uint32(MASK) if v >= uint32(SIGN) else uint32(SIGN))
    key = uint32(SIGN) if v == uint32(SIGN) else key
    key = uint32(0) if (v & uint32(ABS_MASK)) > uint32(EXP_MASK) else key
    return int64(key)


@device_function
def bits_of_key(key):
    """float32 bits of a key (inverse of key_of_bits)."""
    if key & SIGN:
        return key ^ SIGN
    return key ^ MASK


# A row travels through the device functions as ``row = (x, base, stride_v, V, fmt)``:
# the flat raw bits, the row's first element, the element stride, the row length and
# the input format.  Top-p weights take ``ref = (m_key, m_val, one)``: the row max
# (key and float32 value) and the fixed-point one.


@device_function
def raw_at(x, e):
    """Raw bits (int64) of the entry at offset ``e`` of the buffer ``x`` (paired: half a word)."""
    if paired_buffer(x):
        return (int64(x[e >> 1]) >> ((e & 1) * 16)) & 0xFFFF
    return int64(x[e])


@device_function
def load_key(row, i):
    """Key of entry ``i`` of the row (int64 offsets)."""
    x, base, stride_v, _V, fmt = row
    return key_of_bits(f32_bits_of(raw_at(x, base + i * stride_v), fmt))


@device_function
def load_value(row, i):
    """float32 value of entry ``i`` of the row."""
    x, base, stride_v, _V, fmt = row
    return f32_from_bits(f32_bits_of(raw_at(x, base + i * stride_v), fmt))


# Entries a thread loads back to back before it processes any of them, in the passes
# over the row.  Why: a loop that loads one entry and then processes it (branches,
# atomics) has about one 4-byte load in flight a thread; at 1024 threads an SM that
# bounds the pass at about 0.5 TB/s on an H200, the Numba backend's measured rate.
ITEMS = 4 if SIMULATED else 8
# The miss search's passes over the row (gather_pass, pivot_pass) run inside the search
# loop, with its state live: fewer in flight there (8 made finish_split_kernel spill
# inside those loops under the 64-register cap; 4 spill less).
MISS_ITEMS = 4


@device_function
def load_keys(row, i0, keys, items):
    """``keys[j]`` = the key of entry ``i0 + j * THREADS``, ``j < items`` (all in the
    row; keys fit in 32 bits).  The loads go first, back to back; the index is unsigned
    (offsets are never negative: no wraparound test), one 64-bit add an entry; the
    format is tested once a tile, so each branch widens with a constant format.

    Paired entries (``items`` even, the tile's first entry ``i0 - threadIdx.x`` even): the same tile of
    ``THREADS * items`` entries, but a thread loads ``items // 2`` words, word ``j`` holding entries
    ``2 * (threadIdx.x + j * THREADS)`` and the next one of the tile, into ``keys[2 j]`` and ``keys[2 j + 1]``.
    Every caller's use of a tile's keys is free of their order (counts, sums, maxima), or takes keys
    ``[u * n, (u + 1) * n)`` as chunk ``u`` of ``THREADS * n`` entries, ``n`` even (:func:`cut_index_kernel`),
    which the pairing keeps.  (:func:`load_raw` is its loads alone.)"""
    x, base, stride_v, _V, fmt = row
    if paired_buffer(x):
        t = cuda.threadIdx.x
        w = uint64((base + i0 - t) >> 1) + uint64(t)
        for j in range(items // 2):
            word = uint32(x[w])
            keys[2 * j] = word & uint32(0xFFFF)
            keys[2 * j + 1] = word >> uint32(16)
            w += uint64(THREADS)
    else:
        at = uint64(base + i0 * stride_v)
        step = uint64(THREADS * stride_v)
        for j in range(items):
            keys[j] = x[at]
            at += step
    keys_of_raw(keys, keys, items, fmt)


@device_function
def load_raw(row, i0, raw, items):
    """The loads of :func:`load_keys`, back to back, and nothing else: ``raw[j]`` = the raw bits of entry
    ``i0 + j * THREADS`` (paired: ``raw[j]``, ``j < items // 2``, the word of :func:`load_keys`'s ``keys[2 j]``
    and ``keys[2 j + 1]``), so that a caller can issue a tile's loads and use the registers later
    (:func:`scan_slice_prefetch`).  The index is unsigned (offsets are never negative: no wraparound test),
    one 64-bit add an entry."""
    x, base, stride_v, _V, _fmt = row
    if paired_buffer(x):
        t = cuda.threadIdx.x
        w = uint64((base + i0 - t) >> 1) + uint64(t)
        for j in range(items // 2):
            raw[j] = uint32(x[w])
            w += uint64(THREADS)
    else:
        at = uint64(base + i0 * stride_v)
        step = uint64(THREADS * stride_v)
        for j in range(items):
            raw[j] = x[at]
            at += step


@device_function
def keys_of_loaded(row, raw, items):
    """:func:`load_raw`'s registers made keys in place (paired words split into their two entries,
    the last word first, so that no word is overwritten before it is read); the format tested once a
    tile, so each branch widens with a constant format."""
    x, _base, _stride_v, _V, fmt = row
    if paired_buffer(x):
        for jj in range(items // 2):
            j = items // 2 - 1 - jj
            word = raw[j]
            raw[2 * j + 1] = word >> uint32(16)
            raw[2 * j] = word & uint32(0xFFFF)
    keys_of_raw(raw, raw, items, fmt)


@device_function
def keys_of_raw(raw, keys, items, fmt):
    """``keys[j]`` = the key of the raw bits ``raw[j]``, ``j < items`` (``keys`` may be ``raw``); the
    format tested once, so each loop widens with a constant format."""
    if fmt == FMT_F32:
        for j in range(items):
            keys[j] = key_of_bits(int64(raw[j]))
    elif fmt == FMT_BF16:
        for j in range(items):
            keys[j] = key_of_bits(f32_bits_of(raw[j], FMT_BF16))
    else:
        for j in range(items):
            keys[j] = key_of_bits(f32_bits_of(raw[j], FMT_F16))


@device_function
def topp_target(p, mass):
    """The fixed-point mass a top-p search must reach, ``max(floor(p * mass), 1)`` (every caller's the
    same bits: the finish and the split wide rounds' start must agree)."""
    return max(int64(p * float64(mass)), int64(1))


@device_function
def candidates_fit(cut_key, n_cand, cap):
    """Whether the row had a cut and its candidates fit the buffer (a hit needs it)."""
    return cut_key != BIG and n_cand <= cap


@device_function
def weight_of(key, ref):
    """Fixed-point top-p weight ``round(exp(x - max) * one)``; with a ``+inf`` max
    the ``+inf`` entries share the mass (weight ``one``, the rest 0)."""
    m_key, m_val, one = ref
    if key <= KEY_NEG_INF:
        return int64(0)
    if m_key == KEY_POS_INF:
        if key == KEY_POS_INF:
            return int64(one)
        return int64(0)
    v = f32_from_bits(bits_of_key(key))
    if v < m_val - float32(30.0):  # why: exp(-30) * 2**40 < 0.5 rounds to 0; skips the exp
        return int64(0)
    return int64(math.exp(v - m_val) * float64(one) + 0.5)


@device_function
def topp_ties(target, mass_above, weight, n_eq, ties_all):
    """``qrita.core.search.topp_num_ties`` in integer arithmetic: the smallest n in
    ``[1, n_eq]`` with ``mass_above + n * weight >= target`` (``n_eq`` under "all")."""
    if ties_all != 0 or weight <= 0:
        return n_eq
    n = (target - mass_above + weight - 1) // weight
    if n < 1:
        n = int64(1)
    if n > n_eq:
        n = n_eq
    return n


# ---- block-level reductions ------------------------------------------------------------


@device_function
def end_pass(acc, r):
    """Barrier that ends pass ``r``; returns ``r + 1``.

    Pass ``r`` accumulates into row ``r % 3`` of the shared ring ``acc`` with
    atomics (integers: any order gives the same bits) and every thread reads its
    results right after this barrier.  Why a ring of three: the row cleared
    here was last read before this barrier and is next written after the next
    one, so each pass costs one barrier.
    """
    cuda.syncthreads()
    row = ((r + 2) % 3) * NS
    for s in range(cuda.threadIdx.x, NS, THREADS):
        acc[row + s] = 0
    return r + 1


# ---- warp-aggregated shared atomics -------------------------------------------------------
# Why: the accumulator ring is int64, and ptxas makes every 64-bit shared atomic a compare-and-swap
# loop on sm_90 (ATOMS.CAST.SPIN.64).  At the end of a pass all THREADS threads hit the same few
# slots at once, so the loops serialise; summed over each warp with shuffles first, 32 times fewer
# atomics reach a slot.  Integer sums, maxima and slot claims: the same bits in any order.  Every
# lane of a warp must call these together (no divergence).  The simulator has no warp intrinsics
# and runs THREADS = 4 threads a block: there each thread is its own "warp" and does its own atomic.
# WARP_AGGREGATE = False (set before the first launch: Numba reads globals when it compiles) takes
# that path on the GPU too, for A/B runs (docs/bench/next-numba-atomics/).
WARP = 32
FULL_MASK = 0xFFFFFFFF
WARP_AGGREGATE = not SIMULATED


@device_function
def is_lead():
    """Whether this thread adds its warp's aggregate (lane 0; every thread under the simulator)."""
    return not WARP_AGGREGATE or (cuda.threadIdx.x & (WARP - 1)) == 0


@device_function
def lanes_sum(v, width):
    """Sum of ``v`` over ``width`` consecutive lanes (a power of two, at most a warp, the first lane a multiple of
    it), valid in that first lane: shuffles down.  GPU only (the simulator has no warp intrinsics)."""
    d = width // 2
    while d > 0:
        v += cuda.shfl_down_sync(FULL_MASK, v, d)
        d >>= 1
    return v


@device_function
def warp_sum(v):
    """Sum of the int64 ``v`` over the warp, valid in lane 0 (``v`` itself under the simulator)."""
    if WARP_AGGREGATE:
        v = lanes_sum(v, WARP)
    return v


@device_function
def warp_max(v):
    """Maximum of the int64 ``v`` over the warp, valid in lane 0 (``v`` under the simulator)."""
    if WARP_AGGREGATE:
        d = WARP // 2
        while d > 0:
            v = max(v, cuda.shfl_down_sync(FULL_MASK, v, d))
            d >>= 1
    return v


@device_function
def block_add(acc, i, v):
    """``acc[i] += v`` for the block: the warp's sum, one atomic a warp (none for 0)."""
    v = warp_sum(v)
    if is_lead() and v != 0:
        cuda.atomic.add(acc, i, v)


@device_function
def block_max(acc, i, v):
    """``acc[i] = max(acc[i], v)`` for the block (``v >= 0``; slots start at 0): one atomic a warp."""
    v = warp_max(v)
    if is_lead() and v > 0:
        cuda.atomic.max(acc, i, v)


@device_function
def claim_slot(acc, i, take):
    """Slot claims on the counter ``acc[i]``: returns this thread's slot if ``take`` (the counter's
    old value plus its rank among the warp's takers), anything otherwise.  One atomic a warp."""
    if not WARP_AGGREGATE:
        slot = int64(0)
        if take:
            slot = cuda.atomic.add(acc, i, 1)
        return slot
    mask = cuda.ballot_sync(FULL_MASK, take)
    lane = cuda.threadIdx.x & (WARP - 1)
    base = int64(0)
    if lane == 0 and mask != 0:
        base = cuda.atomic.add(acc, i, int64(cuda.popc(mask)))
    base = cuda.shfl_sync(FULL_MASK, base, 0)
    below = mask & ((uint32(1) << uint32(lane)) - uint32(1))
    return base + int64(cuda.popc(below))


@device_function
def block_sum_f64(red, a, b):
    """Block sums of two float64 values in a fixed tree order (deterministic)."""
    tid = cuda.threadIdx.x
    cuda.syncthreads()  # the previous result has been read
    red[0, tid] = a
    red[1, tid] = b
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if tid < step:
            red[0, tid] += red[0, tid + step]
            red[1, tid] += red[1, tid + step]
        cuda.syncthreads()
        step //= 2
    return red[0, 0], red[1, 0]


# ---- per-row phases ----------------------------------------------------------------------


@device_function
def row_params(b, V, k_arr, k_scalar, k_mode, p_arr, p_scalar, p_mode_arg):
    """``(K, p, p_mode)`` of row ``b``: K = 0 when top-k is off; p_mode 0 = off,
    1 = top-1 (``p <= 0``), 2 = top-p."""
    k = int64(k_scalar)
    if k_mode == ARG_PER_ROW:
        k = int64(k_arr[b])
    K = int64(0)
    if k_mode != ARG_NONE and k > 0 and k < V:
        K = k
    p = float64(p_scalar)
    if p_mode_arg == ARG_PER_ROW:
        p = float64(p_arr[b])
    if p_mode_arg == ARG_NONE or p != p:
        p = 1.0
    p_mode = int64(2)
    if p >= 1.0:
        p_mode = int64(0)
    elif p <= 0.0:
        p_mode = int64(1)
    return K, p, p_mode


@device_function
def topk_delta(n_items, k):
    """``TOPK_DELTA``'s cut for the top ``k`` of ``n_items`` Gaussian entries, in sigmas."""
    topk_lut = cuda.const.array_like(TOPK_DELTA)
    i = int64(math.floor(math.log2(n_items / k) * TOPK_LUT_STEPS_PER_OCTAVE))
    return float64(topk_lut[min(max(i, 0), TOPK_LUT_SIZE - 1)])


@device_function
def row_cut(row, K, p, p_mode, truncation, red, cap, bins):
    """Key of the sigma-truncation cut ``t = mu + delta * sigma`` of a row, or BIG
    (no cut).  The same sample and the same tree every time: batch invariance.

    Two cuts (``bins`` bit 3, option ``two_cuts``): a top-p-only row whose model predicts more
    than ``cap`` entries above ``t`` (``t`` below the top-k cut for ``cap`` of the row's expected
    finite entries) gathers above the top-k cut for ``cap // TWO_CUT_SHARE`` of them instead, if
    that is higher.  A row whose mass sits in a few strong logits over a wide floor (``t`` lands
    in the floor: LLM-like rows, about 42000 entries above ``t`` at V=131072) then hits; a row
    whose boundary lies below the higher cut misses as it would have with ``t`` (its buffer
    overflowed)."""
    if truncation == 0 or (K == 0 and p_mode != 2):
        return int64(BIG)
    V = row[3]
    n_sample = min(V, SAMPLE_SIZE)
    n = 0.0
    s = 0.0
    for i in range(cuda.threadIdx.x, n_sample, THREADS):
        v = load_value(row, i)
        if math.isfinite(v):
            n += 1.0
            s += float64(v)
    n, s = block_sum_f64(red, n, s)
    mu = s / max(n, 1.0)
    ss = 0.0
    for i in range(cuda.threadIdx.x, n_sample, THREADS):
        v = load_value(row, i)
        if math.isfinite(v):
            d = float64(v) - mu
            ss += d * d
    ss, _unused = block_sum_f64(red, ss, 0.0)
    sigma = math.sqrt(ss / max(n, 1.0))
    if n < 2.0:
        return int64(BIG)
    topp_lut = cuda.const.array_like(TOPP_DELTA)
    if K > 0:
        delta = topk_delta(float64(V), float64(K))
    else:
        i = int64(math.ceil(p * (TOPP_LUT_SIZE - 1)))
        delta = float64(topp_lut[min(max(i, 0), TOPP_LUT_SIZE - 1)]) + sigma
    t = mu + delta * sigma
    if (bins & 8) != 0 and K == 0 and p_mode == 2:
        n_eff = max(n * (float64(V) / float64(n_sample)), 1.0)  # the finite entries the sample predicts
        if n_eff > float64(cap):
            t_cap = mu + topk_delta(n_eff, float64(cap)) * sigma
            t_two = mu + topk_delta(n_eff, float64(cap) / TWO_CUT_SHARE) * sigma
            if t < t_cap and t_two > t:
                t = t_two
    if t != t:
        return int64(BIG)
    return key_of_bits(bits_from_f32(float32(t)))


@device_function
def scan_step32(k, lo_cand, neg, cand, cand_count, cand_slot, cap, st, e=0, cand_idx=None):
    """One entry of :func:`scan_slice`, key ``k`` (uint32): ``st`` = (max key, #max, min keepable key or
    NO_KEY32, #min, #keepable, #candidates not slotted), keys uint32 and counts int32; a candidate is
    ``k >= lo_cand`` (the cut key + 1, clamped to 32 bits).  With ``cand_idx`` (the split scan under the
    option ``tie_index``) a slotted candidate's entry index ``e`` goes to the same slot of ``cand_idx``
    (without it, the branch is pruned when Numba compiles: the select kernel's code is unchanged).
    On 32 bits since session 36: Numba types integer arithmetic as 64-bit, and each compare and count of the
    64-bit step was a pair of instructions (sm_90: a non-candidate entry about 24 instructions, now about 12)."""
    l_max, n_max, l_min, n_min, n_keep, n_over = st
    if k > l_max:
        l_max = k
        n_max = int32(0)
    if k == l_max:
        n_max = int32(n_max + 1)
    if k > neg:
        n_keep = int32(n_keep + 1)
        if k < l_min:
            l_min = k
            n_min = int32(0)
        if k == l_min:
            n_min = int32(n_min + 1)
        if k >= lo_cand:
            if cand_count[cand_slot] < cap:  # why: no atomics once the buffer is full
                slot = cuda.atomic.add(cand_count, cand_slot, 1)
                if slot < cap:
                    cand[slot] = k
                    if cand_idx is not None:
                        cand_idx[slot] = uint32(e)
            else:
                n_over = int32(n_over + 1)
    return (l_max, n_max, l_min, n_min, n_keep, n_over)


NO_KEY32 = 0xFFFFFFFF  # above every key (the largest is +inf's, 0xFF800000): no keepable key yet


@device_function
def scan_slice(row, start, stop, cut_key, cand, cand_count, cand_slot, cap, acc, r):
    """One pass over entries ``[start, stop)`` of a row.

    Gathers the candidates ``key > cut_key`` into ``cand`` (slots counted in
    ``cand_count[cand_slot]``; past ``cap`` they are only counted).  Returns
    ``(r, (max key, #max, min keepable key, #min, #keepable, #candidates not
    slotted))``; the min is BIG when nothing is keepable.  Whole tiles of
    ``THREADS * ITEMS`` entries first (:func:`load_keys`), then the rest an entry a
    thread; every statistic is an integer max, min or count, so the order is free.
    A thread's statistics are 32-bit (:func:`scan_step32`; a thread without entries ends
    with max 0 and #max 0, which adds nothing below, as the 64-bit step's -1 did).
    (:func:`scan_slice_prefetch` is the same pass a tile ahead, through helpers: kept apart so that
    :func:`select_kernel`'s code, whose registers are at their cap, stays as it was.)
    """
    # cut_key is a key (< 2**32) or BIG: k > cut_key <=> k >= cut_key + 1, and a bound of
    # 2**32 or more becomes NO_KEY32, which no key reaches
    lo_cand = uint32(min(cut_key + 1, NO_KEY32))
    neg = uint32(KEY_NEG_INF)
    st = (uint32(0), int32(0), uint32(NO_KEY32), int32(0), int32(0), int32(0))
    keys = cuda.local.array(ITEMS, uint32)
    tile = THREADS * ITEMS
    n_tiles = (stop - start) // tile
    for t in range(n_tiles):
        load_keys(row, start + t * tile + cuda.threadIdx.x, keys, ITEMS)
        for j in range(ITEMS):
            st = scan_step32(keys[j], lo_cand, neg, cand, cand_count, cand_slot, cap, st)
    for i in range(start + n_tiles * tile + cuda.threadIdx.x, stop, THREADS):
        st = scan_step32(uint32(load_key(row, i)), lo_cand, neg, cand, cand_count, cand_slot, cap, st)
    l_max32, n_max32, l_min32, n_min32, n_keep32, n_over32 = st
    l_max = int64(l_max32)
    n_max = int64(n_max32)
    l_min = int64(BIG) if l_min32 == NO_KEY32 else int64(l_min32)
    n_min = int64(n_min32)
    n_keep = int64(n_keep32)
    n_over = int64(n_over32)
    at = (r % 3) * NS
    # the max slot starts at 0 and keys are >= 0: a thread without entries (max 0, #max 0) adds nothing
    block_max(acc, at + 0, l_max)
    block_max(acc, at + 1, BIG - l_min)
    block_add(acc, at + 2, n_keep)
    block_add(acc, at + 3, n_over)
    r = end_pass(acc, r)
    g_max = acc[at + 0]
    g_min = BIG - acc[at + 1]
    g_keep = acc[at + 2]
    g_over = acc[at + 3]
    at = (r % 3) * NS
    block_add(acc, at + 0, n_max if l_max == g_max else int64(0))
    block_add(acc, at + 1, n_min if l_min == g_min else int64(0))
    r = end_pass(acc, r)
    return r, (g_max, acc[at + 0], g_min, acc[at + 1], g_keep, g_over)


@device_function
def scan_slice_prefetch(row, start, stop, cut_key, keys_a, cand, cand_count, cand_slot, cap, acc, r, cand_idx):
    """:func:`scan_slice` with the next tile's loads issued before a tile is processed (two register
    tiles, ``keys_a`` and a local one, taking turns), so that a thread has two tiles' bytes in flight
    and its compares overlap the next loads.  ``keys_a`` holds the first tile's :func:`load_raw` on
    entry (if ``[start, stop)`` has a whole tile): the caller issues them before it computes the cut
    (:func:`scan_split_kernel`, option ``scan_prefetch``).  The same statistics and the same
    candidates (in another slot order, as any run's atomics may give: the searches are free of it).
    ``cand_idx`` (or None): each slotted candidate's entry index, in its slot (option ``tie_index``)."""
    lo_cand, neg, st = scan_start(cut_key)
    keys_b = cuda.local.array(ITEMS, uint32)
    tile = THREADS * ITEMS
    n_tiles = (stop - start) // tile
    first = start + cuda.threadIdx.x
    for t in range(0, n_tiles, 2):
        if t + 1 < n_tiles:
            load_raw(row, first + (t + 1) * tile, keys_b, ITEMS)
        keys_of_loaded(row, keys_a, ITEMS)
        st = scan_tile(row, keys_a, first + t * tile, lo_cand, neg, cand, cand_count, cand_slot, cap, st, cand_idx)
        if t + 1 < n_tiles:
            if t + 2 < n_tiles:
                load_raw(row, first + (t + 2) * tile, keys_a, ITEMS)
            keys_of_loaded(row, keys_b, ITEMS)
            st = scan_tile(row, keys_b, first + (t + 1) * tile, lo_cand, neg, cand, cand_count, cand_slot, cap, st,
                           cand_idx)
    return scan_end(row, start + n_tiles * tile, stop, lo_cand, neg, cand, cand_count, cand_slot, cap, st, acc, r,
                    cand_idx)


@device_function
def scan_start(cut_key):
    """A scan's candidate bound, keepable bound and empty statistics (:func:`scan_step32`)."""
    # cut_key is a key (< 2**32) or BIG: k > cut_key <=> k >= cut_key + 1, and a bound of
    # 2**32 or more becomes NO_KEY32, which no key reaches
    lo_cand = uint32(min(cut_key + 1, NO_KEY32))
    neg = uint32(KEY_NEG_INF)
    return lo_cand, neg, (uint32(0), int32(0), uint32(NO_KEY32), int32(0), int32(0), int32(0))


@device_function
def scan_tile(row, keys, i0, lo_cand, neg, cand, cand_count, cand_slot, cap, st, cand_idx):
    """:func:`scan_step32` over a thread's ``ITEMS`` keys of the tile whose entry ``i0`` is this thread's first
    (:func:`load_keys`' layout: entry ``i0 + j * THREADS``, or paired, the two halves of word ``j // 2``)."""
    paired = paired_buffer(row[0])
    t = cuda.threadIdx.x
    for j in range(ITEMS):
        e = i0 + j * THREADS
        if cand_idx is not None and paired:  # the index only where it is stored (None: pruned when Numba compiles)
            e = i0 - t + 2 * (t + (j >> 1) * THREADS) + (j & 1)
        st = scan_step32(keys[j], lo_cand, neg, cand, cand_count, cand_slot, cap, st, e, cand_idx)
    return st


@device_function
def scan_end(row, i0, stop, lo_cand, neg, cand, cand_count, cand_slot, cap, st, acc, r, cand_idx):
    """A scan's entries ``[i0, stop)`` past its whole tiles, an entry a thread, then the block's
    statistics from every thread's (two passes of the ``acc`` ring); returns what :func:`scan_slice` does."""
    for i in range(i0 + cuda.threadIdx.x, stop, THREADS):
        st = scan_step32(uint32(load_key(row, i)), lo_cand, neg, cand, cand_count, cand_slot, cap, st, i, cand_idx)
    l_max32, n_max32, l_min32, n_min32, n_keep32, n_over32 = st
    l_max = int64(l_max32)
    n_max = int64(n_max32)
    l_min = int64(BIG) if l_min32 == NO_KEY32 else int64(l_min32)
    n_min = int64(n_min32)
    n_keep = int64(n_keep32)
    n_over = int64(n_over32)
    at = (r % 3) * NS
    # the max slot starts at 0 and keys are >= 0: a thread without entries (max 0, #max 0) adds nothing
    block_max(acc, at + 0, l_max)
    block_max(acc, at + 1, BIG - l_min)
    block_add(acc, at + 2, n_keep)
    block_add(acc, at + 3, n_over)
    r = end_pass(acc, r)
    g_max = acc[at + 0]
    g_min = BIG - acc[at + 1]
    g_keep = acc[at + 2]
    g_over = acc[at + 3]
    at = (r % 3) * NS
    block_add(acc, at + 0, n_max if l_max == g_max else int64(0))
    block_add(acc, at + 1, n_min if l_min == g_min else int64(0))
    r = end_pass(acc, r)
    return r, (g_max, acc[at + 0], g_min, acc[at + 1], g_keep, g_over)


@device_function
def mass_slice(row, start, stop, cut_key, ref, acc, r):
    """Fixed-point softmax mass of entries ``[start, stop)``, and of its candidates
    ``key > cut_key``.  Returns ``(r, Z, candidate mass)``."""
    z = int64(0)
    zc = int64(0)
    keys = cuda.local.array(ITEMS, uint32)
    tile = THREADS * ITEMS
    n_tiles = (stop - start) // tile
    for t in range(n_tiles):
        load_keys(row, start + t * tile + cuda.threadIdx.x, keys, ITEMS)
        for j in range(ITEMS):
            key = int64(keys[j])
            w = weight_of(key, ref)
            z += w
            if key > cut_key:
                zc += w
    for i in range(start + n_tiles * tile + cuda.threadIdx.x, stop, THREADS):
        key = load_key(row, i)
        w = weight_of(key, ref)
        z += w
        if key > cut_key:
            zc += w
    at = (r % 3) * NS
    block_add(acc, at + 0, z)
    block_add(acc, at + 1, zc)
    r = end_pass(acc, r)
    return r, acc[at + 0], acc[at + 1]


@device_function
def gather_slice(row, start, stop, lo, dst, counter, ci, cap):
    """Every key ``> lo`` of entries ``[start, stop)`` of the row into ``dst`` (shared or global), a
    slot each from the counter ``counter[ci]`` (:func:`claim_slot`, one atomic a warp); past ``cap``
    they are only counted."""
    keys = cuda.local.array(MISS_ITEMS, uint32)
    tile = THREADS * MISS_ITEMS
    n_tiles = (stop - start) // tile
    for t in range(n_tiles):
        load_keys(row, start + t * tile + cuda.threadIdx.x, keys, MISS_ITEMS)
        for j in range(MISS_ITEMS):
            key = int64(keys[j])
            slot = claim_slot(counter, ci, key > lo)
            if key > lo and slot < cap:
                dst[slot] = key
    # the rest: every thread takes the same trip count (claim_slot needs whole warps)
    for i0 in range(start + n_tiles * tile, stop, THREADS):
        i = i0 + cuda.threadIdx.x
        key = int64(0)
        take = False
        if i < stop:
            key = load_key(row, i)
            take = key > lo
        slot = claim_slot(counter, ci, take)
        if take and slot < cap:
            dst[slot] = key


@device_function
def gather_pass(row, lo, buf, cap, acc, r):
    """Gather every key ``> lo`` of the row into ``buf``; returns ``(r, how many)``
    (more than ``cap`` means they did not fit)."""
    at = (r % 3) * NS
    gather_slice(row, int64(0), row[3], lo, buf, acc, at + 0, cap)
    r = end_pass(acc, r)
    return r, acc[at + 0]


@device_function
def pivot_add(key, t, weighted, ref, l_c, l_n, l_z, l_nz):
    """One entry of :func:`pivot_pass` into the thread's per-pivot stats."""
    if key > t[0]:
        w = int64(1)
        if weighted:
            w = weight_of(key, ref)
        for j in range(NUM_PIVOTS):
            if key > t[j]:
                l_c[j] += w
                l_n[j] += 1
                if key < l_z[j]:
                    l_z[j] = key
                    l_nz[j] = 0
                if key == l_z[j]:
                    l_nz[j] += 1


@device_function
def pivot_pass(row, buf, in_buf, n_items, taus, weighted, ref, acc, r, stats):
    """Per-pivot stats over the source (``buf[:n_items]`` when ``in_buf``, else the
    row), for pivots ``taus[0] <= taus[1] <= ...`` (unused pivots are BIG).

    Fills ``stats = (c, cnt, zmn, nz)``: ``c[j]`` the count (or mass, when
    ``weighted``) of the keys ``> taus[j]``, ``cnt[j]`` their count, ``zmn[j]``
    the smallest of them (BIG if none), ``nz[j]`` how many equal it.  Returns ``r``.
    """
    c, cnt, zmn, nz = stats
    # why constant-trip loops over NUM_PIVOTS: unrolled, these arrays live in registers
    t = cuda.local.array(NUM_PIVOTS, int64)
    l_c = cuda.local.array(NUM_PIVOTS, int64)
    l_n = cuda.local.array(NUM_PIVOTS, int64)
    l_z = cuda.local.array(NUM_PIVOTS, int64)
    l_nz = cuda.local.array(NUM_PIVOTS, int64)
    for j in range(NUM_PIVOTS):
        t[j] = taus[j]
        l_c[j] = 0
        l_n[j] = 0
        l_z[j] = BIG
        l_nz[j] = 0
    first = 0
    if in_buf == 0:  # the row: whole tiles first (load_keys), then the rest
        keys = cuda.local.array(MISS_ITEMS, uint32)
        tile = THREADS * MISS_ITEMS
        n_tiles = n_items // tile
        for tt in range(n_tiles):
            load_keys(row, tt * tile + cuda.threadIdx.x, keys, MISS_ITEMS)
            for m in range(MISS_ITEMS):
                pivot_add(int64(keys[m]), t, weighted, ref, l_c, l_n, l_z, l_nz)
        first = n_tiles * tile
    for i in range(first + cuda.threadIdx.x, n_items, THREADS):
        if in_buf:
            key = int64(buf[i])
        else:
            key = load_key(row, i)
        pivot_add(key, t, weighted, ref, l_c, l_n, l_z, l_nz)
    at = (r % 3) * NS
    for j in range(NUM_PIVOTS):  # l_z[j] = BIG (adds 0 to the max) where l_n[j] = 0
        block_add(acc, at + j, l_c[j])
        block_add(acc, at + NUM_PIVOTS + j, l_n[j])
        block_max(acc, at + 2 * NUM_PIVOTS + j, BIG - l_z[j])
    r = end_pass(acc, r)
    for j in range(NUM_PIVOTS):
        c[j] = acc[at + j]
        cnt[j] = acc[at + NUM_PIVOTS + j]
        zmn[j] = BIG - acc[at + 2 * NUM_PIVOTS + j]
    at = (r % 3) * NS
    for j in range(NUM_PIVOTS):
        block_add(acc, at + j, l_nz[j] if l_z[j] == zmn[j] else int64(0))
    r = end_pass(acc, r)
    for j in range(NUM_PIVOTS):
        nz[j] = acc[at + j]
    return r


@device_function
def mass_above_buf(buf, n_buf, z, ref, acc, r):
    """``(r, mass)``: the fixed-point top-p weight of the keys ``> z`` of ``buf[:n_buf]``, :func:`pivot_pass`'s
    ``c[0]`` for the pivots ``(z, BIG, ...)`` over the buffer, as one block sum where that pass takes
    ``4 * NUM_PIVOTS`` (each a 64-bit shared atomic a warp, sixteen warps on one slot) and two barriers: the
    same integer sum.  For the top-p stage of a k+p row (option ``kp_mass``, bins bit 64), which reads
    only that mass."""
    m = int64(0)
    for i in range(cuda.threadIdx.x, n_buf, THREADS):
        key = int64(buf[i])
        if key > z:
            m += weight_of(key, ref)
    at = (r % 3) * NS
    block_add(acc, at, m)
    r = end_pass(acc, r)
    return r, acc[at]


@device_function
def wide_add(hist, m, key, w, weighted):
    """Key ``key`` (weight ``w``) into bin ``m`` of a wide round: its count, its mass as two
    32-bit words (the carry of the low word's atomic add goes into the high word: exact, and no
    64-bit shared atomics, which are compare-and-swap loops on sm_90), its smallest and largest key."""
    h_n, h_lo, h_hi, h_min, h_max, _res, _ch_n, _ch_c, _rank_w, _rank_k, _rank_n = hist
    cuda.atomic.add(h_n, m, uint32(1))
    if weighted:
        w_lo = uint32(w & 0xFFFFFFFF)
        old = cuda.atomic.add(h_lo, m, w_lo)
        carry = uint32(1) if uint64(old) + uint64(w_lo) > uint64(0xFFFFFFFF) else uint32(0)
        w_hi = uint32(w >> 32) + carry
        if w_hi != 0:
            cuda.atomic.add(h_hi, m, w_hi)
    cuda.atomic.min(h_min, m, uint32(key))
    cuda.atomic.max(h_max, m, uint32(key))


@device_function
def wide_key(key, lo, s, weighted, ref, hist, o_n, o_c):
    """One key of a wide round (:func:`wide_round`); returns the thread's count and mass of the
    keys above the last bin (kept in registers until the pass ends)."""
    if key > lo:
        w = int64(1)
        if weighted:
            w = weight_of(key, ref)
        m = (key - lo - 1) >> s
        if m >= WIDE_BINS:
            o_n += 1
            o_c += w
        else:
            wide_add(hist, m, key, w, weighted)
    return o_n, o_c


@device_function
def wide_shift(lo, hi):
    """The bin width ``2**s`` of a wide round over ``(lo, hi]``: the smallest with ``WIDE_BINS`` bins
    covering the range."""
    s = int64(0)
    while ((hi - lo - 1) >> s) >= WIDE_BINS:
        s += 1
    return s


@device_function
def wide_fill(row, buf, in_buf, n_buf, start, stop, lo, s, weighted, ref, hist):
    """The live keys ``> lo`` of entries ``[start, stop)`` of the row (or of ``buf[:n_buf]`` when
    ``in_buf``) into the shared bins of a wide round (:func:`wide_round`), the keys above the last
    bin into one more."""
    h_n, h_lo, h_hi, _h_min, _h_max, _res, _ch_n, _ch_c, _rank_w, _rank_k, _rank_n = hist
    tid = cuda.threadIdx.x
    o_n = int64(0)  # the keys above the last bin, counted in registers first
    o_c = int64(0)
    if in_buf != 0:
        for i in range(tid, n_buf, THREADS):
            o_n, o_c = wide_key(int64(buf[i]), lo, s, weighted, ref, hist, o_n, o_c)
    else:
        keys = cuda.local.array(MISS_ITEMS, uint32)
        tile = THREADS * MISS_ITEMS
        n_tiles = (stop - start) // tile
        for t in range(n_tiles + 1):
            i0 = start + t * tile + tid
            if t < n_tiles:
                load_keys(row, i0, keys, MISS_ITEMS)
            for j in range(MISS_ITEMS):
                i = i0 + j * THREADS
                if t == n_tiles:
                    if i >= stop:
                        break
                    key = load_key(row, i)
                else:
                    key = int64(keys[j])
                o_n, o_c = wide_key(key, lo, s, weighted, ref, hist, o_n, o_c)
    if o_n > 0:
        cuda.atomic.add(h_n, WIDE_BINS, uint32(o_n))
        if weighted:
            old = cuda.atomic.add(h_lo, WIDE_BINS, uint32(o_c & 0xFFFFFFFF))
            carry = uint32(1) if uint64(old) + uint64(o_c & 0xFFFFFFFF) > uint64(0xFFFFFFFF) else uint32(0)
            if uint32(o_c >> 32) + carry != 0:
                cuda.atomic.add(h_hi, WIDE_BINS, uint32(o_c >> 32) + carry)


@device_function
def wide_round(row, buf, in_buf, n_buf, lo, hi, target, weighted, ref, hist):
    """One wide round over the row (or over ``buf[:n_buf]`` when ``in_buf``): the live keys
    ``(lo, ...]`` counted into ``WIDE_BINS`` bins of width ``2**s`` (:func:`wide_fill`; bin ``m``
    holds ``lo + m * 2**s < key <= lo + (m + 1) * 2**s``; the keys above the last bin share one
    more), then the bin that holds the answer (:func:`wide_pick`)."""
    wide_fill(row, buf, in_buf, n_buf, int64(0), row[3], lo, wide_shift(lo, hi), weighted, ref, hist)
    cuda.syncthreads()
    return wide_pick(hist, target, weighted)


@device_function
def wide_pick(hist, target, weighted):
    """The bin of a wide round's filled ``hist`` that holds the answer, and the round's state.

    With ``C`` the mass (or count) above a key, the suffix sums of the bins are ``C`` at the bin
    edges, so the bin ``m*`` whose edges straddle ``target`` (``C(lower edge) >= target > C(upper
    edge)``) holds the answer.  The new range is that bin's ``(smallest key - 1, largest key]``; if
    the bin holds one distinct key, it is the answer (the state machine's STOP, with the same
    statistics).  Every sum is of integers, so the atomics that filled the bins give the same bits in
    any order.  Fills ``hist``'s ``res`` (every thread reads it) and clears the bins for the next
    round.  Returns ``(stop, lo, hi, #(> lo), C(hi), #(== hi), #(> hi))``."""
    h_n, h_lo, h_hi, h_min, h_max, res, ch_n, ch_c, _rank_w, _rank_k, _rank_n = hist
    tid = cuda.threadIdx.x
    # Find m*: bin m is it iff S(m) < target <= S(m) + c(m), with S(m) the mass (or count) of the
    # bins above m (suffix sums grow as m falls, so exactly one bin passes; empty bins never do).
    # A thread a chunk of WIDE_CHUNK bins: its chunk's sums, then, after a barrier, the chunks
    # above it and its own bins from the top (about 50 dependent steps where one thread's walk
    # over the 257 bins took 257).
    if tid < WIDE_CHUNKS:
        t_n = int64(0)
        t_c = int64(0)
        for m in range(tid * WIDE_CHUNK, min((tid + 1) * WIDE_CHUNK, WIDE_SLOTS)):
            n_m = int64(h_n[m])
            t_n += n_m
            if weighted:
                t_c += (int64(h_hi[m]) << 32) + int64(h_lo[m])
            else:
                t_c += n_m
        ch_n[tid] = t_n
        ch_c[tid] = t_c
    cuda.syncthreads()
    if tid < WIDE_CHUNKS:
        s_n = int64(0)  # the sums above this chunk, then above bin m
        s_c = int64(0)
        for u in range(tid + 1, WIDE_CHUNKS):
            s_n += ch_n[u]
            s_c += ch_c[u]
        if s_c < target:  # else m* lies above this chunk
            for mm in range(WIDE_CHUNK):
                m = (tid + 1) * WIDE_CHUNK - 1 - mm
                if m < WIDE_SLOTS:
                    n_m = int64(h_n[m])
                    c_m = n_m
                    if weighted:
                        c_m = (int64(h_hi[m]) << 32) + int64(h_lo[m])
                    if s_c + c_m >= target:  # and s_c < target: m is m*
                        kmin = int64(h_min[m])
                        kmax = int64(h_max[m])
                        res[W_STOP] = 1 if kmin == kmax else 0
                        res[W_LO] = kmin - 1
                        res[W_HI] = kmax
                        res[W_CNT_LO] = s_n + n_m
                        res[W_ABOVE] = s_c
                        res[W_N_EQ] = n_m
                        res[W_CNT_ABOVE] = s_n
                        break
                    s_n += n_m
                    s_c += c_m
    cuda.syncthreads()
    for m in range(tid, WIDE_SLOTS, THREADS):  # cleared for the next round (read before the barrier above)
        h_n[m] = 0
        h_lo[m] = 0
        h_hi[m] = 0
        h_min[m] = 0xFFFFFFFF
        h_max[m] = 0
    stop = res[W_STOP]
    new_lo = res[W_LO]
    new_hi = res[W_HI]
    cnt_lo = res[W_CNT_LO]
    above = res[W_ABOVE]
    n_eq = res[W_N_EQ]
    cnt_above = res[W_CNT_ABOVE]
    cuda.syncthreads()  # res is read before the next round writes it
    return stop, new_lo, new_hi, cnt_lo, above, n_eq, cnt_above


@device_function
def shared_hist():
    """The wide rounds' shared arrays: per bin the count, the mass's low and high words, the
    smallest and the largest key; and the round's results (:func:`wide_round`)."""
    h_n = cuda.shared.array(WIDE_SLOTS, uint32)
    h_lo = cuda.shared.array(WIDE_SLOTS, uint32)
    h_hi = cuda.shared.array(WIDE_SLOTS, uint32)
    h_min = cuda.shared.array(WIDE_SLOTS, uint32)
    h_max = cuda.shared.array(WIDE_SLOTS, uint32)
    res = cuda.shared.array(W_RES, int64)
    ch_n = cuda.shared.array(WIDE_CHUNKS, int64)  # per chunk of bins: count and mass (wide_round)
    ch_c = cuda.shared.array(WIDE_CHUNKS, int64)
    rank_w = cuda.shared.array(RANK_MAX, int64)  # rank_select: the live keys' weights,
    rank_k = cuda.shared.array(RANK_MAX, uint32)  # the live keys (any order),
    rank_n = cuda.shared.array(1, uint32)  # how many (32-bit: a native shared atomic)
    return (h_n, h_lo, h_hi, h_min, h_max, res, ch_n, ch_c, rank_w, rank_k, rank_n)


@device_function
def clear_hist(hist):
    """The wide rounds' bins, empty (a barrier before any round reads them)."""
    h_n, h_lo, h_hi, h_min, h_max, _res, _ch_n, _ch_c, _rank_w, _rank_k, _rank_n = hist
    for m in range(cuda.threadIdx.x, WIDE_SLOTS, THREADS):
        h_n[m] = 0
        h_lo[m] = 0
        h_hi[m] = 0
        h_min[m] = 0xFFFFFFFF
        h_max[m] = 0


# rank_select's threads a key (bins bit 5, option rank_groups): G threads (a power of two, at most a warp, while
# G * live keys <= THREADS) share the comparisons of a key, each with every G-th live key, and sum their counts
# over the group (shuffles on the GPU; through shared memory under the simulator, which has no warp intrinsics and
# runs RANK_RED_N = THREADS threads a block, so that its tests take the grouped path where few keys are live).
# Why: each thread's comparisons are a chain of dependent shared loads (H100, session 44 call 7's probe: the
# split path's finish spends about 14 us ranking the ~130 candidates of a B=1 Gaussian top-k 50 row, about 160
# cycles a comparison); grouped, a key's chain is G times shorter.  The same answers (integer sums).
RANK_RED_N = THREADS if SIMULATED else 1
RANK_GT_SHIFT = 16  # rank_select counts the keys above a key in the high half of an int32, those equal in the low
RANK_GT_ONE = 1 << RANK_GT_SHIFT


@device_function
def rank_group_sum(v, g_size, red, f):
    """Sum of ``v`` (int32 or int64) over this thread's group of ``g_size`` consecutive threads, valid in the
    group's first thread (shuffles; under the simulator through ``red[f, :]``).  Every thread of the block calls
    it."""
    if WARP_AGGREGATE:
        return lanes_sum(v, g_size)
    tid = cuda.threadIdx.x
    if g_size > 1:
        red[f, tid] = v
        cuda.syncthreads()
        if tid % g_size == 0:
            for o in range(1, g_size):
                v += red[f, tid + o]
        cuda.syncthreads()
    return v


@device_function
def rank_pack(buf, n_buf, lo, weighted, ref, hist):
    """The live keys (``> lo``) of ``buf[:n_buf]`` and their weights (1 unless ``weighted``) packed into
    ``rank_k`` / ``rank_w`` (slots from a shared counter, in any order: what the ranks take from them is
    order-free), the first step of :func:`rank_select` and :func:`rank_select_kp`; ``res[W_STOP]`` cleared.
    Returns how many keys are live, in every thread (the slots hold at most ``RANK_MAX`` of them)."""
    _h_n, _h_lo, _h_hi, _h_min, _h_max, res, _ch_n, _ch_c, rank_w, rank_k, rank_n = hist
    tid = cuda.threadIdx.x
    if tid == 0:
        res[W_STOP] = 0
        rank_n[0] = 0
    cuda.syncthreads()
    for i in range(tid, n_buf, THREADS):
        key = int64(buf[i])
        if key > lo:
            slot = cuda.atomic.add(rank_n, 0, uint32(1))
            if slot < RANK_MAX:
                w = int64(1)
                if weighted:
                    w = weight_of(key, ref)
                rank_k[slot] = buf[i]
                rank_w[slot] = w
    cuda.syncthreads()
    return int64(rank_n[0])


@device_function
def rank_group_log(groups, n_live):
    """log2 of the threads a key of a ranking: the largest power of two, at most a warp (``RANK_RED_N`` under the
    simulator), whose groups for ``n_live`` keys fit the block, when ``groups`` (option ``rank_groups``); else 0.
    Shifts, not 64-bit divisions, follow from it (registers)."""
    g_max = WARP if WARP_AGGREGATE else RANK_RED_N
    g_log = 0
    while groups != 0 and (2 << g_log) <= g_max and (2 << g_log) * n_live <= THREADS:
        g_log += 1
    return g_log


@device_function
def rank_key_sums(i, n_live, g, g_size, weighted, rank_k, rank_w):
    """This thread's share of packed key ``i``'s ranking (keys ``g``, ``g + g_size``, ...): ``(key, the weight of
    those above it (0 unless weighted), both counts in one word: those above it times ``RANK_GT_ONE`` plus those
    equal to it)``, for :func:`rank_group_sum`; zeros for ``i >= n_live``."""
    c = int64(0)
    n_gt = int32(0)
    key = uint32(0)
    if i < n_live:
        key = rank_k[i]
        for j in range(g, n_live, g_size):
            other = rank_k[j]
            if other > key:
                n_gt += int32(RANK_GT_ONE)  # both counts in one word: one group sum (< 2**RANK_GT_SHIFT)
                if weighted:
                    c += rank_w[j]
            elif other == key:
                n_gt += int32(1)
    return key, c, n_gt


@device_function
def rank_answer(res, key, c, n_eq, n_above):
    """A ranking's answer into ``res``: the key that passes, the weight (or count) above it, how many equal it and
    how many are above it.  Every thread that holds the key (its copies included) writes the same values."""
    res[W_STOP] = 1
    res[W_HI] = int64(key)
    res[W_ABOVE] = c
    res[W_N_EQ] = n_eq
    res[W_CNT_ABOVE] = n_above


@device_function
def rank_read(res):
    """``(found, z, C(z), #(== z), #(> z))`` from ``res`` after :func:`rank_answer`'s writes, the same in every
    thread; barriers before and after, so that ``res`` (and the packing's counter) can be written again."""
    cuda.syncthreads()
    found = res[W_STOP]
    z = res[W_HI]
    above = res[W_ABOVE]
    n_eq = res[W_N_EQ]
    cnt_above = res[W_CNT_ABOVE]
    cuda.syncthreads()
    return found, z, above, n_eq, cnt_above


@device_function
def rank_select(buf, n_buf, lo, target, weighted, ref, hist, groups):
    """The answer of :func:`pivot_search` over ``buf[:n_buf]`` (every key ``> lo`` is there)
    without rounds, when at most ``RANK_MAX`` of its keys are live (``> lo``): the live keys and
    their weights are first packed into ``rank_k`` / ``rank_w`` (slots from a shared counter, in
    any order: what follows is order-free), then each key's group of threads (``groups``: as many
    as fit, see ``RANK_RED_N``; else one) counts, over the packed keys, the weight ``C`` of those
    above it and how many equal it; the key ``z`` with ``C(z) < target <= C(z) + #(== z) * w(z)``
    is the boundary (``z* = min {tau : C(tau) < target}``: only one key passes, and the threads
    holding it write the same values).  Keys ``<= lo`` weigh nothing and are never above or equal
    to a live key, so leaving them out changes no sum; integer sums, so the statistics are the
    search's bit for bit.  Returns ``(found, z*, C(z*), #(== z*), #(> z*))``; ``found`` is 0 when
    more than ``RANK_MAX`` keys are live or none passed (the invariant rules that out): the caller
    then runs the rounds."""
    _h_n, _h_lo, _h_hi, _h_min, _h_max, res, _ch_n, _ch_c, rank_w, rank_k, _rank_n = hist
    red = cuda.shared.array((2, RANK_RED_N), int64)
    tid = cuda.threadIdx.x
    n_live = rank_pack(buf, n_buf, lo, weighted, ref, hist)
    sub_stamp(hist, 1)
    if n_live <= RANK_MAX:
        g_log = rank_group_log(groups, n_live)
        g_size = 1 << g_log
        g = tid & (g_size - 1)
        for i0 in range(0, n_live, THREADS >> g_log):  # the same trip count in every thread: whole warps
            i = i0 + (tid >> g_log)
            key, c, n_gt = rank_key_sums(i, n_live, g, g_size, weighted, rank_k, rank_w)
            both = rank_group_sum(n_gt, g_size, red, 1)
            n_eq = int64(both & (RANK_GT_ONE - 1))
            n_gt = int64(both >> RANK_GT_SHIFT)
            if weighted:  # the same in every thread
                c = rank_group_sum(c, g_size, red, 0)
            else:
                c = n_gt
            if i < n_live and g == 0 and c < target and c + n_eq * rank_w[i] >= target:
                rank_answer(res, key, c, n_eq, n_gt)
    sub_stamp(hist, 2)
    found_ranked = rank_read(res)
    sub_stamp(hist, 3)
    return found_ranked


@device_function
def rank_select_kp(buf, n_buf, lo, k_target, p, ties_all, ref, hist, groups):
    """Both stages of a k+p row from one ranking (option ``kp_rank``, bins bit 128): over ``buf[:n_buf]``
    (every key ``> lo`` is there, at most ``RANK_MAX`` of them live), each live key's group of threads counts
    the keys above it and equal to it, as :func:`rank_select` does, and sums the weight of those above it too.
    The top-k boundary ``z_k`` is the key with ``#(> z_k) < k_target <= #(>= z_k)``.  The top-p stage then
    needs ``C(tau)``, the weight above ``tau``, only for ``tau >= z_k``, whose keys above are all top-k
    survivors: the ranking's sums are that stage's statistics as they are, so the key with ``C(z) < target
    <= C(z) + #(== z) * w(z)`` among the keys ``> z_k`` is its boundary, found in one more pass over the
    ranked keys instead of a second search (integer sums: the bits of the two searches).  Returns ``(found,
    z, num_ties, count, #(== z))``, what :func:`finish_row`'s stages leave; ``found`` 0 where more than
    ``RANK_MAX`` keys are live or no key passed (the invariants rule that out): the caller then searches."""
    _h_n, _h_lo, _h_hi, _h_min, _h_max, res, _ch_n, _ch_c, rank_w, rank_k, _rank_n = hist
    red = cuda.shared.array((2, RANK_RED_N), int64)
    rank_c = cuda.shared.array(RANK_MAX, int64)  # per packed key: the weight of the keys above it
    rank_b = cuda.shared.array(RANK_MAX, int32)  # and both counts (above, equal) in one word
    tid = cuda.threadIdx.x
    n_live = rank_pack(buf, n_buf, lo, 1, ref, hist)
    if n_live <= RANK_MAX:
        g_log = rank_group_log(groups, n_live)
        g_size = 1 << g_log
        g = tid & (g_size - 1)
        for i0 in range(0, n_live, THREADS >> g_log):  # the same trip count in every thread: whole warps
            i = i0 + (tid >> g_log)
            key, c, n_gt = rank_key_sums(i, n_live, g, g_size, 1, rank_k, rank_w)
            both = rank_group_sum(n_gt, g_size, red, 1)
            c = rank_group_sum(c, g_size, red, 0)
            if i < n_live and g == 0:
                rank_c[i] = c
                rank_b[i] = both
                n_eq = int64(both & (RANK_GT_ONE - 1))
                n_above = int64(both >> RANK_GT_SHIFT)
                if n_above < k_target and n_above + n_eq >= k_target:
                    rank_answer(res, key, c, n_eq, n_above)
    found, z, mass, n_eq, above = rank_read(res)
    nt = int64(0)
    if found != 0:  # block-uniform
        nt = topk_num_ties(k_target, above, n_eq, ties_all)
        w_z = weight_of(z, ref)
        target = topp_target(p, mass + nt * w_z)
        if mass < target:  # the boundary is the top-k boundary group itself
            nt = topp_ties(target, mass, w_z, nt, ties_all)
        else:  # the boundary lies above the top-k group: the ranked key that passes
            if tid == 0:
                res[W_STOP] = 0
            cuda.syncthreads()
            for i in range(tid, n_live, THREADS):
                kk = int64(rank_k[i])
                ck = rank_c[i]
                n_k = int64(rank_b[i] & (RANK_GT_ONE - 1))
                if kk > z and ck < target and ck + n_k * rank_w[i] >= target:
                    rank_answer(res, kk, ck, n_k, int64(rank_b[i] >> RANK_GT_SHIFT))
            found, z, mass, n_eq, above = rank_read(res)
            nt = topp_ties(target, mass, weight_of(z, ref), n_eq, ties_all)
    return found, z, nt, above + nt, n_eq


@device_function
def pivot_search(row, buf, in_buf, n_buf, cap, lo, cnt_lo, hi, target, weighted, ref, acc, r, taus, stats, hist,
                 bins):
    """The state machine of ``qrita.core.search.search`` over the keys ``> lo``.

    Invariant ``C(lo) >= target > C(hi)``; ``cnt_lo`` counts the keys ``> lo``.
    The source is the buffer (``in_buf``: it holds every key ``> lo``, ``n_buf``
    of them) or the row; the row's live keys move into the buffer once they fit.
    Returns ``(r, z*, C(z*), #(== z*), #(> z*), in_buf, n_buf)``.
    """
    c, cnt, zmn, nz = stats
    # wide rounds (bins bit 0) while the live keys are in the row, too many for the buffer; (bit 1,
    # option wide_buffer) over the buffer while it holds more than WIDE_MIN_KEYS live keys
    if bins != 0:
        for _wide in range(WIDE_ROUNDS):
            if hi - lo <= 1:
                break
            if in_buf == 0 and ((bins & 1) == 0 or cnt_lo <= cap):
                break
            if in_buf != 0 and ((bins & 2) == 0 or cnt_lo <= WIDE_MIN_KEYS):
                break
            stop, lo, hi, cnt_lo, above, n_eq, cnt_above = wide_round(
                row, buf, in_buf, n_buf, lo, hi, target, weighted, ref, hist)
            if stop != 0:
                return r, hi, above, n_eq, cnt_above, in_buf, n_buf
    for _round in range(MAX_ROUNDS):
        if in_buf == 0 and cnt_lo <= cap:
            r, n = gather_pass(row, lo, buf, cap, acc, r)
            if n <= cap:
                in_buf = 1
                n_buf = n
            cnt_lo = n
        # rank_select (bins bit 2) once at most bins >> RANK_LIVE_SHIFT keys are live (option rank_live);
        # in a search of masses only with bit 4 too (option rank_weighted)
        if ((bins & 4) != 0 and (weighted == 0 or (bins & 16) != 0) and in_buf != 0
                and cnt_lo <= (bins >> RANK_LIVE_SHIFT)):
            found, z, above, n_eq, cnt_above = rank_select(buf, n_buf, lo, target, weighted, ref, hist,
                                                           bins & 32)
            if found != 0:
                return r, z, above, n_eq, cnt_above, in_buf, n_buf
        forced = hi - lo <= 1
        npiv = NUM_PIVOTS
        for j in range(NUM_PIVOTS):
            taus[j] = pivot(lo, hi, j + 1, NUM_PIVOTS)
        if forced:  # the single pivot hi - 1
            npiv = 1
            for j in range(1, NUM_PIVOTS):
                taus[j] = BIG
        n_items = row[3]
        if in_buf != 0:
            n_items = n_buf
        r = pivot_pass(row, buf, in_buf, n_items, taus, weighted, ref, acc, r, stats)
        for j in range(npiv):
            w = nz[j]
            if weighted and nz[j] > 0:
                w = nz[j] * weight_of(zmn[j], ref)
            state = classify_pivot(c[j], w, target, forced)
            if state == STOP:
                return r, zmn[j], c[j] - w, nz[j], cnt[j] - nz[j], in_buf, n_buf
            if state == ABOVE:
                cnt_lo = cnt[j] - nz[j]
            lo = narrow_lo(lo, state, zmn[j])
            hi = narrow_hi(hi, state, taus[j])
            if state == BELOW:
                break
        if lo >= hi:
            lo = hi - 1
    # unreachable: integer counts and masses keep the invariant exactly
    return r, hi, int64(0), int64(0), int64(0), in_buf, n_buf


@device_function
def finish_row(row, b, K, p, p_mode, ties_all, cut_key, scan, z_total, cand_mass, buf, cap, one, acc, r, outs, hist,
               bins, pre):
    """Search and tie rules of one row from its pass statistics; writes ``outs[..][b]``.

    ``outs[4][b]`` is the masking's cut index when the search settles it: ``-1`` when no
    entry equal to the threshold is kept, ``V`` when all of them are (the boundary group is
    whole), else ``CUT_SCAN``: ``cut_index_kernel`` must find it in the row.

    ``scan = (max key, #max, min keepable key, #min, #keepable, #candidates)``;
    ``buf`` holds the candidates when they fit (``<= cap``).  The top-k stage
    (if any) and the top-p stage share one search loop.  ``pre = (mode, lo, hi, #(> lo), z*,
    C(z*), #(== z*), #(> z*))``: where the split wide rounds took a top-p-only row's first steps
    (mode not ``SW_NONE``, :func:`wide_init_kernel`), its search starts from their range (its keys
    in ``buf`` when ``SW_GATHERED``) or takes their answer (``SW_STOP``).
    """
    g_max, n_max, g_min, n_min, n_keep, n_cand = scan
    sub_stamp(hist, 0)
    taus = cuda.local.array(NUM_PIVOTS, int64)
    c = cuda.local.array(NUM_PIVOTS, int64)
    cnt = cuda.local.array(NUM_PIVOTS, int64)
    zmn = cuda.local.array(NUM_PIVOTS, int64)
    nz = cuda.local.array(NUM_PIVOTS, int64)
    stats = (c, cnt, zmn, nz)
    ref = (g_max, f32_from_bits(bits_of_key(max(g_max, KEY_NEG_INF))), one)
    z = int64(KEY_NEG_INF)
    nt = int64(0)
    count = int64(0)
    n_all = int64(0)  # entries equal to the threshold, kept or not
    hit = 0
    cut_fits = candidates_fit(cut_key, n_cand, cap)
    if g_max <= KEY_NEG_INF:
        pass  # nothing keepable: threshold -inf, count 0
    elif p_mode == 1:  # p <= 0: the single best token (its whole tie group under "all")
        z = g_max
        nt = int64(1)
        if ties_all != 0:
            nt = n_max
        n_all = n_max
        count = nt
        if K > 0 and cut_fits and n_cand >= K:
            hit = 1
    elif K == 0 and p_mode == 0:  # nothing to cut: every keepable entry
        z = g_min
        nt = n_min
        n_all = n_min
        count = n_keep
    else:
        # The first stage: top-k (weights 1) or, without top-k, top-p over the whole row.
        weighted = 0
        target = K
        if K == 0:
            weighted = 1
            target = topp_target(p, z_total)
        lo = int64(KEY_NEG_INF)
        cnt_lo = n_keep
        in_buf = 0
        n_buf = int64(0)
        if cut_fits and ((K > 0 and n_cand >= K) or (K == 0 and cand_mass >= target)):
            hit = 1
            lo = cut_key
            cnt_lo = n_cand
            in_buf = 1
            n_buf = n_cand
        if K > 0:
            target = min(K, cnt_lo)
        hi = g_max
        pre_mode = pre[0]
        if pre_mode != SW_NONE:  # a top-p-only row that missed: the split wide rounds' range
            lo = pre[1]
            hi = pre[2]
            cnt_lo = pre[3]
            if pre_mode == SW_GATHERED:
                in_buf = 1
                n_buf = cnt_lo
        done = int64(0)
        if ((bins & 128) != 0 and (bins & 20) == 20 and K > 0 and p_mode == 2 and pre_mode == SW_NONE
                and in_buf != 0 and cnt_lo <= (bins >> RANK_LIVE_SHIFT)):  # option kp_rank: one ranking
            done, z, nt, count, n_all = rank_select_kp(buf, n_buf, lo, target, p, ties_all, ref, hist, bins & 32)
        for _stage in range(2):
            if done != 0:
                break
            if pre_mode == SW_STOP:
                z = pre[4]
                above = pre[5]
                n_eq = pre[6]
                cnt_above = pre[7]
            else:
                r, z, above, n_eq, cnt_above, in_buf, n_buf = pivot_search(
                    row, buf, in_buf, n_buf, cap, lo, cnt_lo, hi, target, weighted, ref, acc, r, taus, stats, hist,
                    bins)
            n_all = n_eq
            if weighted != 0:  # top-p done
                nt = topp_ties(target, above, weight_of(z, ref), n_eq, ties_all)
                count = cnt_above + nt
                break
            nt = topk_num_ties(target, above, n_eq, ties_all)
            count = above + nt
            if p_mode != 2:
                break
            # Top-p over the top-k survivors: the mass above the boundary group first.
            taus[0] = z
            for j in range(1, NUM_PIVOTS):
                taus[j] = BIG
            n_items = row[3]
            if in_buf != 0:
                n_items = n_buf
            if in_buf != 0 and (bins & 64) != 0:  # option kp_mass: the one sum this needs
                r, mass_above = mass_above_buf(buf, n_buf, z, ref, acc, r)
            else:
                r = pivot_pass(row, buf, in_buf, n_items, taus, 1, ref, acc, r, stats)
                mass_above = c[0]
            w_z = weight_of(z, ref)
            target = topp_target(p, mass_above + nt * w_z)
            if mass_above < target:  # the boundary is the top-k boundary group itself
                nt = topp_ties(target, mass_above, w_z, nt, ties_all)
                count = above + nt
                break
            lo = z
            hi = g_max
            cnt_lo = above
            weighted = 1
    if cuda.threadIdx.x == 0:
        out_thr, out_nties, out_count, out_hit, out_cut = outs
        cut = int64(CUT_SCAN)
        if nt == 0:
            cut = int64(-1)
        elif nt == n_all:
            cut = row[3]
        out_cut[b] = cut
        out_thr[b] = out_bits(bits_of_key(z), row[4])
        out_nties[b] = nt
        out_count[b] = count
        out_hit[b] = hit
    return r


# ---- kernels ------------------------------------------------------------------------------
# Every kernel takes the logits as ``x, stride_b, stride_v, V`` (flat raw bits; row
# ``b`` is ``x[b * stride_b + i * stride_v]``), the per-row arguments ``k_arr,
# k_scalar, k_mode, p_arr, p_scalar, p_mode_arg`` and ``fmt, ties_all, truncation,
# cap, one``.  Outputs are ``[B]``: threshold bits in the input format, num_ties
# int32, count int32, hit bool.


@kernel
def select_kernel(
    x, stride_b, stride_v, V,
    k_arr, k_scalar, k_mode, p_arr, p_scalar, p_mode_arg,
    fmt, ties_all, truncation, cap, one, bins,
    out_thr, out_nties, out_count, out_hit, out_cut,
):  # fmt: skip
    """One block per row (grid ``(B,)``, block ``(THREADS,)``), everything in shared memory."""
    buf = cuda.shared.array(CAP, uint32)  # [cap] candidate keys
    acc = cuda.shared.array(ACC_SIZE, int64)  # accumulator ring
    red = cuda.shared.array((2, THREADS), float64)
    n_slotted = cuda.shared.array(1, uint32)  # 32-bit: a native shared atomic (64-bit is a CAS loop)
    hist = shared_hist()
    tid = cuda.threadIdx.x
    b = int64(cuda.blockIdx.x)
    for s in range(tid, ACC_SIZE, THREADS):
        acc[s] = 0
    clear_hist(hist)
    if tid == 0:
        n_slotted[0] = 0
    cuda.syncthreads()
    row = (x, b * stride_b, stride_v, V, fmt)
    K, p, p_mode = row_params(b, V, k_arr, k_scalar, k_mode, p_arr, p_scalar, p_mode_arg)
    cut_key = row_cut(row, K, p, p_mode, truncation, red, cap, bins)
    r, scan = scan_slice(row, 0, V, cut_key, buf, n_slotted, 0, cap, acc, 0)
    g_max, n_max, g_min, n_min, n_keep, n_over = scan
    scan = (g_max, n_max, g_min, n_min, n_keep, n_slotted[0] + n_over)
    z_total = int64(0)
    cand_mass = int64(0)
    if K == 0 and p_mode == 2 and g_max > KEY_NEG_INF:
        ref = (g_max, f32_from_bits(bits_of_key(g_max)), one)
        r, z_total, cand_mass = mass_slice(row, 0, V, cut_key, ref, acc, r)
    outs = (out_thr, out_nties, out_count, out_hit, out_cut)
    pre = (int64(SW_NONE), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0))
    finish_row(row, b, K, p, p_mode, ties_all, cut_key, scan, z_total, cand_mass, buf, cap, one, acc, r, outs, hist,
               bins, pre)


@device_function
def split_bounds(V, s, splits):
    """Entries ``[start, stop)`` of split ``s`` of a row (whole multiples of THREADS)."""
    per = (V + splits - 1) // splits
    per = (per + THREADS - 1) // THREADS * THREADS
    start = min(s * per, V)
    return start, min(start + per, V)


@kernel
def scan_split_kernel(
    x, stride_b, stride_v, V, row0,
    k_arr, k_scalar, k_mode, p_arr, p_scalar, p_mode_arg,
    fmt, ties_all, truncation, cap, one, bins,
    splits, cand, cand_count, part, cut_keys, cand_idx, stamps,
):  # fmt: skip
    """Split path, pass 1: block ``(b, s)`` scans split ``s`` of row ``row0 + b``.

    cand ``[Bc, cap]`` uint32 and cand_count ``[Bc]`` int64 (zeroed) gather the
    row's candidates; part ``[Bc, splits, NPART]`` int64 gets the block's partials;
    cut_keys ``[Bc]`` int64 the cut (every block computes the same one); cand_idx ``[Bc, cap]``
    uint32 the candidates' entry indices (option ``tie_index``; else not written, any shape).  ``stamps``: probe
    builds' phase times (:func:`stamp`: start, the cut known, the end; row ``b * splits + s``).
    """
    acc = cuda.shared.array(ACC_SIZE, int64)
    red = cuda.shared.array((2, THREADS), float64)
    tid = cuda.threadIdx.x
    b = int64(cuda.blockIdx.x)
    s = int64(cuda.blockIdx.y)
    stamp(stamps, b * splits + s, 0)
    for i in range(tid, ACC_SIZE, THREADS):
        acc[i] = 0
    cuda.syncthreads()
    row_id = row0 + b
    row = (x, row_id * stride_b, stride_v, V, fmt)
    K, p, p_mode = row_params(row_id, V, k_arr, k_scalar, k_mode, p_arr, p_scalar, p_mode_arg)
    start, stop = split_bounds(V, s, splits)
    if (bins & (SCAN_PREFETCH | TIE_INDEX)) != 0:
        # the first tile's loads go out before the cut's sample passes and barriers, then a tile ahead
        keys_a = cuda.local.array(ITEMS, uint32)
        if stop - start >= THREADS * ITEMS:
            load_raw(row, start + tid, keys_a, ITEMS)
        cut_key = row_cut(row, K, p, p_mode, truncation, red, cap, bins)
        stamp(stamps, b * splits + s, 1)
        if (bins & TIE_INDEX) != 0:
            _r, scan = scan_slice_prefetch(row, start, stop, cut_key, keys_a, cand[b], cand_count, b, cap, acc, 0,
                                           cand_idx[b])
        else:
            _r, scan = scan_slice_prefetch(row, start, stop, cut_key, keys_a, cand[b], cand_count, b, cap, acc, 0,
                                           None)
    else:
        cut_key = row_cut(row, K, p, p_mode, truncation, red, cap, bins)
        stamp(stamps, b * splits + s, 1)
        _r, scan = scan_slice(row, start, stop, cut_key, cand[b], cand_count, b, cap, acc, 0)
    if tid == 0:
        for f in range(6):  # P_MAX ... P_NCAND, in scan_slice's order
            part[b, s, f] = scan[f]
        if s == 0:
            cut_keys[b] = cut_key
    stamp(stamps, b * splits + s, 2)


@device_function
def combine_parts(part, b, splits, sums, acc, r):
    """Combine the per-split partials of row ``b``: a slice a thread, block-wide atomics.

    Every partial is an integer (keys, counts, fixed-point masses), so the atomics give
    the same bits in any order; what used to be a loop over the slices one after another
    (a dependent global load a slice) is now one load a slice a thread and two barriers.
    Returns ``(r, (max key, #max, min keepable key, #min, #keepable, #candidates not
    slotted, Z, candidate mass))``.  ``sums``: 0 combines only the max and its count (the
    rest come back 0, the min BIG); 1 everything but the masses (0); 2 everything (the
    partials' masses must then be written).  Takes passes ``r`` and ``r + 1``.

    Every thread of the block takes part in each reduction (``block_max`` / ``block_add``: summed over
    the warp first, one atomic a warp and slot), with 0 where it has no split: neutral for the sums,
    and for the maxima, whose slots start at 0 and whose values are ``>= 0``; in rounds of ``THREADS``
    splits.  Why: one 64-bit shared atomic a partial is a compare-and-swap loop on sm_90, and the
    splits' threads (16 lanes of warp 0 at B = 1) contended for each slot.  H100
    (docs/bench/h100-2026-12-07/session44/ call 7, probe_finish.py, atomics a partial -> warp-aggregated,
    16 splits a row, `select` fp32 V=131072 Gaussian, B = 1; B = 4 alike): finish_split_kernel 7.1 -> 5.1 us
    for p = 0 (its fixed cost), 21.2 -> 19.1 for top-k 50, 46.4 -> 44.1 for k100+p0.9; 4 splits: level.
    """
    at = (r % 3) * NS
    for s0 in range(0, splits, THREADS):  # the same trip count in every thread: the shuffles see the whole warp
        s = s0 + cuda.threadIdx.x
        live = s < splits
        v = int64(0)
        if live:
            v = part[b, s, P_MAX]
        block_max(acc, at + 0, v)
        if sums != 0:
            v_min = int64(0)
            v_keep = int64(0)
            v_cand = int64(0)
            if live:
                v_min = BIG - part[b, s, P_MIN]
                v_keep = part[b, s, P_NKEEP]
                v_cand = part[b, s, P_NCAND]
            block_max(acc, at + 1, v_min)
            block_add(acc, at + 2, v_keep)
            block_add(acc, at + 3, v_cand)
        if sums == 2:
            v_z = int64(0)
            v_cm = int64(0)
            if live:
                v_z = part[b, s, P_Z]
                v_cm = part[b, s, P_CMASS]
            block_add(acc, at + 4, v_z)
            block_add(acc, at + 5, v_cm)
    r = end_pass(acc, r)
    g_max = acc[at + 0]
    g_min = BIG - acc[at + 1]
    n_keep = acc[at + 2]
    n_over = acc[at + 3]
    z_total = acc[at + 4]
    cand_mass = acc[at + 5]
    if sums == 0:
        g_min = int64(BIG)
    at = (r % 3) * NS
    for s0 in range(0, splits, THREADS):
        s = s0 + cuda.threadIdx.x
        v_nmax = int64(0)
        v_nmin = int64(0)
        if s < splits:
            if part[b, s, P_MAX] == g_max:
                v_nmax = part[b, s, P_NMAX]
            if sums != 0 and part[b, s, P_MIN] == g_min:
                v_nmin = part[b, s, P_NMIN]
        block_add(acc, at + 0, v_nmax)
        block_add(acc, at + 1, v_nmin)
    r = end_pass(acc, r)
    return r, (g_max, acc[at + 0], g_min, acc[at + 1], n_keep, n_over, z_total, cand_mass)


@kernel
def mass_split_kernel(
    x, stride_b, stride_v, V, row0,
    k_arr, k_scalar, k_mode, p_arr, p_scalar, p_mode_arg,
    fmt, ties_all, truncation, cap, one, bins,
    splits, part, cut_keys,
):  # fmt: skip
    """Split path, pass 2 (top-p-only rows): softmax mass of split ``s`` into ``part``."""
    acc = cuda.shared.array(ACC_SIZE, int64)
    tid = cuda.threadIdx.x
    b = int64(cuda.blockIdx.x)
    s = int64(cuda.blockIdx.y)
    row_id = row0 + b
    K, p, p_mode = row_params(row_id, V, k_arr, k_scalar, k_mode, p_arr, p_scalar, p_mode_arg)
    if not (K == 0 and p_mode == 2):
        return  # uniform over the block
    for i in range(tid, ACC_SIZE, THREADS):
        acc[i] = 0
    cuda.syncthreads()
    r, comb = combine_parts(part, b, splits, 0, acc, 0)
    g_max = comb[0]
    if g_max <= KEY_NEG_INF:  # nothing keepable (uniform over the block): no mass
        if tid == 0:
            part[b, s, P_Z] = 0
            part[b, s, P_CMASS] = 0
        return
    row = (x, row_id * stride_b, stride_v, V, fmt)
    ref = (g_max, f32_from_bits(bits_of_key(g_max)), one)
    start, stop = split_bounds(V, s, splits)
    _r, z, zc = mass_slice(row, start, stop, cut_keys[b], ref, acc, r)
    if tid == 0:
        part[b, s, P_Z] = z
        part[b, s, P_CMASS] = zc


@kernel(min_blocks=1)
def finish_split_kernel(
    x, stride_b, stride_v, V, row0,
    k_arr, k_scalar, k_mode, p_arr, p_scalar, p_mode_arg,
    fmt, ties_all, truncation, cap, one, bins,
    splits, cand, cand_count, part, cut_keys, wide, wst,
    out_thr, out_nties, out_count, out_hit, out_cut, cand_idx, stamps,
):  # fmt: skip
    """Split path, last step: combine the partials of row ``row0 + b`` (integers, so in
    any order: :func:`combine_parts`), load its candidates into shared memory and finish
    it as :func:`select_kernel` does.  ``wide``: the split wide rounds ran (``wst`` holds
    their state a row).  Option ``tie_index``: :func:`tie_index_cut` from the candidates' indices.  ``stamps``:
    probe builds' phase times (:func:`stamp`: start, partials combined, candidates loaded, search done, end)."""
    buf = cuda.shared.array(CAP, uint32)
    acc = cuda.shared.array(ACC_SIZE, int64)
    hist = shared_hist()
    tid = cuda.threadIdx.x
    b = int64(cuda.blockIdx.x)
    row_id = row0 + b
    stamp(stamps, b, 0)
    if STAMPS:
        if tid == 0:
            for j in range(STAMP_SUB):
                hist[5][W_SIZE + j] = 0
    for i in range(tid, ACC_SIZE, THREADS):
        acc[i] = 0
    clear_hist(hist)
    cuda.syncthreads()
    K, p, p_mode = row_params(row_id, V, k_arr, k_scalar, k_mode, p_arr, p_scalar, p_mode_arg)
    sums = 1
    if K == 0 and p_mode == 2:  # top-p only: mass_split_kernel wrote the masses
        sums = 2
    r, comb = combine_parts(part, b, splits, sums, acc, 0)
    g_max, n_max, g_min, n_min, n_keep, n_over, z_total, cand_mass = comb
    stamp(stamps, b, 1)
    n_cand = cand_count[b] + n_over
    pre_mode = int64(SW_NONE)
    if wide != 0:
        pre_mode = wst[b, SW_MODE]
    n_load = n_cand if n_cand <= cap else int64(0)
    if pre_mode == SW_GATHERED:  # cand[b] holds the live keys instead
        n_load = wst[b, SW_NGATH]
    elif pre_mode != SW_NONE:
        n_load = int64(0)
    for i in range(tid, n_load, THREADS):
        buf[i] = cand[b, i]
    cuda.syncthreads()
    stamp(stamps, b, 2)
    pre = (pre_mode, int64(0), int64(0), int64(0), int64(0), int64(0), int64(0), int64(0))
    if pre_mode != SW_NONE:
        pre = (pre_mode, wst[b, SW_LO], wst[b, SW_HI], wst[b, SW_CNT_LO], wst[b, SW_Z], wst[b, SW_ABOVE],
               wst[b, SW_N_EQ], wst[b, SW_CNT_ABOVE])
        if pre_mode == SW_GATHERED:
            pre = (pre_mode, pre[1], pre[2], n_load, pre[4], pre[5], pre[6], pre[7])
    row = (x, row_id * stride_b, stride_v, V, fmt)
    scan = (g_max, n_max, g_min, n_min, n_keep, n_cand)
    outs = (out_thr, out_nties, out_count, out_hit, out_cut)
    finish_row(row, row_id, K, p, p_mode, ties_all, cut_keys[b], scan, z_total, cand_mass, buf, cap, one, acc, r, outs,
               hist, bins, pre)
    stamp(stamps, b, 3)
    if (bins & TIE_INDEX) != 0 and n_cand <= cap and pre_mode == SW_NONE:  # block-uniform
        tie_index_cut(row_id, fmt, cut_keys[b], cand[b], cand_idx[b], n_cand, out_thr, out_nties, out_cut)
    stamp(stamps, b, 4)
    if STAMPS:
        if tid == 0:
            for j in range(STAMP_SUB):
                stamps[b, 2 * STAMP_SLOTS - STAMP_SUB + j] = hist[5][W_SIZE + j]


@device_function
def tie_index_cut(b, fmt, cut_key, cand, cand_idx, n_cand, out_thr, out_nties, out_cut):
    """Option ``tie_index``: where :func:`finish_row` left row ``b``'s masking cut at ``CUT_SCAN`` (its
    boundary group is cut: ``0 < num_ties <`` the group's size), find it here, so that no kernel reads the row
    for it (:func:`cut_count_kernel`, :func:`mask_block_cut`: 10 of 85 us of kernel time in bf16 top-k 50
    masking at B = 64 on an H100, session 46).  ``cand`` must hold every candidate of the row's scan and
    ``cand_idx`` their entry indices (the caller checks that all ``n_cand`` were slotted); if the threshold's key
    is above the cut, every entry of the group is a candidate, and the cut is the index of the ``num_ties``-th
    smallest of the group's indices: each of its at most ``TIE_MAX`` entries (collected into shared memory)
    counts the indices below its own.  Otherwise the cut stays ``CUT_SCAN``.  Every thread must call it (two
    barriers)."""
    tied = cuda.shared.array(TIE_MAX, uint32)
    n_tied = cuda.shared.array(1, int32)
    tid = cuda.threadIdx.x
    if tid == 0:
        n_tied[0] = 0
    cuda.syncthreads()  # also orders finish_row's outputs (thread 0's) before every thread's reads
    z = key_of_bits(f32_bits_of(int64(out_thr[b]), fmt))
    if out_cut[b] != CUT_SCAN or z <= cut_key:  # block-uniform
        return
    for i in range(tid, n_cand, THREADS):
        if int64(cand[i]) == z:
            slot = cuda.atomic.add(n_tied, 0, 1)
            if slot < TIE_MAX:
                tied[slot] = cand_idx[i]
    cuda.syncthreads()
    m = n_tied[0]
    if m > TIE_MAX:  # block-uniform: the masking finds it
        return
    want = int64(out_nties[b]) - 1  # the indices below the cut's own
    for t in range(tid, m, THREADS):
        e = tied[t]
        below = 0
        for u in range(m):
            if tied[u] < e:
                below += 1
        if below == want:
            out_cut[b] = int64(e)


@kernel
def wide_init_kernel(
    x, stride_b, stride_v, V, row0,
    k_arr, k_scalar, k_mode, p_arr, p_scalar, p_mode_arg,
    fmt, ties_all, truncation, cap, one, bins,
    splits, cand_count, part, cut_keys, wst, gh,
):  # fmt: skip
    """Split wide rounds, first step (grid ``(rows,)``): the state of row ``row0 + b`` as
    :func:`finish_row` would start its search (the same partials, the same target): ``SW_OPEN``
    for a top-p-only row that misses with more live keys than the buffer holds, else ``SW_NONE``;
    the row's global bins emptied."""
    acc = cuda.shared.array(ACC_SIZE, int64)
    tid = cuda.threadIdx.x
    b = int64(cuda.blockIdx.x)
    for i in range(tid, ACC_SIZE, THREADS):
        acc[i] = 0
    for m in range(tid, WIDE_SLOTS, THREADS):
        gh[b, GH_N, m] = 0
        gh[b, GH_C, m] = 0
        gh[b, GH_MIN, m] = 0xFFFFFFFF
        gh[b, GH_MAX, m] = 0
    cuda.syncthreads()
    K, p, p_mode = row_params(row0 + b, V, k_arr, k_scalar, k_mode, p_arr, p_scalar, p_mode_arg)
    mode = int64(SW_NONE)
    g_max = int64(0)
    n_keep = int64(0)
    target = int64(0)
    if K == 0 and p_mode == 2 and (bins & 1) != 0:  # uniform over the block
        _r, comb = combine_parts(part, b, splits, 2, acc, 0)
        g_max, _n_max, _g_min, _n_min, n_keep, n_over, z_total, cand_mass = comb
        n_cand = cand_count[b] + n_over
        target = topp_target(p, z_total)  # finish_row's start, the same bits
        hit = candidates_fit(cut_keys[b], n_cand, cap) and cand_mass >= target
        if g_max > KEY_NEG_INF + 1 and not hit and n_keep > cap:
            mode = SW_OPEN
    if tid == 0:
        wst[b, SW_MODE] = mode
        wst[b, SW_LO] = KEY_NEG_INF
        wst[b, SW_HI] = g_max
        wst[b, SW_CNT_LO] = n_keep
        wst[b, SW_TARGET] = target
        wst[b, SW_GMAX] = g_max
        wst[b, SW_NGATH] = 0
        wst[b, SW_TICKET] = 0


@kernel
def wide_hist_kernel(x, stride_b, stride_v, V, row0, fmt, cap, one, splits, cand, wst, gh, fold):
    """Split wide rounds, a round's pass (grid ``(rows, splits)``): block ``(b, s)`` counts the live
    keys of split ``s`` of an ``SW_OPEN`` row into its shared bins (:func:`wide_fill`) and adds them to
    the row's global bins (integer atomics: any order, the same bits); of an ``SW_FIT`` row it gathers
    the live keys into ``cand[b]`` (a slot each from ``wst[b, SW_NGATH]``).  With ``fold`` (option
    ``split_wide_fold``) the row's last block to finish (a ticket in ``wst[b, SW_TICKET]``, after a
    fence) runs the round's pick itself (:func:`wide_pick_row`), one launch fewer a round."""
    b = int64(cuda.blockIdx.x)
    s = int64(cuda.blockIdx.y)
    tid = cuda.threadIdx.x
    mode = wst[b, SW_MODE]
    if mode != SW_OPEN and mode != SW_FIT:
        return  # uniform over the block
    hist = shared_hist()
    last = cuda.shared.array(1, int64)
    row = (x, (row0 + b) * stride_b, stride_v, V, fmt)
    start, stop = split_bounds(V, s, splits)
    lo = wst[b, SW_LO]
    if mode == SW_FIT:
        gather_slice(row, start, stop, lo, cand[b], wst[b], SW_NGATH, cap)
    else:
        clear_hist(hist)
        cuda.syncthreads()
        g_max = wst[b, SW_GMAX]
        ref = (g_max, f32_from_bits(bits_of_key(g_max)), one)
        wide_fill(row, cand[b], 0, int64(0), start, stop, lo, wide_shift(lo, wst[b, SW_HI]), 1, ref, hist)
        cuda.syncthreads()
        h_n, h_lo, h_hi, h_min, h_max, _res, _ch_n, _ch_c, _rank_w, _rank_k, _rank_n = hist
        for m in range(tid, WIDE_SLOTS, THREADS):
            n = h_n[m]
            if n != 0:
                cuda.atomic.add(gh, (b, GH_N, m), int64(n))
                cuda.atomic.add(gh, (b, GH_C, m), (int64(h_hi[m]) << 32) + int64(h_lo[m]))
                cuda.atomic.min(gh, (b, GH_MIN, m), int64(h_min[m]))
                cuda.atomic.max(gh, (b, GH_MAX, m), int64(h_max[m]))
    if fold == 0:
        return
    cuda.threadfence()  # this block's atomics on gh (and its gathered keys) before its ticket
    cuda.syncthreads()
    if tid == 0:
        last[0] = 1 if cuda.atomic.add(wst, (b, SW_TICKET), 1) == splits - 1 else 0
    cuda.syncthreads()
    if last[0] != 0:  # every block of the row has added its bins
        cuda.threadfence()
        if tid == 0:
            wst[b, SW_TICKET] = 0  # for the next round (no block of this launch reads it again)
        wide_pick_row(b, cap, wst, gh, hist)


@kernel
def wide_pick_kernel(cap, wst, gh):
    """Split wide rounds, a round's pick (grid ``(rows,)``; without ``split_wide_fold``): :func:`wide_pick_row`."""
    wide_pick_row(int64(cuda.blockIdx.x), cap, wst, gh, shared_hist())


@device_function
def wide_pick_row(b, cap, wst, gh, hist):
    """The pick of row ``b``'s round: of an ``SW_OPEN`` row, the bin that holds the answer
    (:func:`wide_pick` over the row's global bins, read and emptied for the next round by atomic
    exchanges, which read what the round's atomics wrote wherever this runs), and the row's next mode;
    an ``SW_FIT`` row has been gathered (``SW_GATHERED``)."""
    tid = cuda.threadIdx.x
    mode = wst[b, SW_MODE]
    if mode == SW_FIT:
        if tid == 0:
            wst[b, SW_MODE] = SW_GATHERED
        return
    if mode != SW_OPEN:
        return  # uniform over the block
    h_n, h_lo, h_hi, h_min, h_max, _res, _ch_n, _ch_c, _rank_w, _rank_k, _rank_n = hist
    for m in range(tid, WIDE_SLOTS, THREADS):
        c = cuda.atomic.exch(gh, (b, GH_C, m), int64(0))  # below 2**62: the words of wide_add
        h_n[m] = uint32(cuda.atomic.exch(gh, (b, GH_N, m), int64(0)))
        h_lo[m] = uint32(c & 0xFFFFFFFF)
        h_hi[m] = uint32(c >> 32)
        h_min[m] = uint32(cuda.atomic.exch(gh, (b, GH_MIN, m), int64(0xFFFFFFFF)))
        h_max[m] = uint32(cuda.atomic.exch(gh, (b, GH_MAX, m), int64(0)))
    cuda.syncthreads()
    stop, lo, hi, cnt_lo, above, n_eq, cnt_above = wide_pick(hist, wst[b, SW_TARGET], 1)
    if tid == 0:
        if stop != 0:
            mode = SW_STOP
            wst[b, SW_Z] = hi
            wst[b, SW_ABOVE] = above
            wst[b, SW_N_EQ] = n_eq
            wst[b, SW_CNT_ABOVE] = cnt_above
        elif cnt_lo <= cap:
            mode = SW_FIT
        elif hi - lo <= 1:
            mode = SW_ROW  # finish_row's wide rounds would stop here too
        wst[b, SW_LO] = lo
        wst[b, SW_HI] = hi
        wst[b, SW_CNT_LO] = cnt_lo
        wst[b, SW_MODE] = mode


@kernel
def zero_kernel(a):
    """``a[:] = 0`` (one block)."""
    for i in range(cuda.threadIdx.x, a.shape[0], THREADS):
        a[i] = 0


@kernel
def keys_kernel(bits, fmt, keys, back):
    """Test aid (one block): the key of each raw value and its bits after the widening
    round trip; ``qrita.core.keys`` asks every backend's keys to be checked against it."""
    for i in range(cuda.threadIdx.x, bits.shape[0], THREADS):
        u = f32_bits_of(bits[i], fmt)
        keys[i] = key_of_bits(u)
        back[i] = out_bits(u, fmt)


# ---- fused masking ------------------------------------------------------------------

MASK_ITEMS = 8  # entries per thread of mask_kernel, loaded back to back (its loads_first)
MASK_WORDS = 8  # a thread's words of paired entries (a constant: local arrays), loaded back to back
MASK_PAIRED_ITEMS = 2 * MASK_WORDS  # ... and their entries: a block's span is THREADS * MASK_PAIRED_ITEMS
MASK_ITEMS_OLD = 4  # ... loaded one at a time (loads_first = 0, the A/B's other side)
# cut_index_kernel reads a row in chunks of THREADS * CUT_ITEMS entries: it counts the entries equal to the
# threshold in CUT_GROUP chunks at once (a thread loads its share of CUT_UNROLL chunks back to back), then scans
# in index order only the chunk that holds the wanted one.
CUT_ITEMS = 8
CUT_UNROLL = 2
CUT_KEYS = CUT_UNROLL * CUT_ITEMS  # a thread's loads of a span of CUT_UNROLL chunks (a constant: local arrays)
CUT_GROUP = 64


@device_function
def cut_scan_chunk(row, start, thr_key, want, seen, flags, found):
    """The chunk of :func:`cut_index_kernel` at ``start``, in index order: ``CUT_ITEMS`` consecutive
    entries a thread, a block prefix sum of the threads' counts of entries equal to the threshold
    (``flags``), and the thread whose entries hold the ``want``-th such entry of the row (``seen``
    before the chunk) writes its index into ``found[0]``.  Returns the chunk's count (every thread)."""
    t = cuda.threadIdx.x
    V = row[3]
    first = start + int64(t) * CUT_ITEMS
    mine = int64(0)
    for j in range(CUT_ITEMS):
        if first + j < V:
            if load_key(row, first + j) == thr_key:
                mine += 1
    flags[t] = mine
    cuda.syncthreads()
    off = 1
    while off < THREADS:  # inclusive Hillis-Steele scan
        v = int64(0)
        if t >= off:
            v = flags[t - off]
        cuda.syncthreads()
        flags[t] += v
        cuda.syncthreads()
        off *= 2
    before = seen + flags[t] - mine  # equal entries before this thread's first
    if mine > 0 and before < want <= before + mine:  # exactly one thread
        rank = want - before
        for j in range(CUT_ITEMS):
            if rank > 0 and first + j < V:
                if load_key(row, first + j) == thr_key:
                    rank -= 1
                    if rank == 0:
                        found[0] = first + j
    total = flags[THREADS - 1]
    cuda.syncthreads()  # found is written, and flags read, before anything reads or writes them again
    return total


@device_function
def count_span_equal(row, lo, hi, thr_key, total):
    """How many of ``row``'s entries ``[lo, hi)`` have the key ``thr_key``, in every thread: each thread counts its
    share (``THREADS * CUT_KEYS`` entries a step, its loads back to back; the span's tail a load at a time) and adds
    it to ``total[0]`` (shared, 0 before a barrier), one atomic a thread that saw any; order-free.  Every thread
    must call it (a barrier after the atomics)."""
    t = cuda.threadIdx.x
    keys = cuda.local.array(CUT_KEYS, uint32)
    span = THREADS * CUT_KEYS
    mine = uint32(0)
    n_spans = max(hi - lo, 0) // span
    for sp in range(n_spans):
        load_keys(row, lo + sp * span + t, keys, CUT_KEYS)
        for j in range(CUT_KEYS):
            if int64(keys[j]) == thr_key:
                mine += uint32(1)
    for i in range(lo + n_spans * span + t, hi, THREADS):  # the span's tail (the row's last)
        if load_key(row, i) == thr_key:
            mine += uint32(1)
    if mine > 0:
        cuda.atomic.add(total, 0, mine)
    cuda.syncthreads()
    return int64(total[0])


@kernel
def cut_count_kernel(x, stride_b, stride_v, V, fmt, thr_bits, cut_idx, seg, seg_count):
    """Grid ``(B, segments)``: ``seg_count[b, s]``, the number of row ``b``'s entries equal to the
    threshold in segment ``s`` (entries ``[s * seg, (s + 1) * seg)``), for the rows :func:`finish_row` left
    at ``CUT_SCAN``, so that each block of :func:`mask_kernel` settles its own cut (option ``cut_in_mask``:
    ``seg`` the mask block's span; for unpaired entries, ``THREADS * MASK_ITEMS``, it is shorter than
    ``THREADS * CUT_KEYS`` and the whole segment takes the tail loop, a load at a time).  Why: at small B the
    cut index's one block a row left the GPU mostly idle (H100, session 38: 29.1 of 126 us of bf16 masking at
    B=64).  The counts are order-free (:func:`count_span_equal`)."""
    b = cuda.blockIdx.x
    if cut_idx[b] != CUT_SCAN:  # block-uniform
        return
    s = cuda.blockIdx.y
    total = cuda.shared.array(1, uint32)
    row = (x, int64(b) * stride_b, stride_v, V, fmt)
    thr_key = key_of_bits(f32_bits_of(thr_bits[b], fmt))
    if cuda.threadIdx.x == 0:
        total[0] = 0
    cuda.syncthreads()
    lo = int64(s) * seg
    n = count_span_equal(row, lo, min(lo + seg, V), thr_key, total)
    if cuda.threadIdx.x == 0:
        seg_count[b, s] = n


@kernel
def cut_index_kernel(x, stride_b, stride_v, V, fmt, thr_bits, nties, cut_idx, sequential):
    """One block per row: the index of the ``nties``-th entry equal to the threshold, in
    index order, where :func:`finish_row` left ``CUT_SCAN`` in ``cut_idx`` (it settles
    the rows whose boundary group is kept whole, or not at all, without reading them).

    The row is read in groups of ``CUT_GROUP`` chunks of ``THREADS * CUT_ITEMS`` entries.  In a
    group, every thread counts its share of each chunk, ``CUT_UNROLL`` chunks loaded back to back
    (:func:`load_keys`, coalesced), into the chunk's shared count (an atomic a thread that saw any:
    counts are order-free); after one barrier every thread walks the chunk counts to the chunk that
    holds the wanted entry, the same one in every thread, and only that chunk is scanned in index
    order (:func:`cut_scan_chunk`).  Session 28 (H100) measured the kernel before it, a scan of one
    chunk after another, at 65 us of a 179 us bf16 masking at B=64; ``sequential`` (option
    ``cut_groups`` off) still runs it, for the A/B.  Shared-memory only (simulator-runnable)."""
    b = cuda.blockIdx.x
    if cut_idx[b] != CUT_SCAN:  # block-uniform
        return
    t = cuda.threadIdx.x
    flags = cuda.shared.array(THREADS, int64)
    counts = cuda.shared.array(CUT_GROUP, uint32)  # 32-bit: a native shared atomic
    found = cuda.shared.array(1, int64)
    keys = cuda.local.array(CUT_KEYS, uint32)
    row = (x, int64(b) * stride_b, stride_v, V, fmt)
    thr_key = key_of_bits(f32_bits_of(thr_bits[b], fmt))
    want = int64(nties[b])
    chunk = THREADS * CUT_ITEMS
    span = chunk * CUT_UNROLL
    if t == 0:
        found[0] = -1
    cuda.syncthreads()
    seen = int64(0)  # equal entries before this group (the same in every thread)
    g0 = int64(0)
    if sequential != 0:  # every chunk scanned in index order, one after another
        while g0 < V:  # block-uniform condition
            seen += cut_scan_chunk(row, g0, thr_key, want, seen, flags, found)
            if found[0] >= 0:
                break
            g0 += chunk
    while g0 < V and found[0] < 0:  # block-uniform condition
        for c in range(t, CUT_GROUP, THREADS):
            counts[c] = 0
        cuda.syncthreads()
        g_end = min(g0 + chunk * CUT_GROUP, V)
        n_spans = (g_end - g0) // span
        for s in range(n_spans):  # whole spans: entry at + t + j * THREADS is in chunk j // CUT_ITEMS
            load_keys(row, g0 + s * span + t, keys, CUT_KEYS)
            for u in range(CUT_UNROLL):
                mine = uint32(0)
                for j in range(CUT_ITEMS):
                    if int64(keys[u * CUT_ITEMS + j]) == thr_key:
                        mine += uint32(1)
                if mine > 0:
                    cuda.atomic.add(counts, s * CUT_UNROLL + u, mine)
        for i in range(g0 + n_spans * span + t, g_end, THREADS):  # the rest of the group
            if load_key(row, i) == thr_key:
                cuda.atomic.add(counts, (i - g0) // chunk, uint32(1))
        cuda.syncthreads()
        at = -1
        before = seen
        for c in range(CUT_GROUP):
            n = int64(counts[c])
            if at < 0:
                if before + n >= want:
                    at = c
                else:
                    before += n
        if at >= 0:  # block-uniform
            cut_scan_chunk(row, g0 + at * chunk, thr_key, want, before, flags, found)
            break
        seen = before
        g0 += chunk * CUT_GROUP
        cuda.syncthreads()  # the counts are read before the next group clears them
    if t == 0:
        cut_idx[b] = found[0]


@device_function
def mask_block_cut(row, b, s, thr_key, want, seg, seg_count, lookback):
    """The cut index a block of :func:`mask_kernel` masks its span ``s`` with (``seg`` entries from ``s * seg``),
    where the row's cut must be found (``CUT_SCAN``), from the counts of the entries equal to the threshold in
    row ``b``'s spans: ``-1`` when the ``want``-th such entry of the row lies in an earlier span, the row's length
    when in a later one, else its index (the span scanned a chunk at a time in index order,
    :func:`cut_scan_chunk`).  ``lookback`` 0: :func:`cut_count_kernel` wrote every span's count into
    ``seg_count[b, :]``; 1 (option ``mask_counts``): the block counts its own span, publishes the count plus one
    into ``seg_count[b, s]`` (0 there: not yet published; one atomic), and waits for the spans before it to
    publish theirs (atomic reads of L2; those blocks took their spans first, see :func:`mask_span_ticket`, and
    publish before they wait for anything, so the wait ends).  Block-uniform; every thread must call it."""
    t = cuda.threadIdx.x
    flags = cuda.shared.array(THREADS, int64)
    found = cuda.shared.array(2, int64)  # the found index; the entries equal to the threshold before the span
    total = cuda.shared.array(1, uint32)  # lookback: the span's own count
    V = row[3]
    start = int64(s) * seg
    stop = min(start + seg, V)
    if t == 0:
        found[0] = -1
        found[1] = 0
        total[0] = 0
    cuda.syncthreads()
    own = int64(0)
    if lookback != 0:
        own = count_span_equal(row, start, stop, thr_key, total)
        if t == 0:
            cuda.atomic.add(seg_count, (b, s), own + 1)
    mine = int64(0)
    for q in range(t, s, THREADS):  # the spans before this one, a share a thread (order-free integer sums)
        if lookback != 0:
            v = cuda.atomic.add(seg_count, (b, q), 0)
            while v == 0:  # that span's block has not published yet
                v = cuda.atomic.add(seg_count, (b, q), 0)
            mine += v - 1
        else:
            mine += seg_count[b, q]
    if mine > 0:
        cuda.atomic.add(found, 1, mine)
    cuda.syncthreads()
    before = found[1]
    if lookback == 0:
        own = seg_count[b, s]
    if before >= want:
        return int64(-1)
    if before + own < want:
        return int64(V)
    chunk = THREADS * CUT_ITEMS
    seen = before
    while start < stop and found[0] < 0:  # block-uniform (cut_scan_chunk ends on a barrier)
        seen += cut_scan_chunk(row, start, thr_key, want, seen, flags, found)
        start += chunk
    return found[0]


@device_function
def mask_span_ticket(b, seg_count):
    """Option ``mask_counts``: the span a block of a ``CUT_SCAN`` row of :func:`mask_kernel` masks, in the order
    the row's blocks arrive (a ticket: ``seg_count[b, -1]``, 0 before the launch), not ``blockIdx.y``: a block
    then only waits for spans that blocks already running took (:func:`mask_block_cut`), whatever order the GPU
    starts blocks in.  Block-uniform; every thread must call it (a barrier)."""
    ticket = cuda.shared.array(1, int64)
    if cuda.threadIdx.x == 0:
        ticket[0] = cuda.atomic.add(seg_count, (b, seg_count.shape[1] - 1), 1)
    cuda.syncthreads()
    return ticket[0]


@device_function
def kept(key, i, thr_key, c):
    """Whether entry ``i`` of key ``key`` is kept: above the threshold's key, or equal at an index <= ``c``."""
    return key > thr_key or (key == thr_key and i <= c)


@device_function
def mask_one(out, o, u, key, i, thr_key, c, fill, inplace):
    """One entry of :func:`mask_kernel`: raw bits ``u``, key ``key``, index ``i``, its slot ``o`` in ``out``."""
    if not kept(key, i, thr_key, c):
        out[o] = fill
    elif inplace == 0:
        out[o] = u


def mask_kernel(x, stride_b, stride_v, V, fmt, out, out_b, out_v, inplace, thr_bits, cut_idx, fill, loads_first,
                nties, seg, seg_count, lookback, stamps):
    """Grid (rows, blocks): ``fill`` (raw bits) wherever an entry is not kept; kept entries
    keep their bits.  Kept: key > threshold's key, or equal to it at an index <= cut_idx;
    NaN (key 0) never.  In place only the masked entries are written.

    ``loads_first`` (1): a block covers ``THREADS * MASK_ITEMS`` entries and a thread loads
    its ``MASK_ITEMS`` of them back to back before it writes any (the compiler cannot move
    a load above a store to ``out``, which in place is ``x``: one load loop then kept one
    load in flight a thread); 0: ``MASK_ITEMS_OLD`` entries a block row, each loaded, then
    written, in turn (the A/B's other side).  Either way each entry is read before the
    same thread writes it.

    Paired entries (``x`` and ``out`` both int32 words, see :func:`paired_buffer`; ``loads_first`` taken as 1): a
    block covers ``THREADS * MASK_PAIRED_ITEMS`` entries, a thread loads its ``MASK_WORDS`` words back to back and
    writes each word whole, the entries' own bits or the fill in either half (in place only the words that
    change).

    ``seg > 0`` (option ``cut_in_mask``): no :func:`cut_index_kernel` ran; ``seg`` is the block's span and
    :func:`cut_count_kernel` counted the entries equal to the threshold of each block's span into
    ``seg_count[b, blockIdx.y]``.  A block of a row left at ``CUT_SCAN`` settles its own cut
    (:func:`mask_block_cut`): none of its tied entries kept, all of them, or, in the one block that holds the
    ``nties[b]``-th, its index.  ``lookback`` 1 (option ``mask_counts``): no count kernel ran; such a block takes
    its span by a ticket (:func:`mask_span_ticket`) and counts it itself, and ``seg_count`` (0 before the launch)
    has a last column for the tickets.  ``stamps``: probe builds' phase times (:func:`stamp`: start, the cut
    settled, the end; row ``b * gridDim.y + blockIdx.y``)."""
    b = cuda.blockIdx.x
    base = int64(b) * stride_b
    thr_key = key_of_bits(f32_bits_of(thr_bits[b], fmt))
    c = cut_idx[b]
    t = cuda.threadIdx.x
    s = int64(cuda.blockIdx.y)
    at = int64(b) * cuda.gridDim.y + s
    stamp(stamps, at, 0)
    if seg > 0 and c == CUT_SCAN:  # block-uniform
        if lookback != 0:
            s = mask_span_ticket(b, seg_count)
        c = mask_block_cut((x, base, stride_v, V, fmt), b, s, thr_key, int64(nties[b]), seg, seg_count, lookback)
    stamp(stamps, at, 1)
    if paired_buffer(x):
        blk0 = s * (THREADS * MASK_PAIRED_ITEMS)
        o_base = int64(b) * out_b
        words = cuda.local.array(MASK_WORDS, uint32)
        for j in range(MASK_WORDS):
            i = blk0 + 2 * (t + j * THREADS)  # even, and V is even: both halves in the row or neither
            words[j] = x[(base + i) >> 1] if i < V else 0
        for j in range(MASK_WORDS):
            i = blk0 + 2 * (t + j * THREADS)
            if i < V:
                lo = words[j] & uint32(0xFFFF)
                hi = words[j] >> uint32(16)
                lo = lo if kept(key_of_bits(f32_bits_of(lo, fmt)), i, thr_key, c) else uint32(fill)
                hi = hi if kept(key_of_bits(f32_bits_of(hi, fmt)), i + 1, thr_key, c) else uint32(fill)
                word = lo | (hi << uint32(16))
                if inplace == 0 or word != words[j]:
                    # the same 32 bits as an int32 (a value in range: the simulator's arrays do not wrap)
                    out[(o_base + i) >> 1] = int32(int64(word) - ((int64(word) >> 31) << 32))
    elif loads_first:
        first = s * (THREADS * MASK_ITEMS) + t
        raw = cuda.local.array(MASK_ITEMS, uint32)
        keys = cuda.local.array(MASK_ITEMS, uint32)
        for j in range(MASK_ITEMS):
            i = first + j * THREADS
            raw[j] = x[base + i * stride_v] if i < V else 0
        keys_of_raw(raw, keys, MASK_ITEMS, fmt)
        for j in range(MASK_ITEMS):
            i = first + j * THREADS
            if i < V:
                mask_one(out, int64(b) * out_b + i * out_v, raw[j], int64(keys[j]), i, thr_key, c, fill, inplace)
    else:
        first = s * (THREADS * MASK_ITEMS_OLD) + t
        for j in range(MASK_ITEMS_OLD):
            i = first + j * THREADS
            if i < V:
                u = x[base + i * stride_v]
                mask_one(out, int64(b) * out_b + i * out_v, u, key_of_bits(f32_bits_of(u, fmt)), i, thr_key, c,
                         fill, inplace)
    if STAMPS:  # the block's end: every thread's writes issued
        cuda.syncthreads()
    stamp(stamps, at, 2)


# mask_kernel compiled for two blocks an SM (its 48-56 registers a thread), and for three and four (option
# mask_blocks: launch bounds that hold it to 40 or 32 registers, for more loads in flight an SM; sm_90 NVVM: three
# blocks spill 16 / 32 bytes a thread for 32-bit rows, none for paired words, four 56-100).  The same function.
mask_kernel_b3 = kernel(min_blocks=3)(mask_kernel)
mask_kernel_b4 = kernel(min_blocks=4)(mask_kernel)
mask_kernel = kernel(mask_kernel)
