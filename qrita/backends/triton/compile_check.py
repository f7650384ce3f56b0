"""Ahead-of-time compile of every Triton kernel variant, without a GPU.

    python -m qrita.backends.triton.compile_check cuda:90 cuda:80 hip:gfx942
    python -m qrita.backends.triton.compile_check --shard 0/2 cuda:90     (and 1/2 in another process)

compiles the cut, span, finish, miss-round, tie, mask and sample kernels for every dtype with the launch
geometry of :mod:`qrita.backends.triton.launch` and prints one line per
variant; the exit status is non-zero if any fails.  For CUDA targets it also rejects a float
tree reduction whose first step the compiler contracted into an FMA (:func:`contracted_shuffles`).

``--subset`` compiles a representative subset instead (:func:`representative`: every kernel once per
dtype, every value of every constexpr and warp count at least once; about a quarter of the variants
and of the time).  CI compiles every variant for sm_90, the primary target, and the subset for sm_80
and gfx942 (``tests/test_triton_compile.py``; ``QRITA_COMPILE_ALL=1`` compiles all of them everywhere).
Run it in a process of its own (``tests/test_triton_compile.py`` does): ``triton.compile`` for a
foreign target must not share a process with interpreter-mode kernels.
"""

from __future__ import annotations

import inspect
import re
import sys
import time

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from ...core import search as core_search
from ...core.keys import KEY_CONSTANTS
from ...core.lut import TOPK_DELTA, TOPP_DELTA
from ...core.spec import GPU_DTYPES, NUM_PIVOTS, SAMPLE_SIZE, TOPK_LUT_STEPS_PER_OCTAVE
from . import kernels, launch

POINTER = {"float32": "*fp32", "float16": "*fp16", "bfloat16": "*bf16"}


# the option pdl of the kernels that take it, as the launch gives it on the target being compiled (main sets it)
_PDL = 0


def _source(fn, args: dict, constexprs: dict) -> ASTSource:
    # the parameters a variant leaves out take their defaults (constexprs are placed by their index among the
    # parameters given, so a gap before a given one would shift it), PDL the target's
    defaults = {name: param.default for name, param in inspect.signature(fn.fn).parameters.items()
                if param.default is not inspect.Parameter.empty and name not in args}
    constexprs = {**defaults, **({"PDL": _PDL} if "PDL" in defaults else {}), **constexprs}
    given = dict(args)
    given.update({name: "constexpr" for name in constexprs})
    unknown = set(given) - set(fn.arg_names)
    assert not unknown, f"{fn.__name__} has no parameters {sorted(unknown)}"
    # the kernel's own parameter order, whatever the order of the dicts
    sig = {name: given[name] for name in fn.arg_names if name in given}
    names = list(sig)
    return ASTSource(fn=fn, signature=sig, constexprs={(names.index(k),): v for k, v in constexprs.items()})


def variants(dtype: str, V: int = 131072, small: bool = False):
    """(name, ASTSource, num_warps) of every kernel the backend launches for ``dtype`` at vocabulary ``V``.

    ``small``: the kernels whose constants change with the small-batch top-k geometry
    (spans of ``launch.SMALL_SPAN``, ``launch.span_of``), named with ", small"."""
    if not small:
        default = list(_variants(dtype, V, launch.MAX_SPAN, launch.SPAN_CAP))
        yield from default
        if launch.TOPP_SPAN_CAP != launch.SPAN_CAP:
            # the top-p geometry's slot (launch.span_of top_p): every variant whose constants it changes, named
            # ", topp", that a top-p request launches with the default options (not TOPP_NOT_LAUNCHED; each option's
            # code compiles in the default geometry's variants above)
            base = {name: src.hash() for name, src, _ in default}
            for name, src, num_warps in _variants(dtype, V, launch.MAX_SPAN, launch.TOPP_SPAN_CAP):
                if src.hash() != base.get(name) and not any(part in name for part in TOPP_NOT_LAUNCHED):
                    yield name[:-1] + ", topp]", src, num_warps
        return
    span, cap = launch.span_of(V, 1, False, top_k_only=True)
    for name, src, num_warps in _variants(dtype, V, span, cap):
        vector = not name.startswith("span_kernel") or ", vector" in name  # B <= 16: the vector layout
        # a top-p with a scalar top-k (no softmax partials, "no_row_z") takes the small geometry too
        excluded = [part for part in SMALL_EXCLUDED if part != "has_p=True" or "no_row_z" not in name]
        if name.startswith(SMALL_KERNELS) and vector and not any(part in name for part in excluded):
            yield name[:-1] + ", small]", src, num_warps


