"""Per-kernel GPU time of the Triton backend (torch.profiler), for finding where the time goes.

    PYTHONPATH=. python3 benchmarks/profile_triton.py [--B 1024] [--V 131072]
"""

from __future__ import annotations

import argparse

import torch
from gpu_check import make_logits  # same folder: run as a script

import qrita


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--B", type=int, default=1024)
    ap.add_argument("--V", type=int, default=131072)
    args = ap.parse_args()
    x0 = make_logits("zipf", args.B, args.V, torch.float32)
    for name, k, p in (("k50", 50, None), ("p0.9", None, 0.9), ("k100p0.9", 100, 0.9)):
        x = x0.clone()
        qrita.top_k_top_p(x, k, p, backend="triton", inplace=True)  # compile
        torch.cuda.synchronize()
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for _ in range(3):
                x.copy_(x0)
                qrita.top_k_top_p(x, k, p, backend="triton", inplace=True)
            torch.cuda.synchronize()
        totals: dict[str, list[float]] = {}
        for ev in prof.events():
            if ev.device_type == torch.autograd.DeviceType.CUDA:
                t = totals.setdefault(ev.name.split("(")[0][:40], [0.0, 0])
                t[0] += ev.device_time_total if hasattr(ev, "device_time_total") else ev.cuda_time_total
                t[1] += 1
        print(f"== {name} B={args.B} V={args.V} fp32, per call (us):")
        for kname, (us, n) in sorted(totals.items(), key=lambda kv: -kv[1][0]):
            print(f"   {kname:40s} {us / 3:9.1f}  ({n // 3} launches)")


if __name__ == "__main__":
    main()
