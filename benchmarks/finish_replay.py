"""Replay the Triton finish kernel of chosen rows alone, from inputs captured on the GPU.

A row whose answer is wrong on the GPU and right in the interpreter: capture what its finish
launch read (the row, its candidate slot, its span partials) on the GPU, then replay that launch
alone, on the GPU and in the interpreter (``TRITON_INTERPRET=1``), with the slot as captured and
reordered.  Every consumer of the slot is order-independent, so an answer that changes with the
slot order, or that differs from the interpreter's on the same inputs, is the kernel's compiled
code (the ninth session found a float reduction whose lanes disagreed: ``kernels.span_masses``).

    # device machine: capture rows 289 and 658 of the LLM-like batch, replay them there
    PYTHONPATH=. python3 benchmarks/finish_replay.py capture --rows 289,658 --p 0.99 \\
        --options '{"two_cut_share": 4}' --out $OUT/finish_inputs.npz
    # here: the same inputs in the interpreter
    TRITON_INTERPRET=1 PYTHONPATH=. python3 benchmarks/finish_replay.py replay finish_inputs.npz

Top-p alone, scalar p, float32 rows, the finish's constants of the capturing run; a debugging
tool, not a test.
"""

from __future__ import annotations

import argparse
import json

import numpy as np
import torch

import qrita
from qrita.backends.triton import kernels
from qrita.core.keys import bits_from_keys

# positions of finish_kernel's arguments (kernels.finish_kernel's signature)
ARG_ROW0, ARG_CAND, ARG_PART_I, ARG_PART_F, ARG_CTR, ARG_PART_LOW = 4, 13, 14, 15, 17, 26


def capture(x: torch.Tensor, p: float, options: dict, rows: list[int]) -> dict:
    """Run ``select`` with the finish launches intercepted; the inputs of ``rows``' finish, by name."""
    launches = []
    real = kernels.finish_kernel

    class Intercept:
        def __getitem__(self, grid):
            def launch(*args, **kw):
                launches.append(([a.clone() if torch.is_tensor(a) else a for a in args], dict(kw)))
                return real[grid](*args, **kw)
            return launch

    kernels.finish_kernel = Intercept()
    try:
        sel = qrita.select(x, None, p, backend="triton", options=options)
    finally:
        kernels.finish_kernel = real
    saved = {}
    for r in rows:
        args, kw = max((launch for launch in launches if launch[0][ARG_ROW0] <= r), key=lambda la: la[0][ARG_ROW0])
        s = r - args[ARG_ROW0]
        inputs = dict(x=x[r], cand=args[ARG_CAND][s], part_i=args[ARG_PART_I][s], part_f=args[ARG_PART_F][s],
                      ctr=args[ARG_CTR][s:s + 1], part_low=args[ARG_PART_LOW][s])
        for name, t in inputs.items():
            saved[f"r{r}_{name}"] = t.cpu().numpy()
        saved[f"r{r}_answer"] = np.array([sel.threshold[r].item(), sel.num_ties[r].item(), sel.count[r].item()])
        saved[f"r{r}_p"] = np.array(p)
        saved["constants"] = np.array(json.dumps(kw))
    saved["slot_values"] = np.array(True)  # the slot holds value bits (kernels.slot_value), not keys
    return saved


def slot_from_keys(cand: np.ndarray) -> np.ndarray:
    """A float32 slot captured before the eleventh session held keys; the kernels now read value bits."""
    return bits_from_keys(cand.view(np.uint32), "float32").view(np.int32)


def replay(inputs: dict, p: float, constants: dict, device: str, order=None) -> tuple[int, int, int, int]:
    """finish_kernel over one row (row0 = 0) from captured inputs; the slot's first n keys in ``order``.

    Returns (threshold key, num_ties, count, hit)."""
    def dev(name):
        return torch.from_numpy(np.ascontiguousarray(inputs[name])).to(device)

    x, cand, part_i, part_f, ctr, part_low = (dev(n) for n in ("x", "cand", "part_i", "part_f", "ctr", "part_low"))
    if order is not None:
        n = int(part_i[:, 0].sum())
        flat = cand.reshape(-1)
        flat[:n] = flat[:n][torch.as_tensor(order, device=device)].clone()
    x = x[None]
    thr_key = torch.full((1,), -1, dtype=torch.int64, device=device)
    out32 = [torch.zeros(1, dtype=torch.int32, device=device) for _ in range(3)]  # bits, num_ties, count
    hit = torch.zeros(1, dtype=torch.int8, device=device)
    cut_idx = torch.zeros(1, dtype=torch.int64, device=device)
    state_i = torch.zeros((1, kernels.ST_I.value), dtype=torch.int64, device=device)
    state_f = torch.zeros((1, kernels.ST_F.value), dtype=torch.float32, device=device)
    lanes = torch.zeros(1, dtype=torch.int64, device=device)
    kernels.finish_kernel[(1,)](
        x, x.stride(0), x.stride(1), x.shape[1], 0, thr_key, 0, state_f, float(p), 0, 1, 0, 1,
        cand[None], part_i[None], part_f[None], part_i.shape[0], ctr, state_i, state_f,
        thr_key, out32[0], out32[1], out32[2], hit, cut_idx, part_low[None], lanes, **constants)
    return int(thr_key[0]), int(out32[1][0]), int(out32[2][0]), int(hit[0])


def main() -> None:
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    cap = sub.add_parser("capture", help="capture rows of a gpu_check.make_logits batch (device machine)")
    cap.add_argument("--dist", default="llm")
    cap.add_argument("--B", type=int, default=1024)
    cap.add_argument("--V", type=int, default=131072)
    cap.add_argument("--p", type=float, default=0.99)
    cap.add_argument("--options", default="{}", help="JSON options of the select call")
    cap.add_argument("--rows", required=True, help="comma-separated batch rows")
    cap.add_argument("--out", default="finish_inputs.npz")
    rep = sub.add_parser("replay", help="replay captured rows on this device (GPU, or the interpreter)")
    rep.add_argument("npz")
    rep.add_argument("--orders", type=int, default=3, help="random slot orders besides the captured one")
    args = ap.parse_args()
    device = "cuda" if torch.cuda.is_available() else "cpu"
    if args.cmd == "capture":
        from gpu_check import make_logits  # same folder: run as a script

        x = make_logits(args.dist, args.B, args.V, torch.float32)
        saved = capture(x, args.p, json.loads(args.options), [int(r) for r in args.rows.split(",")])
        np.savez_compressed(args.out, **saved)
        npz = dict(np.load(args.out))
    else:
        npz = dict(np.load(args.npz))
    constants = json.loads(str(npz["constants"]))
    rng = np.random.default_rng(0)
    for key in sorted(k for k in npz if k.endswith("_answer")):
        r = key[1:-len("_answer")]
        inputs = {k[len(f"r{r}_"):]: v for k, v in npz.items() if k.startswith(f"r{r}_")}
        if "slot_values" not in npz:
            inputs["cand"] = slot_from_keys(inputs["cand"])
        n = int(inputs["part_i"][:, 0].sum())
        p = float(inputs["p"])
        orders = [None] + [rng.permutation(n) for _ in range(args.orders)]
        answers = [replay(inputs, p, constants, device, order) for order in orders]
        verdict = "order-independent" if len(set(answers)) == 1 else "CHANGES WITH THE SLOT ORDER"
        print(f"row {r} ({n} candidates) on {device}: captured answer {inputs['answer'].tolist()}; "
              f"replays (key, num_ties, count, hit) {answers}: {verdict}", flush=True)


if __name__ == "__main__":
    main()
