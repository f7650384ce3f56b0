"""The ``qrita`` command (also ``python -m qrita``).

* ``qrita demo``: selection on realistic LLM-like logits with the best backend
  here, kept counts per row, a check against the sort-based oracle, timing.
* ``qrita info``: versions, the spec fingerprint, and every backend with the
  reason it cannot run here (if it cannot).
* ``qrita bench ...``: the benchmark harness (``qrita.bench``), arguments passed on.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import platform
import sys
import time

import numpy as np

DEMO_CASES = (("k=50", 50, None), ("p=0.9", None, 0.9), ("k=50 p=0.9", 50, 0.9))


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cuda_torch():
    """torch if it imports and sees a CUDA device, else None."""
    if importlib.util.find_spec("torch") is None:
        return None
    try:
        import torch
    except Exception:  # a broken install is the same as none here
        return None
    return torch if torch.cuda.is_available() else None


# --------------------------------------------------------------------------------------------
# demo
# --------------------------------------------------------------------------------------------


def llm_like_logits(B: int, V: int, seed: int = 0) -> np.ndarray:
    """float32 ``[B, V]``: a Gaussian noise floor (sigma 2) plus 4-24 strong outliers per row.

    That is the shape of real LLM logits that the Qrita sigma-truncation relies on.
    """
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((B, V), dtype=np.float32) * 2.0
    for b in range(B):
        n = int(rng.integers(4, 25))
        cols = rng.choice(V, size=min(n, V), replace=False)
        x[b, cols] += rng.uniform(6.0, 16.0, size=cols.size).astype(np.float32)
    return x


def _median_ms(fn, sync, repeats: int) -> float:
    fn()  # warm-up (compilation, caches)
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def demo(args: argparse.Namespace) -> int:
    import qrita
    from qrita.reference import OracleMismatch, check_selection

    torch = _cuda_torch() if args.device in ("auto", "cuda") else None
    if args.device == "cuda" and torch is None:
        print("qrita demo: --device cuda, but torch sees no CUDA device", file=sys.stderr)
        return 2
    on_gpu = torch is not None
    B = args.batch or (64 if on_gpu else 8)
    V = args.vocab or (128256 if on_gpu else 32000)
    host = llm_like_logits(B, V, args.seed)
    if on_gpu:
        logits = torch.from_numpy(host).to("cuda")
        sync = torch.cuda.synchronize
        where = f"torch CUDA tensor on {torch.cuda.get_device_name(0)}"
    else:
        logits = host
        sync = lambda: None  # noqa: E731
        where = "numpy array on the CPU"
    print(f"qrita {qrita.__version__} demo: B={B}, V={V}, float32 {where}")
    print("logits: Gaussian noise floor (sigma 2) + 4-24 strong outliers per row, like an LLM's")

    failures = 0
    for label, k, p in DEMO_CASES:
        sel = qrita.select(logits, k, p, backend=args.backend)
        ms = _median_ms(lambda k=k, p=p: qrita.select(logits, k, p, backend=args.backend), sync, args.repeats)
        count = _host(sel.count)
        hits = None if sel.hit is None else int(_host(sel.hit).sum())
        try:
            check_selection(host, k, p, "lowest_index", _host(sel.threshold), _host(sel.num_ties), count)
            verdict = "OK (matches the sort-based oracle)"
        except OracleMismatch as exc:
            failures += 1
            verdict = f"MISMATCH\n{exc}"
        shown = " ".join(str(int(c)) for c in count[:16]) + (" ..." if B > 16 else "")
        hit_text = "" if hits is None else f", truncation hits {hits}/{B}"
        print(f"\n{label:<11} backend={sel.backend}  {ms:8.3f} ms per call (median of {args.repeats}){hit_text}")
        print(f"  kept per row: {shown}")
        print(f"  {verdict}")

    if not on_gpu and args.compare:
        start = time.perf_counter()
        qrita.select(host, 50, 0.9, backend="reference")
        print(f"\nfor scale: the sort-based oracle takes {(time.perf_counter() - start) * 1e3:.1f} ms for k=50 p=0.9")
    print("\nOK" if not failures else f"\n{failures} case(s) disagree with the oracle")
    return 0 if not failures else 1


def _host(a) -> np.ndarray:
    if isinstance(a, np.ndarray):
        return a
    if hasattr(a, "detach"):
        a = a.detach().cpu()
        return a.float().numpy() if a.dtype.is_floating_point and a.element_size() == 2 else a.numpy()
    return a.get()


# --------------------------------------------------------------------------------------------
# info
# --------------------------------------------------------------------------------------------


def info(args: argparse.Namespace) -> int:
    import qrita
    from qrita.backends import REGISTRY, _load
    from qrita.core import lut_checksum, spec_fingerprint

    print(f"qrita {qrita.__version__} (python {platform.python_version()}, {platform.machine()})")
    print(f"spec fingerprint {spec_fingerprint()}   LUT sha256 {lut_checksum()[:16]}")
    versions = {
        name: _version(name) for name in ("numpy", "scipy", "torch", "triton", "cupy-cuda12x", "numba", "numba-cuda")
    }
    print("libraries: " + ", ".join(f"{n} {v}" for n, v in versions.items() if v))
    torch = _cuda_torch()
    if torch is not None:
        print(f"CUDA: {torch.cuda.device_count()} device(s), {torch.cuda.get_device_name(0)}")
    else:
        print("CUDA: no device visible to torch")
    print("\nbackends (in 'auto' order):")
    for name in REGISTRY:
        try:
            backend = _load(name)
            reason = backend if isinstance(backend, str) else backend.unavailable_reason()
        except Exception as exc:  # a broken backend must not hide the others
            print(f"  {name:<10} BROKEN: {type(exc).__name__}: {exc}")
            continue
        status = "available" if reason is None else f"unavailable: {reason}"
        print(f"  {name:<10} {status}")
        if not isinstance(backend, str):
            caps = backend.capabilities
            sim = ", simulated" if getattr(backend, "simulated", False) else ""
            print(
                f"  {'':<10} devices {'/'.join(caps.devices)}{sim}; {', '.join(caps.dtypes)}; install: {caps.install}"
            )
    return 0


# --------------------------------------------------------------------------------------------
# bench
# --------------------------------------------------------------------------------------------


def bench(argv: list[str]) -> int:
    if importlib.util.find_spec("qrita.bench") is None:
        print(
            "qrita bench: the benchmark harness (qrita.bench) is not part of this installation; "
            "install qrita from a source checkout (pip install '.[bench]') to get it",
            file=sys.stderr,
        )
        return 2
    from qrita.bench import main as bench_main

    return int(bench_main(argv) or 0)


# --------------------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="qrita", description="Exact, deterministic Top-k / Top-p selection over LLM logits."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="{demo,info,bench}")
    d = sub.add_parser("demo", help="run selection on realistic logits, check it against the oracle, time it")
    d.add_argument("--batch", "-B", type=int, default=None, help="rows (default 8 on the CPU, 64 on a GPU)")
    d.add_argument(
        "--vocab", "-V", type=int, default=None, help="vocabulary size (default 32000 on the CPU, 128256 on a GPU)"
    )
    d.add_argument(
        "--device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="where the logits live (default: a GPU if torch sees one)",
    )
    d.add_argument("--backend", default="auto", help="backend name (default: auto)")
    d.add_argument("--seed", type=int, default=0)
    d.add_argument("--repeats", type=int, default=5, help="timed calls per case (median is shown)")
    d.add_argument("--no-compare", dest="compare", action="store_false", help="skip timing the sort-based oracle")
    sub.add_parser("info", help="versions, spec fingerprint, and which backends can run here (and why not)")
    sub.add_parser("bench", help="the benchmark harness; 'qrita bench --help' for its options", add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "bench":
        return bench(argv[1:])
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        return demo(args)
    return info(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
