"""Per-kernel GPU time of a qrita backend (torch.profiler), for finding where the time goes.

    PYTHONPATH=. python3 benchmarks/profile_triton.py [--B 1024] [--V 131072] [--dist zipf] \
        [--cases k50,p0.9,k100p0.9] [--options '{"two_cuts": true}'] [--backend numba]

The profiler sees every kernel of the process, so ``--backend cupy`` and ``--backend numba`` work too
(torch tensors in, as the harness calls them); the backend's options differ by backend.

``--options`` may be given several times: each option set is profiled in turn, on the same logits.
"""

from __future__ import annotations

import argparse
import json

import torch
from gpu_check import SCENARIOS, make_logits  # same folder: run as a script

import qrita


def call(mode: str, x: torch.Tensor, k, p, options: dict, backend: str = "triton"):
    """One qrita call of the profiled kind: masked in place, ``select`` or ``sample``."""
    if mode == "masked":
        return qrita.top_k_top_p(x, k, p, backend=backend, inplace=True, options=options)
    if mode == "select":
        return qrita.select(x, k, p, backend=backend, options=options)
    if options:
        raise SystemExit("qrita.sample takes no backend options: profile it with the defaults")
    seeds = torch.arange(x.shape[0], device=x.device)
    return qrita.sample(x, k, p, seeds=seeds, backend=backend)


def profile(x0: torch.Tensor, k, p, options: dict, mode: str = "masked", reps: int = 3, backend: str = "triton"):
    """{kernel name: (us per call, launches per call)} of one call (``mode``; masked: with the input copy)."""
    x = x0.clone()
    call(mode, x, k, p, options, backend)  # compile
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            if mode == "masked":
                x.copy_(x0)
            call(mode, x, k, p, options, backend)
        torch.cuda.synchronize()
    totals: dict[str, list[float]] = {}
    for ev in prof.events():
        if ev.device_type == torch.autograd.DeviceType.CUDA:
            t = totals.setdefault(ev.name.split("(")[0][:40], [0.0, 0])
            t[0] += ev.device_time_total if hasattr(ev, "device_time_total") else ev.cuda_time_total
            t[1] += 1
    return {name: (us / reps, n // reps) for name, (us, n) in totals.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--B", type=int, default=1024)
    ap.add_argument("--V", type=int, default=131072)
    ap.add_argument("--dist", default="zipf")
    ap.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    ap.add_argument("--cases", default="k50,p0.9,k100p0.9", help=f"comma-separated, of {sorted(SCENARIOS)}")
    ap.add_argument("--options", action="append", default=None, help="a JSON dict of backend options")
    ap.add_argument("--mode", default="masked", choices=["masked", "select", "sample"])
    ap.add_argument("--backend", default="triton", choices=["triton", "cupy", "numba"])
    args = ap.parse_args()
    x0 = make_logits(args.dist, args.B, args.V, getattr(torch, args.dtype))
    for name in args.cases.split(","):
        k, p = SCENARIOS[name]
        for opts in [json.loads(o) for o in (args.options or ["{}"])]:
            totals = profile(x0, k, p, opts, args.mode, backend=args.backend)
            print(f"== {args.backend} {args.mode} {name} {args.dist} B={args.B} V={args.V} {args.dtype} "
                  f"options={opts}, per call (us):")
            print(f"   {'total':40s} {sum(us for us, _ in totals.values()):9.1f}")
            for kname, (us, n) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
                print(f"   {kname:40s} {us:9.1f}  ({n} launches)")


if __name__ == "__main__":
    main()
