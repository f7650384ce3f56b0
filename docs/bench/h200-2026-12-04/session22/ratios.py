"""CuPy over Triton, per row of a harness results.json (the issue-5 matrix): select and masked.

python3 ratios.py RESULTS.json [...]
"""

import json
import sys

PROVIDERS = ("qrita-triton-select", "qrita-cupy-select", "qrita-triton", "qrita-cupy")
SC = {"topk50": "top-k 50", "k100p0.9": "k100+p0.9", "topp0.9": "top-p 0.9"}
print("| scenario | dist | dtype | B | Triton select | CuPy select | × | Triton masked | CuPy masked | × |")
print("| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for path in sys.argv[1:]:
    rows = json.load(open(path))["rows"]
    t = {(r["provider"], r["scenario"], r["dist"], r["dtype"], r["B"]): r.get("graph_us") for r in rows}
    for sc in SC:
        for dist in ("zipf", "gaussian", "llm"):
            for dt in ("float32", "bfloat16"):
                for B in sorted({r["B"] for r in rows}):
                    c = [t.get((p, sc, dist, dt, B)) for p in PROVIDERS]
                    if None in c:
                        continue
                    cells = [SC[sc], dist, "fp32" if dt == "float32" else "bf16", str(B)]
                    for a, b in ((c[0], c[1]), (c[2], c[3])):
                        x = b / a
                        cells += [f"{a:.1f}", f"{b:.1f}", f"**{x:.2f}**" if x > 1.2 else f"{x:.2f}"]
                    print("| " + " | ".join(cells) + " |")