# variant name parts the top-p geometry does not launch by default: the span passes of the top-k geometries (no
# top-p; a scalar top-k's, no_row_z), the wide spans, the row-mode and folded (chained) miss rounds (launch: the top-k
# geometry only), the radix top-k search, and the options span_prefetch, append_agg, append_defer, fused_rounds off,
# fuse_draw.  (Its value lanes and sample lanes are defaults: launch.SAMPLE_LANES.)
TOPP_NOT_LAUNCHED = ("has_p=False", "no_row_z", "wide", "row_mode", "fold", "chain", "radix_topk", "pivot_topk",
                     "prefetch", "agg=", "defer", "unfused_rounds", "draw")


# the kernels of a top-k alone (or with a top-p, no_row_z) at B <= launch.SMALL_SPAN_MAX_ROWS whose constants
# depend on the span
SMALL_KERNELS = ("span_kernel", "finish_kernel", "round_kernel", "update_kernel", "tie_count_kernel",
                 "tie_pick_kernel", "sample_slot_kernel", "slot_ties_kernel")
SMALL_EXCLUDED = ("has_p=True", "cut_in=True", "two_cuts", "mass_only", "value_lanes", "wide", "prefetch",
                  "span=32768", "agg=", "defer", "_topk")


SPAN_BASE = dict(has_p=False, prefetch=False, cut_in=True, need_min=False, wide=False, with_idx=False,
                 strided=True, two_cuts=False, agg=0, defer=False, row_z=True, fold=False, warps=launch.SPAN_WARPS)
SPAN_VARIANTS = (
    {}, dict(has_p=True), dict(has_p=True, cut_in=False, need_min=True, strided=False),
    dict(cut_in=False, need_min=True, strided=False), dict(has_p=True, prefetch=True), dict(wide=True),
    dict(has_p=True, with_idx=True), dict(wide=True, with_idx=True), dict(strided=False),
    dict(has_p=True, two_cuts=True), dict(has_p=True, cut_in=False, need_min=True, with_idx=True, strided=False,
                                          two_cuts=True),
    # 16 < B <= CUT_PASS_MIN_ROWS: the cut in the span programs, the strided layout
    dict(has_p=True, cut_in=False, two_cuts=True), dict(has_p=True, cut_in=False, with_idx=True, two_cuts=True),
    dict(cut_in=False), dict(cut_in=False, with_idx=True),
    # B <= 16, a scalar top-k (the small geometry's span kernels)
    dict(cut_in=False, strided=False), dict(cut_in=False, with_idx=True, strided=False),
    # the options append_agg (one slot atomic per thread and block) and append_defer
    dict(agg=256), dict(has_p=True, two_cuts=True, agg=256),
    dict(defer=True), dict(has_p=True, with_idx=True, two_cuts=True, defer=True),
    # a scalar top-k with a top-p (no softmax partials): B >= 256 (wide), sampling, k > 1024 or fewer rows,
    # 16 < B <= 64, B <= 16
    dict(has_p=True, row_z=False, wide=True), dict(has_p=True, row_z=False, wide=True, with_idx=True),
    dict(has_p=True, row_z=False), dict(has_p=True, row_z=False, cut_in=False),
    dict(has_p=True, row_z=False, cut_in=False, strided=False),
    dict(has_p=True, row_z=False, cut_in=False, strided=False, with_idx=True),
    # ... sampling at 16 < B <= 64: four warps (launch.span_warps_of)
    dict(has_p=True, row_z=False, cut_in=False, with_idx=True, warps=launch.KP_IDX_SPAN_WARPS),
    # the option fold_finish (the span pass's last program of a row runs the finish), at B <= 16; one
    # variant (the folded kernels compile slowly; the interpreter suite runs the other request kinds)
    dict(cut_in=False, strided=False, fold=True),
)


OUTPUTS = dict(thr_key_ptr="*i64", thr_bits_ptr="*i32", num_ties_ptr="*i32", count_ptr="*i32", hit_ptr="*i8",
               cut_idx_ptr="*i64")


