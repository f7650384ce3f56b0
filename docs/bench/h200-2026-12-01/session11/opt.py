"""Option A/B for select and sample: python opt.py OUT.json [budget_s]"""
import dataclasses, hashlib, json, sys, time
sys.path.insert(0, "benchmarks")
import torch
from gpu_check import graph_time, make_logits
import qrita
import qrita.backends.triton as tb
OPTS = {}
_orig = tb._torch_request
tb._torch_request = lambda req: dataclasses.replace(_orig(req), options={**_orig(req).options, **OPTS})
out, budget = sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 150
SETS = [{}, dict(fold_updates=True), dict(span_prefetch=True), dict(span_block=2048), dict(span=8192),
        dict(span_warps=4), dict(span_block=2048, span_prefetch=True)]
CASES = [("llm", torch.float32, 64, 128256, 50, None, "sample"), ("llm", torch.float32, 64, 151936, 100, 0.9, "sample"),
         ("llm", torch.float32, 64, 128256, 100, 0.9, "sample"), ("llm", torch.float32, 64, 151936, 50, None, "sample"),
         ("llm", torch.float32, 1024, 151936, 100, 0.9, "sample"), ("gauss", torch.float32, 1024, 131072, 50, None, "select"),
         ("llm", torch.bfloat16, 1024, 131072, 50, None, "select"), ("zipf", torch.float32, 1024, 131072, 50, None, "select"),
         ("llm", torch.float32, 16, 131072, 50, None, "select")]
res = []; t0 = time.time()
for dist, dt, B, V, k, p, mode in CASES:
    x = make_logits(dist, B, V, dt, seed=3)
    seeds = torch.arange(B, device="cuda", dtype=torch.int64)
    ref = None
    for o in SETS:
        if time.time() - t0 > budget:
            break
        if mode == "select" and B >= 1024 and "fold_updates" in o:
            continue
        OPTS.clear(); OPTS.update(o)
        if mode == "sample":
            fn = lambda: qrita.sample(x, k=k, p=p, seeds=seeds, backend="triton")
            r = fn(); h = hashlib.sha1(r.cpu().numpy().tobytes()).hexdigest()[:12]
        else:
            fn = lambda: qrita.select(x, k=k, p=p, backend="triton")
            s = fn(); hh = hashlib.sha1()
            for t in (s.threshold, s.count, s.num_ties):
                hh.update(t.contiguous().view(torch.uint8).cpu().numpy().tobytes())
            h = hh.hexdigest()[:12]
        ref = ref or h
        us = graph_time(fn, iters=20, reps=5)
        row = dict(dist=dist, dtype=str(dt).split(".")[-1], B=B, V=V, k=k, p=p, mode=mode, opts=o, us=round(us, 1),
                   same=h == ref)
        res.append(row); print(row, f"t={time.time()-t0:.0f}", flush=True)
OPTS.clear()
json.dump(res, open(out, "w"), indent=1)
