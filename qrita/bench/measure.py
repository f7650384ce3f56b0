"""How ops are timed.

CUDA:

* **graph**: ``n_inner`` calls captured in one CUDA graph, replayed ``replays``
  times, each replay timed with CUDA events; the per-call time is replay time
  over ``n_inner``, and we report the median.  An in-place op works on
  ``n_inner`` copies of its input, one per captured call, restored before each
  replay outside the timed interval (at most ``INPLACE_COPIES_BYTES`` of copies:
  fewer calls per replay for large inputs).  No copy is timed, so nothing is
  subtracted.  (Until the tenth session a copy captured before every call was
  timed with the op and a graph of copies alone subtracted; at B=1 that
  under-counted the op by up to ~13 µs: masked came out faster than ``select``.)
* **eager**: one call at a time, the device idle before it, timed with events
  (so it includes the host's launch overhead); the in-place restore happens
  before the start event.  Median.
* **peak memory**: ``torch.cuda.max_memory_allocated`` over one eager call,
  minus what was allocated before it (the torch allocator only; an out-of-place
  op's output counts).
* **copy bandwidth**: a 1 GiB device-to-device copy, bytes read + written over
  the graph-median time.

CPU: ``time.perf_counter`` medians of eager calls; no graphs, no roofline.
"""

from __future__ import annotations

import statistics
import time

from .providers import Prepared

GRAPH_TARGET_S = 1e-3  # aim for ~1 ms of work per replay
INPLACE_COPIES_BYTES = 2 << 30  # input copies an in-place op's graph may hold
EAGER_TARGET_S = 0.05  # and ~50 ms of eager calls per item
CPU_TARGET_S = 0.15


def _clamp(v, lo, hi):
    return max(lo, min(hi, v))


def cuda_sync():
    import torch

    torch.cuda.synchronize()


def _buffers(prep: Prepared):
    """``(work, target)``: the buffer the op writes (a copy for in-place ops) and its wrapped view."""
    work = prep.input.clone() if prep.inplace else prep.input
    return work, prep.wrap(work)


def _op_call(prep: Prepared, target, holder: dict):
    """One call on ``target``; ``holder["out"]`` keeps its output (an in-place op's graph restores
    its inputs outside the calls)."""

    def call():
        holder["out"] = prep.op(target)

    return call


def _snapshot(kind: str, result):
    """A copy of an op's output to compare graph replays with (None: not comparable, e.g. sampling)."""
    import torch

    def t(a):
        return (a if isinstance(a, torch.Tensor) else torch.from_dlpack(a)).clone()

    if kind in ("mask", "probs"):
        return [t(result)]
    if kind == "select":
        return [t(result.threshold), t(result.num_ties), t(result.count)]
    return None


def _poison(kind: str, result):
    """Overwrite an output (NaN / -1) so that only a replay that really recomputes it restores it."""
    import torch

    def t(a):
        return a if isinstance(a, torch.Tensor) else torch.from_dlpack(a)

    if kind in ("mask", "probs"):
        t(result).fill_(float("nan"))
    elif kind == "select":
        t(result.threshold).fill_(float("nan"))
        t(result.num_ties).fill_(-1)
        t(result.count).fill_(-1)


def _graph_median_us(body, n_inner: int, replays: int, warmups: int = 2, check=None, poison=None,
                     restore=None) -> float:
    """Median per-call time (µs) of ``body`` over graph replays.

    ``body`` is a callable (captured ``n_inner`` times) or a list of ``n_inner``
    callables captured in order.  ``restore()`` (in-place ops) runs before every
    warm-up, capture and replay, outside the timed interval.  ``poison()`` runs
    after the capture and ``check()`` after the replays, while the graph's
    outputs are alive.
    """
    import torch

    bodies = list(body) if isinstance(body, (list, tuple)) else [body] * n_inner
    n_inner = len(bodies)
    before = restore or (lambda: None)

    def calls():
        for b in bodies:
            b()

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the default stream, as torch recommends before capture
        for _ in range(warmups):
            before()
            calls()
    torch.cuda.current_stream().wait_stream(side)
    before()
    cuda_sync()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        calls()
    if poison is not None:
        poison()
    before()
    graph.replay()
    cuda_sync()
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(replays)]
    for s, e in zip(starts, ends, strict=True):
        before()  # enqueued before the start event: not timed
        s.record()
        graph.replay()
        e.record()
    cuda_sync()
    times = [s.elapsed_time(e) * 1e3 / n_inner for s, e in zip(starts, ends, strict=True)]
    if check is not None:
        check()
    del graph
    return statistics.median(times)