def _variants(dtype: str, V: int, span0: int, cap0: int):
    kc = KEY_CONSTANTS[dtype]
    code = launch.DTYPE_CODE[dtype]
    x = POINTER[dtype]
    n_spans_p2 = max(2, triton.next_power_of_2(triton.cdiv(V, span0)))
    slots = n_spans_p2 * cap0
    # the wide geometry's slot keys a span (a small scalar top-k over many rows, launch.span_of)
    wide_cap = launch.span_of(V, launch.WIDE_SPAN_MIN_ROWS, True, top_k_only=True, k=1)[1]
    search_warps = 8
    npm = triton.next_power_of_2(launch.MISS_PIVOTS + 1)
    topp_share = launch.two_cut_share_of(launch.TOPP_SPAN_CAP)  # the second cut's share (the top-p geometry's)
    row = {"x_ptr": x, "stride_xb": "i64", "stride_xv": "i64", "V": "i32", "row0": "i32",
           "k_ptr": "*i64", "k_scalar": "i64", "p_ptr": "*fp32", "p_scalar": "fp32"}
    span_args = dict(row, k_mode="i32", p_mode="i32", topk_lut_ptr="*fp32", topp_lut_ptr="*fp32",
                     cand_ptr="*i32", part_i_ptr="*i64", part_f_ptr="*fp32", n_spans="i32", ctr_ptr="*i32",
                     cut_ptr="*i64", idx_ptr="*i32", part_low_ptr="*i64", ticket_ptr="*i32", ties_all="i32",
                     truncation="i32", state_i_ptr="*i64", state_f_ptr="*fp32", **OUTPUTS, lanes_ptr="*i64")
    search_const = dict(N_SPANS_P2=n_spans_p2, SPAN_CAP=cap0, CB=min(launch.CB, cap0), REG_CAP=slots,
                        REG_SMALL=launch.REG_SMALL, REG_MID=launch.REG_MID, FUSED_ROUNDS=launch.FUSED_ROUNDS,
                        RADIX=launch.RADIX_TOPK, NP=triton.next_power_of_2(NUM_PIVOTS + 1),
                        MAX_ROUNDS=core_search.max_rounds(kc.width, NUM_PIVOTS) + 2, DTYPE=code, W=kc.width,
                        KEY_NEG_INF=kc.key_neg_inf)
    # the finish's constants of a span pass that runs it (FOLD)
    fold_const = {name: search_const[name] for name in ("N_SPANS_P2", "CB", "REG_CAP", "REG_SMALL", "REG_MID",
                                                         "FUSED_ROUNDS", "RADIX", "NP", "MAX_ROUNDS")}
    cut_args = dict(row, k_mode="i32", p_mode="i32", topk_lut_ptr="*fp32", topp_lut_ptr="*fp32", cut_ptr="*i64",
                    rowcap="i32")
    cut_const = dict(DTYPE=code, W=kc.width, SAMPLE=SAMPLE_SIZE, LUT_STEPS=TOPK_LUT_STEPS_PER_OCTAVE,
                     TOPK_LUT_N=TOPK_DELTA.size, TOPP_LUT_N=TOPP_DELTA.size)
    for two_cuts in (False, True):
        for sample_cut in (0, launch.SAMPLE_CUT or 1024):  # option sample_cut (a request with a top-k)
            name = f"cut_kernel[{dtype}" + (", two_cuts" if two_cuts else "") + (", sample_cut]" if sample_cut else "]")
            share = topp_share if two_cuts else 0
            wide = launch.SAMPLE_WIDE if sample_cut else 0  # option sample_wide, as launched by default
            yield name, _source(kernels.cut_kernel, cut_args,
                                dict(cut_const, TWO_CUTS=share, SAMPLE_CUT=sample_cut, SAMPLE_WIDE=wide)), 4
    # Each variant names what differs from SPAN_BASE: has_p (a top-p), prefetch (option), cut_in (the cut
    # computed by cut_kernel, above CUT_PASS_MIN_ROWS rows), need_min (the smallest key tracked), wide (a
    # small scalar top-k alone over many rows, launch.span_of), with_idx (token indices kept for sampling),
    # strided (the load layout above STRIDED_MIN_ROWS rows), two_cuts, agg and defer (options), row_z (the
    # softmax partials; off for a scalar top-k with a top-p), fold (option fold_finish), warps (when not
    # launch.SPAN_WARPS).
    for v in SPAN_VARIANTS:
        has_p, prefetch, cut_in, need_min, wide, with_idx, strided, two_cuts, agg, defer, row_z, fold, warps = (
            dict(SPAN_BASE, **v)[name] for name in SPAN_BASE)
        span = launch.WIDE_SPAN if wide else span0
        span_const = dict(SPAN=span, SPAN_CAP=wide_cap if wide else cap0, BLOCK=launch.BLOCK, DTYPE=code,
                          W=kc.width, KEY_NEG_INF=kc.key_neg_inf, KEY_POS_INF=kc.key_pos_inf, SAMPLE=SAMPLE_SIZE,
                          LUT_STEPS=TOPK_LUT_STEPS_PER_OCTAVE, TOPK_LUT_N=TOPK_DELTA.size,
                          TOPP_LUT_N=TOPP_DELTA.size, FOLD=fold, **fold_const, VALUE_LANES=False, NPM=npm,
                          HAS_P=has_p, PREFETCH=prefetch, CUT_IN=cut_in,
                          NEED_MIN=need_min, WITH_IDX=with_idx, STRIDED=strided,
                          TWO_CUTS=topp_share if two_cuts else 0, AGG=agg, DEFER=defer, ROW_Z=row_z,
                          NEED_NMAX=need_min)  # (requests that need the smallest key may hold p <= 0)
        name = f"span_kernel[{dtype}, has_p={has_p}, cut_in={cut_in}, need_min={need_min}"
        name += ", prefetch" if prefetch else ""
        name += ", with_idx" if with_idx else ""
        name += "" if strided else ", vector"
        name += ", two_cuts" if two_cuts else ""
        name += f", agg={agg}" if agg else ""
        name += ", defer" if defer else ""
        name += "" if row_z else ", no_row_z"
        name += ", fold" if fold else ""
        name += f", {warps} warps" if warps != launch.SPAN_WARPS else ""
        name += ", wide]" if span == launch.WIDE_SPAN else "]"
        yield name, _source(kernels.span_kernel, span_args, span_const), warps
    outputs = OUTPUTS
    finish_args = dict(row, k_mode="i32", p_mode_arg="i32", ties_all="i32", truncation="i32", cand_ptr="*i32",
                       part_i_ptr="*i64", part_f_ptr="*fp32", n_spans="i32", ctr_ptr="*i32", state_i_ptr="*i64",
                       state_f_ptr="*fp32", **outputs, part_low_ptr="*i64", lanes_ptr="*i64")
    # (two cuts, value lanes, sample lanes): options
    for two_cuts, value_lanes, sample in ((False, False, 0), (True, False, 0), (False, True, 0),
                                          (True, True, launch.LANE_SAMPLES)):
        name = f"finish_kernel[{dtype}" + (", two_cuts" if two_cuts else "") + (", value_lanes" if value_lanes else "")
        name += ", sample_lanes" if sample else ""
        const = dict(search_const, TWO_CUTS=two_cuts, VALUE_LANES=value_lanes, NPM=npm, SAMPLE_LANES=sample)
        yield name + "]", _source(kernels.finish_kernel, finish_args, const), search_warps
    if dtype == "float32":  # fused_rounds=False (a block reduction a statistic; the code does not depend on the dtype)
        const = dict(search_const, TWO_CUTS=False, VALUE_LANES=False, NPM=npm, FUSED_ROUNDS=False)
        name = f"finish_kernel[{dtype}, unfused_rounds]"
        yield name, _source(kernels.finish_kernel, finish_args, const), search_warps
        # the other top-k search of the register tiles (option radix_topk): the pivot search, or radix select
        const = dict(const, FUSED_ROUNDS=launch.FUSED_ROUNDS, RADIX=not launch.RADIX_TOPK)
        name = f"finish_kernel[{dtype}, " + ("pivot_topk]" if launch.RADIX_TOPK else "radix_topk]")
        yield name, _source(kernels.finish_kernel, finish_args, const), search_warps
    round_args = dict(row, k_mode="i32", p_mode_arg="i32", cand_ptr="*i32", rpart_i_ptr="*i32",
                      rpart_f_ptr="*fp32", n_spans="i32", ctr_ptr="*i32", state_i_ptr="*i64", state_f_ptr="*fp32",
                      lanes_ptr="*i64", ticket_ptr="*i32", ties_all="i32", last="i32", **outputs, n_loop="i32",
                      chain_ptr="*i32", done_ptr="*i32", n_rows="i32")
    # (mass only, span, value lanes, fold, row mode): fold, the update in the round (a top-k at B <=
    # launch.FOLD_MAX_ROWS; the top-p rounds of the option fold_updates run in the interpreter suite only: the
    # folded kernels compile slowly); row mode, one program a row and its update (a top-k above that, wide spans)
    # chain: the folded rounds of a wave in one launch (option chain_rounds; on for one row: launch.CHAIN_MAX_ROWS)
    for mass_only, span, value_lanes, fold, row_mode, chain in (
            (False, span0, False, False, False, False), (True, span0, False, False, False, False),
            (False, launch.WIDE_SPAN, False, False, False, False), (True, span0, True, False, False, False),
            (False, span0, False, True, False, False), (False, launch.WIDE_SPAN, False, False, True, False),
            (False, span0, False, True, False, True)):
        round_const = dict(SPAN=span, SPAN_CAP=wide_cap if span == launch.WIDE_SPAN else cap0, BLOCK=launch.ROUND_BLOCK,
                           UNROLL=launch.ROUND_UNROLL, NPM=npm, DTYPE=code, W=kc.width, KEY_NEG_INF=kc.key_neg_inf,
                           FOLD=fold, **{name: search_const[name] for name in ("N_SPANS_P2", "CB", "REG_CAP",
                                                                                "REG_SMALL", "REG_MID",
                                                                                "FUSED_ROUNDS", "RADIX", "NP",
                                                                                "MAX_ROUNDS")},
                           MASS_ONLY=mass_only, VALUE_LANES=value_lanes, ROW_MODE=row_mode, CHAIN=chain)
        name = f"round_kernel[{dtype}" + (", mass_only" if mass_only else "") + (", value_lanes" if value_lanes else "")
        name += ", fold" if fold else ""
        name += ", row_mode" if row_mode else ""
        name += ", chain" if chain else ""
        name += ", wide]" if span == launch.WIDE_SPAN else "]"
        yield name, _source(kernels.round_kernel, round_args, round_const), 8
    update_args = dict(row, k_mode="i32", p_mode_arg="i32", ties_all="i32", cand_ptr="*i32", rpart_i_ptr="*i32",
                       rpart_f_ptr="*fp32", n_spans="i32", ctr_ptr="*i32", state_i_ptr="*i64", state_f_ptr="*fp32",
                       last="i32",
                       **outputs, lanes_ptr="*i64", row_slot="i32")
    update_const = dict(search_const, NPM=npm)
    update_const = {name: update_const[name] for name in ("N_SPANS_P2", "SPAN_CAP", "CB", "REG_CAP", "REG_SMALL",
                                                          "REG_MID", "FUSED_ROUNDS", "RADIX", "NP", "NPM", "MAX_ROUNDS",
                                                          "DTYPE", "W", "KEY_NEG_INF")}
    for mass_only, value_lanes in ((False, False), (True, False), (True, True)):
        const = dict(update_const, MASS_ONLY=mass_only, VALUE_LANES=value_lanes)
        name = f"update_kernel[{dtype}" + (", mass_only" if mass_only else "")
        name += ", value_lanes]" if value_lanes else "]"
        yield name, _source(kernels.update_kernel, update_args, const), search_warps
    tie_args = {"x_ptr": x, "stride_xb": "i64", "stride_xv": "i64", "V": "i32", "row0": "i32", "thr_key_ptr": "*i64",
                "cut_idx_ptr": "*i64", "tie_cnt_ptr": "*i32", "n_spans": "i32", "ticket_ptr": "*i32",
                "num_ties_ptr": "*i32"}
    # the compares of the mask and the tie counts (option value_cmp): the default, and once the other; the key
    # constants only where values are compared, as launched
    def compares(value_cmp: bool) -> dict:
        return dict(VALUE_CMP=True, KEY_NEG_INF=kc.key_neg_inf, KEY_POS_INF=kc.key_pos_inf) if value_cmp else {
            "VALUE_CMP": False}

    tie_cmp, mask_cmp = launch.VALUE_CMP >= 2, launch.VALUE_CMP >= 1
    # (span, fold, value_cmp): the pick in the count launch by default (launch.FOLD_TIES); apart, an option
    for span, fold, value_cmp in ((span0, True, tie_cmp), (launch.WIDE_SPAN, True, tie_cmp), (span0, False, tie_cmp),
                                  (span0, True, not tie_cmp)):
        const = dict(SPAN=span, BLOCK=launch.BLOCK, DTYPE=code, W=kc.width, FOLD=fold, N_SPANS_P2=n_spans_p2,
                     CHUNK=launch.TIE_CHUNK, REVERSE=kc.width in launch.TIE_REVERSE_WIDTHS, **compares(value_cmp))
        name = f"tie_count_kernel[{dtype}, span={span}" + (", fold" if fold else "")
        name += (", value_cmp]" if value_cmp else "]")
        yield name, _source(kernels.tie_count_kernel, tie_args, const), 8
    pick_args = {name: tie_args[name] for name in ("x_ptr", "stride_xb", "stride_xv", "V", "row0", "thr_key_ptr",
                                                   "num_ties_ptr", "cut_idx_ptr", "tie_cnt_ptr", "n_spans")}
    const = dict(SPAN=span0, N_SPANS_P2=n_spans_p2, CHUNK=launch.TIE_CHUNK, DTYPE=code, W=kc.width)
    yield f"tie_pick_kernel[{dtype}, span={span0}]", _source(kernels.tie_pick_kernel, pick_args, const), 8
    slot_args = {"cand_ptr": "*i32", "idx_ptr": "*i32", "part_i_ptr": "*i64", "n_spans": "i32", "row0": "i32",
                 "thr_key_ptr": "*i64", "cut_idx_ptr": "*i64", "hit_ptr": "*i8", "state_ptr": "*i64",
                 "out_ptr": "*i64"}
    const = dict(SPAN_CAP=cap0, N_SPANS_P2=n_spans_p2, CHUNK=launch.SAMPLE_SLOT_CHUNK, DTYPE=code,
                 W=kc.width, KEY_POS_INF=kc.key_pos_inf)
    yield f"sample_slot_kernel[{dtype}]", _source(kernels.sample_slot_kernel, slot_args, const), 4
    ties_args = dict(slot_args, ctr_ptr="*i32", num_ties_ptr="*i32", drawn_ptr="*i8")
    ties_args = {name: ties_args[name] for name in ("cand_ptr", "idx_ptr", "part_i_ptr", "n_spans", "ctr_ptr", "row0",
                                                    "thr_key_ptr", "num_ties_ptr", "cut_idx_ptr", "hit_ptr",
                                                    "state_ptr", "out_ptr", "drawn_ptr")}
    # draw: the option fuse_draw (off by default, launch.FUSE_DRAW), the slot draw in it
    for draw in (False, True):
        const = dict(SPAN_CAP=cap0, N_SPANS_P2=n_spans_p2, CHUNK=launch.SLOT_CHUNK, TILE=launch.TIE_TILE,
                     IDX_BITS=24, W=kc.width, DRAW=draw, DRAW_CHUNK=launch.SAMPLE_SLOT_CHUNK, DTYPE=code,
                     KEY_POS_INF=kc.key_pos_inf if draw else 0)
        yield f"slot_ties_kernel[{dtype}" + (", draw]" if draw else "]"), _source(kernels.slot_ties_kernel,
                                                                                ties_args, const), 4
    mask_args = {"x_ptr": x, "stride_xb": "i64", "stride_xv": "i64", "out_ptr": x, "stride_ob": "i64",
                 "stride_ov": "i64", "V": "i32", "row0": "i32", "thr_key_ptr": "*i64", "cut_idx_ptr": "*i64",
                 "hit_ptr": "*i8", "mask_value": "fp32"}
    # the width's default order (launch.MASK_REVERSE_WIDTHS), and the other for the option mask_reverse
    # and the compares' default, then the other (option value_cmp)
    for scatter, reverse, value_cmp in ((False, False, mask_cmp), (True, False, mask_cmp), (False, True, mask_cmp),
                                        (False, False, not mask_cmp)):
        const = dict(BLOCK=launch.MASK_BLOCK, DTYPE=code, W=kc.width, SCATTER=scatter, REVERSE=reverse,
                     **compares(value_cmp))
        name = f"mask_kernel[{dtype}, scatter={scatter}" + (", reverse" if reverse else "")
        name += (", value_cmp]" if value_cmp else "]")
        yield name, _source(kernels.mask_kernel, mask_args, const), 8
    # the option mask_block's largest block (the most registers; the other sizes differ from it in the constant only)
    block = max(launch.MASK_BLOCK_CHOICES)
    const = dict(BLOCK=block, DTYPE=code, W=kc.width, REVERSE=kc.width in launch.MASK_REVERSE_WIDTHS,
                 **compares(mask_cmp))
    yield f"mask_kernel[{dtype}, block={block}]", _source(kernels.mask_kernel, mask_args, const), 8
    scatter_args = {name: slot_args[name] for name in ("cand_ptr", "idx_ptr", "part_i_ptr", "n_spans", "row0",
                                                       "thr_key_ptr", "cut_idx_ptr", "hit_ptr")}
    scatter_args.update(out_ptr=x, stride_ob="i64", stride_ov="i64")
    const = dict(SPAN_CAP=cap0, N_SPANS_P2=n_spans_p2, CHUNK=launch.SLOT_CHUNK, DTYPE=code, W=kc.width)
    yield f"scatter_kernel[{dtype}]", _source(kernels.scatter_kernel, scatter_args, const), 4
    sample_args = {"x_ptr": x, "stride_xb": "i64", "stride_xv": "i64", "V": "i32", "row0": "i32",
                   "thr_key_ptr": "*i64", "cut_idx_ptr": "*i64", "state_ptr": "*i64", "part_v_ptr": "*fp64",
                   "part_i_ptr": "*i64", "n_parts": "i32", "done_ptr": "*i8", "ticket_ptr": "*i32", "count_ptr": "*i32",
                   "out_ptr": "*i64"}
    n_parts_p2 = max(2, triton.next_power_of_2(triton.cdiv(V, launch.SAMPLE_PART)))
    # fold: the pick in the launch of the parts (launch.FOLD_PICK); without it, sample_pick_kernel
    for fold in (True, False):
        const = dict(PART=launch.SAMPLE_PART, BLOCK=launch.SAMPLE_BLOCK, DTYPE=code, W=kc.width,
                     KEY_POS_INF=kc.key_pos_inf, FOLD=fold, NP2=n_parts_p2)
        yield f"sample_kernel[{dtype}" + (", fold]" if fold else "]"), _source(kernels.sample_kernel, sample_args,
                                                                              const), 8
    pick_args = {"part_v_ptr": "*fp64", "part_i_ptr": "*i64", "count_ptr": "*i32", "out_ptr": "*i64", "row0": "i32",
                 "n_parts": "i32", "done_ptr": "*i8"}
    yield f"sample_pick_kernel[{dtype}]", _source(kernels.sample_pick_kernel, pick_args, dict(NP2=n_parts_p2)), 1
    if dtype == GPU_DTYPES[0]:  # the stream states of qrita.sample's seeds (no dtype)
        mix = _source(kernels.mix_states_kernel, {"z_ptr": "*i64", "n": "i32"}, dict(BLOCK=launch.MIX_BLOCK))
        yield "mix_states_kernel", mix, 4


