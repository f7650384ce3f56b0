"""The sm_90 PTX of the round and finish kernel variants, without parameter numbering and debug info.

Run in each of two trees and compare the JSON files (session 23: main before and after the option
chain_rounds, whose default path must compile to the same code):

    PYTHONPATH=<tree> python ptx_same.py out.json
"""

import json
import re
import sys

import triton
from triton.backends.compiler import GPUTarget

from qrita.backends.triton import compile_check as cc

cc._PDL = 2
out = {}
for dtype in ("float32", "bfloat16", "float16"):
    both = [*cc.variants(dtype), *((n + " small", s, w) for n, s, w in cc.variants(dtype, small=True))]
    for name, src, warps in both:
        if "chain" in name.lower() or "round" not in name:
            continue
        ptx = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps}).asm["ptx"]
        body = re.sub(r"_param_\d+", "_param_N", ptx).split(".section\t.debug")[0]
        skip = ("//", ".loc", ".file", "$L__tmp")
        out[f"{dtype} {name}"] = "\n".join(
            line for line in body.splitlines() if ".param" not in line and not line.strip().startswith(skip))
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(len(out))
