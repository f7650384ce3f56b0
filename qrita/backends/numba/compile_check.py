"""Compile every Numba-CUDA kernel of this backend to PTX for a GPU target, without a GPU.

    python -m qrita.backends.numba.compile_check [--cc 9.0] [--ptxas]

The CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``) runs the kernels as Python, so it accepts code
that Numba cannot compile for a GPU (a shared array whose shape is an expression, an unsupported
call); this check compiles the real kernels with NVVM (the CUDA toolkit's ``libnvvm``), with the
launch bounds the backend uses, for the input widths (16 and 32-bit) and per-row argument dtypes
the launcher passes.  ``--ptxas`` also assembles each kernel with ``ptxas`` (when on the PATH) and
prints its registers and spills.  Exit status 1 if any kernel fails to compile.

numba-cuda asks the current device for its compute capability when it compiles a device function
(``CUDADispatcher.compile_device``); with no GPU the check answers with the target's, once, in this
process (it must not run under the simulator).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import types as pytypes


def _no_device_answers(cc: tuple[int, int]) -> None:
    import numba.cuda.dispatcher as dispatcher

    dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=cc)


KERNELS = ("select_kernel", "scan_split_kernel", "mass_split_kernel", "finish_split_kernel", "cut_count_kernel",
           "cut_index_kernel", "mask_kernel", "mask_kernel_b3", "mask_kernel_b4", "zero_kernel", "keys_kernel",
           "wide_init_kernel", "wide_hist_kernel", "wide_pick_kernel")


def signatures():
    """``(name, kernel, argument types)`` of every kernel variant the launcher can compile.

    Types come from the parameters' names (the launcher's conventions: logits and thresholds as raw
    bits, per-row k and p arrays, int32 counts, int64 scratch), so a kernel that gains a parameter of
    a known kind needs no change here; an unknown name fails the check."""
    import inspect

    from numba import types as T

    from . import kernels as K

    def arr(dtype, ndim=1):
        return T.Array(dtype, ndim, "C")

    # (the logits' buffer, bits of thresholds and fills, per-row k, per-row p): 32-bit with int64 k and
    # float32 p, 16-bit with int32 k and float64 p (a scalar k or p passes a dummy array of the first kind), and
    # 16-bit rows paired in int32 words (kernels.paired_buffer; the kernels that read the logits)
    for xbits, bits, k_t, p_t in ((T.uint32, T.uint32, T.int64, T.float32), (T.uint16, T.uint16, T.int32, T.float64),
                                  (T.int32, T.uint16, T.int32, T.float64)):
        by_name = dict(
            x=arr(xbits), out=arr(xbits), out_thr=arr(bits), thr_bits=arr(bits), k_arr=arr(k_t), p_arr=arr(p_t),
            p_scalar=T.float64, out_nties=arr(T.int32), out_count=arr(T.int32), nties=arr(T.int32),
            out_hit=arr(T.boolean), out_cut=arr(T.int64), cand=arr(T.uint32, 2), cand_idx=arr(T.uint32, 2),
            cand_count=arr(T.int64),
            part=arr(T.int64, 3), cut_keys=arr(T.int64), cut_idx=arr(T.int64), a=arr(T.int64), bits=arr(bits),
            keys=arr(T.int64), back=arr(bits), wst=arr(T.int64, 2), gh=arr(T.int64, 3), seg_count=arr(T.int64, 2),
            stamps=arr(T.int64, 2))
        scalars = {"stride_b", "stride_v", "V", "row0", "k_scalar", "k_mode", "p_mode_arg", "fmt", "ties_all",
                   "truncation", "cap", "one", "bins", "splits", "wide", "fold", "out_b", "out_v", "inplace", "fill",
                   "sequential", "loads_first", "seg", "lookback"}
        for name in KERNELS:
            if bits == T.uint16 and name == "zero_kernel":
                continue
            kernel = getattr(K, name)
            params = list(inspect.signature(kernel.py_func).parameters)
            if xbits == T.int32 and "x" not in params:
                continue
            unknown = [p for p in params if p not in by_name and p not in scalars]
            if unknown:
                raise TypeError(f"{name}: no type for parameters {unknown} (add them to compile_check)")
            sig = tuple(by_name[p] if p in by_name else T.int64 for p in params)
            yield f"{name}[{xbits}, k {k_t}, p {p_t}]", kernel, sig


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cc", default="9.0", help="compute capability, e.g. 9.0 or 8.0")
    ap.add_argument("--ptxas", action="store_true", help="assemble with ptxas and print registers and spills")
    args = ap.parse_args(argv)
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        print("compile_check: unset NUMBA_ENABLE_CUDASIM (the simulator compiles nothing)", file=sys.stderr)
        return 2
    cc = tuple(int(v) for v in args.cc.split("."))
    _no_device_answers(cc)
    from numba import cuda

    ptxas = shutil.which("ptxas") if args.ptxas else None
    failed = 0
    for name, kernel, sig in signatures():
        t0 = time.monotonic()
        try:
            ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=cc, launch_bounds=kernel.targetoptions["launch_bounds"])
        except Exception as exc:  # report every kernel, then fail
            failed += 1
            print(f"FAILED {name}: {type(exc).__name__}: {str(exc).splitlines()[0]}")
            continue
        info = ""
        if ptxas:
            with tempfile.TemporaryDirectory() as tmp:
                src = os.path.join(tmp, "k.ptx")
                with open(src, "w") as f:
                    f.write(ptx)
                res = subprocess.run([ptxas, f"-arch=sm_{cc[0]}{cc[1]}", "-v", src, "-o", os.path.join(tmp, "k.o")],
                                     capture_output=True, text=True)
                regs = re.search(r"Used (\d+) registers", res.stderr)
                spill = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", res.stderr)
                info = (f", {regs.group(1) if regs else '?'} registers"
                        + (f", spills {spill.group(1)}/{spill.group(2)} B" if spill else "")
                        + ("" if res.returncode == 0 else f", ptxas failed: {res.stderr.strip()[:200]}"))
                failed += res.returncode != 0
        print(f"ok {name} ({time.monotonic() - t0:.1f} s{info})", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