_SHUFFLE = re.compile(r"shfl\.sync\.bfly\.b32\s+(%r\d+)")
_FMA = re.compile(r"fma\.rn\.f32\s+%r\d+,\s*%r\d+,\s*%r\d+,\s*(%r\d+);")
_LOC = re.compile(r"^\s*\.loc\s.*//\s*(\S.*)$")


def contracted_shuffles(ptx: str) -> list[str]:
    """Source locations (PTX ``.loc`` comments) of FMAs whose addend was shuffled in from another lane.

    That is a float tree reduction (``tl.sum``) of a product whose first step the compiler
    contracted: each lane adds the other lane's rounded product to its own unrounded one, so lanes
    end a last bit apart, and a program whose threads disagree on a value that steers a search
    goes wrong (``kernels.span_masses``).  A reduction whose result is only stored is harmless,
    but no kernel of this backend needs one: every hit fails the check.
    """
    shuffled, hits, loc = set(), [], "?"
    for line in ptx.splitlines():
        m = _LOC.match(line)
        if m:
            loc = m.group(1)
            continue
        m = _SHUFFLE.search(line)
        if m:
            shuffled.add(m.group(1))
            continue
        m = _FMA.search(line)
        if m and m.group(1) in shuffled:
            hits.append(loc)
    return hits


