"""A/B timing of qrita.select / top_k_top_p / sample between package trees: python ab.py TAG OUT.json"""
import hashlib, json, sys, time
sys.path.insert(0, "benchmarks")
import torch
from gpu_check import graph_time, make_logits
import qrita
tag, out = sys.argv[1], sys.argv[2]
V = 131072
CASES = []
for dist in ("gauss", "zipf", "llm"):
    for dt in (torch.float32, torch.bfloat16):
        CASES.append((dist, dt, 1024, 50, None))
    CASES.append((dist, torch.float32, 1024, None, 0.9))
    CASES.append((dist, torch.float32, 1024, 100, 0.9))
import os
for dist in () if os.environ.get("AB_B1024") else ("llm", "zipf"):
    for B in (1, 16, 64):
        CASES.append((dist, torch.float32, B, 50, None))
    CASES.append((dist, torch.float32, 1, None, 0.9))
res = []
t0 = time.time()
for dist, dt, B, k, p in CASES:
    x = make_logits(dist, B, V, dt, seed=7)
    sel = qrita.select(x, k=k, p=p, backend="triton")
    h = hashlib.sha1()
    for t in (sel.threshold, sel.count, sel.num_ties):
        h.update(t.contiguous().view(torch.uint8).cpu().numpy().tobytes())
    us = graph_time(lambda: qrita.select(x, k=k, p=p, backend="triton"), iters=20, reps=5)
    r = dict(dist=dist, dtype=str(dt).split(".")[-1], B=B, k=k, p=p, select_us=round(us, 1), bits=h.hexdigest()[:12])
    if B == 1024 and k == 50 and dt == torch.float32:
        seeds = torch.arange(B, device="cuda", dtype=torch.int64)
        tok = qrita.sample(x, k=k, p=p, seeds=seeds, backend="triton")
        r["sample_us"] = round(graph_time(lambda: qrita.sample(x, k=k, p=p, seeds=seeds, backend="triton"), 10, 5), 1)
        r["tok"] = hashlib.sha1(tok.cpu().numpy().tobytes()).hexdigest()[:12]
    res.append(r)
    print(tag, r, f"t={time.time()-t0:.0f}", flush=True)
json.dump(res, open(out, "w"), indent=1)
