"""Compile the Numba kernels to PTX for sm_90 (no GPU needed) and summarise them.

Run without NUMBA_ENABLE_CUDASIM, from the repository root:
``PYTHONPATH=. python docs/bench/next-numba/ptx_report.py [outdir]``.
Writes ``<outdir>/<kernel>.ptx`` and, when ``ptxas`` is on the PATH, its ``-v`` report
(registers, spills, stack); prints per kernel the counts of the instructions that matter
here (global loads, 64-bit integer multiplies and divisions, local-memory accesses).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

from numba import cuda, types
from numba.cuda import dispatcher as cuda_dispatcher

from qrita.backends.numba import kernels as kern

assert not kern.SIMULATED, "run without NUMBA_ENABLE_CUDASIM"


class _Sm90:
    """Stands in for the current device: compiling device functions asks for its
    compute capability, and there may be no GPU (or driver) here."""

    compute_capability = (9, 0)


cuda_dispatcher.get_current_device = _Sm90

u32 = types.Array(types.uint32, 1, "C")
u16 = types.Array(types.uint16, 1, "C")
i64a = types.Array(types.int64, 1, "C")
i32a = types.Array(types.int32, 1, "C")
f32a = types.Array(types.float32, 1, "C")
boola = types.Array(types.boolean, 1, "C")
i64 = types.int64
f64 = types.float64


def sigs(xbits):
    rows = (i64a, i64, i64, f32a, f64, i64)
    params = (i64, i64, i64, i64, i64)
    outs = (xbits, i32a, i32a, boola)
    cand = types.Array(types.uint32, 2, "C")
    part = types.Array(types.int64, 3, "C")
    return {
        "select_kernel": (xbits, i64, i64, i64, *rows, *params, *outs),
        "scan_split_kernel": (xbits, i64, i64, i64, i64, *rows, *params, i64, cand, i64a, part, i64a),
        "mass_split_kernel": (xbits, i64, i64, i64, i64, *rows, *params, i64, part, i64a),
        "finish_split_kernel": (xbits, i64, i64, i64, i64, *rows, *params, i64, cand, i64a, part, i64a, *outs),
        "cut_index_kernel": (xbits, i64, i64, i64, i64, xbits, i32a, i64a),
        "mask_kernel": (xbits, i64, i64, i64, i64, xbits, i64, i64, i64, xbits, i64a, i64),
    }


PATTERNS = {
    "ld.global": r"\bld\.global\.",
    "ld.local": r"\bld\.local\.",
    "st.local": r"\bst\.local\.",
    "mul.lo.s64": r"\bmul\.lo\.s64\b",
    "mul.wide": r"\bmul\.wide\.",
    "div/rem.s64": r"\b(div|rem)\.s64\b",
    "div/rem.u64": r"\b(div|rem)\.u64\b",
    "atom.shared": r"\batom\.shared\.",
    "bar.sync": r"\bbar\.sync\b",
    "ex2/exp": r"\bex2\.",
    "call": r"\bcall(\.uni)?\b",
}


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else ".scratch/ptx"
    os.makedirs(out, exist_ok=True)
    which = sys.argv[2:] or None
    for name, sig in sigs(u32).items():
        if which and name not in which:
            continue
        fn = getattr(kern, name).py_func
        ptx, _ = cuda.compile_ptx(fn, sig, cc=(9, 0), launch_bounds=(kern.THREADS, 2))
        path = os.path.join(out, f"{name}.ptx")
        with open(path, "w") as f:
            f.write(ptx)
        counts = {k: len(re.findall(p, ptx)) for k, p in PATTERNS.items()}
        line = f"{name}: " + ", ".join(f"{k} {v}" for k, v in counts.items())
        if shutil.which("ptxas"):
            res = subprocess.run(["ptxas", "-arch=sm_90", "-v", path, "-o", os.devnull], capture_output=True, text=True)
            info = " ".join(ln.strip() for ln in res.stderr.splitlines() if "registers" in ln or "spill" in ln)
            with open(os.path.join(out, f"{name}.ptxas.txt"), "w") as f:
                f.write(res.stderr)
            line += f"\n  ptxas: {info}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