def _features(dtype: str, src: ASTSource, num_warps: int) -> set:
    """What a variant exercises: its kernel for its dtype, its warp count, and each constexpr's value."""
    fn = src.fn.__name__
    names = list(src.signature)
    return ({(fn, "dtype", dtype), (fn, "num_warps", num_warps)}
            | {(fn, names[i], value) for (i,), value in src.constants.items()})


def representative(entries: list) -> list:
    """A deterministic subset of ``entries`` ((dtype, name, ASTSource, num_warps), as :func:`main` builds
    them) with every feature of :func:`_features` of the whole list: every kernel compiled at least once
    for each dtype, every value that any constexpr (a feature flag, a span, a geometry constant) or the
    warp count takes for a kernel at least once.  Combinations of flags are not all covered (the full
    set for the primary target does that).  Greedy set cover in the list's order, then picks that
    the others make redundant dropped; no randomness, so a run's subset is the same everywhere."""
    feats = [_features(dtype, src, num_warps) for dtype, _, src, num_warps in entries]
    need = set().union(*feats)
    chosen: list[int] = []
    covered: set = set()
    while covered != need:
        best = max(range(len(entries)), key=lambda i: (len(feats[i] - covered), -i))
        chosen.append(best)
        covered |= feats[best]
    for i in list(chosen):  # earliest picks first: the greedy takes broad cheap ones that later picks cover
        if set().union(*(feats[j] for j in chosen if j != i)) == need:
            chosen.remove(i)
    return [entries[i] for i in sorted(chosen)]