def time_cuda(prep: Prepared, want_graph: bool = True) -> dict:
    """Eager and graph medians (µs) and peak extra memory of one prepared op on CUDA."""
    import torch

    work, target = _buffers(prep)
    holder: dict = {}
    out: dict = {"graph_us": None, "note": ""}

    # eager (the gate's call was the first warm-up; the first call here is the second)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def eager_once() -> float:
        if prep.inplace:
            work.copy_(prep.input)
        cuda_sync()
        start.record()
        prep.op(target)
        end.record()
        end.synchronize()
        return start.elapsed_time(end) * 1e3

    first = eager_once()
    reps = int(_clamp(EAGER_TARGET_S / max(first * 1e-6, 1e-7), 3, 20))
    eager = [eager_once() for _ in range(reps)]
    out["eager_us"] = statistics.median(eager)
    out["eager_reps"] = reps

    # peak extra device memory of one eager call
    if prep.inplace:
        work.copy_(prep.input)
    cuda_sync()
    torch.cuda.reset_peak_memory_stats()
    before = torch.cuda.memory_allocated()
    result = prep.op(target)
    cuda_sync()
    out["peak_mem_bytes"] = int(torch.cuda.max_memory_allocated() - before)
    reference = _snapshot(prep.output, result)
    del result

    if want_graph:
        per_call = out["eager_us"] * 1e-6
        n_inner = int(_clamp(GRAPH_TARGET_S / max(per_call, 1e-7), 1, 64))
        replays = int(_clamp(0.1 / max(per_call * n_inner, 1e-7), 3, 20))
        out["n_inner"], out["replays"] = n_inner, replays
        warmups = 1 if per_call > 5e-3 else 2
        differs = []

        def check():
            # Work launched outside the capturing stream would run once at capture time and
            # be missing from the replays: the replayed output would then not be the op's.
            replayed = _snapshot(prep.output, holder["out"]) if reference is not None else None
            if replayed is not None and not all(torch.equal(a, b) for a, b in zip(reference, replayed, strict=True)):
                differs.append(True)

        def poison():
            if reference is not None and not prep.inplace:  # an in-place op's input is restored anyway
                _poison(prep.output, holder["out"])

        restore = None
        graph_body = _op_call(prep, target, holder)
        if prep.inplace:
            # one input copy per captured call, restored before each replay (not timed)
            nbytes = max(1, prep.input.numel() * prep.input.element_size())
            n_inner = int(_clamp(INPLACE_COPIES_BYTES // nbytes, 1, n_inner))
            out["n_inner"] = n_inner
            copies = [work] + [prep.input.clone() for _ in range(n_inner - 1)]
            graph_body = [_op_call(prep, prep.wrap(c), holder) for c in copies]

            def restore():
                for c in copies:
                    c.copy_(prep.input)

        try:
            total = _graph_median_us(graph_body, n_inner, replays, warmups, check, poison, restore)
            holder.clear()
            if differs:
                out["note"] = "graph replay output differs from the eager output (work outside the graph?); eager only"
            else:
                out["graph_us"] = total
        except Exception as exc:  # not capturable: keep the eager numbers
            first = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else ""
            out["note"] = f"not graph-capturable ({type(exc).__name__}: {first})"
            broken = cuda_healthy()
            if broken:  # a sticky fault, not a capture refusal: let the runner stop
                raise RuntimeError(f"CUDA error during graph capture: {broken}") from exc
    return out


def time_cpu(prep: Prepared, target_s: float = CPU_TARGET_S) -> dict:
    """Eager perf_counter median (µs) of one prepared op on the CPU."""
    work, target = _buffers(prep)

    def once() -> float:
        if prep.inplace:
            work.copy_(prep.input)
        t0 = time.perf_counter()
        prep.op(target)
        return (time.perf_counter() - t0) * 1e6

    first = once()
    reps = int(_clamp(target_s / max(first * 1e-6, 1e-7), 3, 15))
    times = [once() for _ in range(reps)]
    return {
        "eager_us": statistics.median(times),
        "eager_reps": reps,
        "graph_us": None,
        "peak_mem_bytes": None,
        "note": "",
    }


def copy_bandwidth(nbytes: int = 1 << 30) -> dict:
    """Device-to-device copy bandwidth: bytes read + written per second (graph median)."""
    import torch

    n = nbytes // 4
    buffers = {"src": torch.randn(n, device="cuda")}
    buffers["dst"] = torch.empty_like(buffers["src"])
    us = _graph_median_us(lambda: buffers["dst"].copy_(buffers["src"]), 4, 10)
    buffers.clear()
    torch.cuda.empty_cache()
    return {"bytes": 2 * n * 4, "us": us, "bytes_per_s": 2 * n * 4 / (us * 1e-6)}


def cuda_healthy() -> str | None:
    """None if the CUDA context still works, else the error (a sticky fault ends the run)."""
    try:
        import torch

        torch.cuda.synchronize()
        if int(torch.ones(4, device="cuda").sum().item()) != 4:
            return "CUDA sanity check returned a wrong sum"
        return None
    except Exception as exc:
        return f"{type(exc).__name__}: {exc}"
