"""Dump normalized sm_90 PTX of every non-chain Triton kernel variant (run from a tree's root)."""
import hashlib, json, re, sys
import triton
from triton.backends.compiler import GPUTarget
from qrita.backends.triton import compile_check as cc
cc._PDL = 2
out = {}
for dtype in ("float32", "bfloat16", "float16"):
    for name, src, warps in [*cc.variants(dtype), *((n + " small", s, w) for n, s, w in cc.variants(dtype, small=True))]:
        if "chain" in name.lower() or "round" not in name:
            continue
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
        ptx = k.asm["ptx"]
        body = re.sub(r"_param_\d+", "_param_N", ptx)
        body = body.split(".section\t.debug")[0]
        body = "\n".join(l for l in body.splitlines()
                          if ".param" not in l and not l.strip().startswith(("//", ".loc", ".file", "$L__tmp")))
        out[f"{dtype} {name}"] = body
json.dump(out, open(sys.argv[1], "w"), indent=1)
print(len(out))