def parse_target(spec: str) -> GPUTarget:
    backend, arch = spec.split(":")
    if backend == "cuda":
        return GPUTarget("cuda", int(arch), 32)
    return GPUTarget("hip", arch, 64)  # CDNA wavefronts are 64 wide


def main(argv: list[str] | None = None) -> int:
    """``[--subset] [--shard I/N] TARGET...``: every variant (or the :func:`representative` subset) for each
    target; with ``--shard``, the I-th of N interleaved parts of that list (0 <= I < N), so that N processes
    compile one target together."""
    args = list(argv if argv is not None else sys.argv[1:])
    subset = "--subset" in args
    shard, n_shards = 0, 1
    if "--shard" in args:
        at = args.index("--shard")
        shard, n_shards = (int(v) for v in args[at + 1].split("/"))
        assert 0 <= shard < n_shards, f"--shard {args[at + 1]}: want I/N with 0 <= I < N"
        del args[at:at + 2]
    targets = [a for a in args if a != "--subset"] or ["cuda:90", "cuda:80"]
    failures = 0
    global _PDL
    for spec in targets:
        target = parse_target(spec)
        # the launch's programmatic dependent launch (launch.pdl_capable: CUDA sm_90 and later)
        _PDL = launch.PDL if target.backend == "cuda" and int(target.arch) >= 90 else 0
        entries = [(dtype, name, src, num_warps) for dtype in GPU_DTYPES for small in (False, True)
                   for name, src, num_warps in variants(dtype, small=small)]
        if subset:
            total, entries = len(entries), representative(entries)
            print(f"{spec}: a representative subset, {len(entries)} of {total} variants", flush=True)
        if n_shards > 1:
            total, entries = len(entries), entries[shard::n_shards]
            print(f"{spec}: shard {shard} of {n_shards}, {len(entries)} of {total} variants", flush=True)
        for _, name, src, num_warps in entries:
            t = time.time()
            try:
                # (kernels that take PDL are launched with launch_pdl where it is on)
                extra = {"launch_pdl": True} if _PDL and "PDL" in src.fn.arg_names else {}
                compiled = triton.compile(src, target=target, options=dict(num_warps=num_warps, **extra))
                binary = "cubin" if target.backend == "cuda" else "hsaco"
                assert binary in compiled.asm, f"no {binary} produced"
                if target.backend == "cuda":
                    hits = contracted_shuffles(compiled.asm["ptx"])
                    assert not hits, f"float reduction with a contracted first step (lanes disagree): {hits[:3]}"
                print(f"ok    {spec:12s} {name:40s} {time.time() - t:6.1f}s", flush=True)
            except Exception as exc:  # noqa: BLE001 - report every failure, then fail
                failures += 1
                print(f"FAIL  {spec:12s} {name:40s} {type(exc).__name__}: {exc}", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
