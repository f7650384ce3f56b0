"""CPU-only CI for the cupy backend: every kernel instantiation compiles, for sm_80 and sm_90.

The kernels are compiled exactly as the backend compiles them (generated
preamble + ``kernels.cu``, the backend's options) through NVRTC, without a GPU:

* ``cupy.cuda.nvrtc`` (``pip install cupy-cuda13x nvidia-cuda-nvrtc`` or the
  ``-cu12`` pair: cupy imports without a GPU and its NVRTC binding works), else
* ``cuda.bindings.nvrtc`` (``pip install cuda-python`` plus the NVRTC wheel), else
* ``nvcc`` on the PATH,

and the test is skipped, with that list, when none is there.  A compile error
fails the test and shows the compiler log.
"""

from __future__ import annotations

import concurrent.futures
import re
import shutil
import subprocess

import pytest

from qrita.backends.cupy import _module as M
from qrita.core.fingerprint import spec_fingerprint

ARCHS = ("sm_80", "sm_90")
WARP_SIZE = 32  # NVIDIA; HIP builds pass the device's (64 on CDNA)
INSTALL_HINT = (
    "no NVRTC found: pip install cupy-cuda13x nvidia-cuda-nvrtc (or cupy-cuda12x nvidia-cuda-nvrtc-cu12), "
    "or cuda-python with an NVRTC wheel, or put nvcc on the PATH"
)


def _cupy_nvrtc():
    try:
        from cupy.cuda import nvrtc

        nvrtc.getVersion()
        return nvrtc
    except Exception:
        return None


def _bindings_nvrtc():
    try:
        from cuda.bindings import nvrtc

        err, *_ = nvrtc.nvrtcVersion()
        return nvrtc if int(err) == 0 else None
    except Exception:
        return None


def _compile_cupy(nvrtc, source: str, options: list[str]) -> bytes:
    prog = nvrtc.createProgram(source, "kernels.cu", [], [])
    try:
        nvrtc.compileProgram(prog, options)
    except Exception as exc:
        raise AssertionError(f"NVRTC failed ({exc}):\n{nvrtc.getProgramLog(prog)}") from None
    return bytes(nvrtc.getCUBIN(prog))


def _compile_bindings(nvrtc, source: str, options: list[str]) -> bytes:
    err, prog = nvrtc.nvrtcCreateProgram(source.encode(), b"kernels.cu", 0, [], [])
    assert int(err) == 0, err
    (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), [o.encode() for o in options])
    if int(err) != 0:
        _, size = nvrtc.nvrtcGetProgramLogSize(prog)
        log = b" " * size
        nvrtc.nvrtcGetProgramLog(prog, log)
        raise AssertionError(f"NVRTC failed ({err}):\n{log.decode(errors='replace')}")
    _, size = nvrtc.nvrtcGetCUBINSize(prog)
    cubin = b" " * size
    nvrtc.nvrtcGetCUBIN(prog, cubin)
    return cubin


def _compile_nvcc(nvcc: str, source: str, options: list[str], tmp_path) -> bytes:
    src = tmp_path / "kernels.cu"
    src.write_text(source)
    out = tmp_path / "kernels.cubin"
    arch = next(o.split("=", 1)[1] for o in options if o.startswith("--gpu-architecture="))
    flags = [o for o in options if not o.startswith("--gpu-architecture=")]
    proc = subprocess.run(
        [nvcc, f"-arch={arch}", "--cubin", *flags, "-o", str(out), str(src)], capture_output=True, text=True
    )
    assert proc.returncode == 0, f"nvcc failed:\n{proc.stderr}"
    return out.read_bytes()


@pytest.fixture(scope="module")
def compiler(tmp_path_factory):
    """``compile(source, options) -> cubin bytes`` with the first compiler found."""
    nvrtc = _cupy_nvrtc()
    if nvrtc is not None:
        return lambda source, options: _compile_cupy(nvrtc, source, options)
    nvrtc = _bindings_nvrtc()
    if nvrtc is not None:
        return lambda source, options: _compile_bindings(nvrtc, source, options)
    nvcc = shutil.which("nvcc")
    if nvcc is not None:
        tmp = tmp_path_factory.mktemp("nvcc")
        counter = iter(range(10**6))

        def run(source, options):
            d = tmp / str(next(counter))
            d.mkdir()
            return _compile_nvcc(nvcc, source, options, d)

        return run
    pytest.skip(INSTALL_HINT)


def _cluster(arch: str, threads: int) -> int:
    """The cluster size the backend builds this module with on a device of ``arch``."""
    return M.module_cluster(threads, int(arch.split("_")[1]), hip=False)


def test_every_instantiation_compiles(compiler):
    """3 dtypes x 2 archs x each block geometry, 4 kernels each (and on sm_90 the combine
    geometry's cluster combine); compile errors fail with the compiler's log."""
    jobs = [(dtype, arch, threads) for dtype in M.DTYPES for arch in ARCHS for threads in M.geometries()]
    assert any(_cluster(arch, threads) > 1 for _, arch, threads in jobs), "no module builds the cluster combine"
    source = M.source()

    def build(job):
        dtype, arch, threads = job
        options = [f"--gpu-architecture={arch}", *M.compile_options(dtype, WARP_SIZE, threads, _cluster(arch, threads))]
        return job, compiler(source, options)

    with concurrent.futures.ThreadPoolExecutor(max_workers=len(jobs)) as pool:
        built = dict(pool.map(build, jobs))
    for (dtype, arch, threads), cubin in built.items():
        assert cubin, f"{dtype}/{arch}: empty cubin"
        cluster_name = f"{M.CLUSTER_FAMILY}_kernel_{dtype}".encode()
        for name in M.kernel_names(dtype):
            assert name.encode() in cubin, f"{dtype}/{arch}: kernel {name} missing from the cubin"
        if _cluster(arch, threads) > 1:
            assert cluster_name in cubin, f"{dtype}/{arch}/{threads}: the cluster combine is missing"
        else:
            assert cluster_name not in cubin, f"{dtype}/{arch}/{threads}: a cluster combine without clusters"
        others = [d for d in M.DTYPES if d != dtype]
        for name in (n for d in others for n in M.kernel_names(d)):
            assert name.encode() not in cubin, f"{dtype}/{arch}: {name} should not be in this module"


def test_clusters_only_where_the_hardware_has_them(compiler):
    """sm_80 has no thread-block clusters: asking for them there is a compile error (the guard
    in kernels.cu), and the host never asks (module_cluster)."""
    assert M.module_cluster(M.THREADS["combine"], 80, hip=False) == 1
    assert M.module_cluster(M.THREADS["combine"], 90, hip=True) == 1
    assert M.module_cluster(M.THREADS["select"], 90, hip=False) == 1
    options = ["--gpu-architecture=sm_80", *M.compile_options("float32", WARP_SIZE, M.THREADS["combine"], M.CLUSTER)]
    with pytest.raises(AssertionError, match="thread-block clusters"):
        compiler(M.source(), options)


def test_source_carries_the_generated_preamble():
    first = M.source().splitlines()[0]
    assert first.startswith("// GENERATED by qrita.core.cgen") and spec_fingerprint() in first
    key = M.cache_key(0, "float16", 32, 256)
    assert spec_fingerprint() in key and M.source_hash() in key


def test_host_geometry_matches_the_kernel_source():
    text = M.kernel_text()

    def define(name):
        m = re.search(rf"^#define {name} (\S+)", text, re.MULTILINE)
        assert m, name
        return m.group(1)

    assert "#error" in text.split("#define QRITA_CHUNK", 1)[0], "the host must define QRITA_THREADS and QRITA_ITEMS"
    assert f"#if QRITA_CHUNK != {M.CHUNK} " in text
    assert set(M.THREADS) == set(M.FAMILIES)
    for threads in M.THREADS.values():
        assert M.CHUNK % threads == 0 and (M.CHUNK // threads) % 8 == 0, threads
    assert define("QRITA_CAP") == "QRITA_CANDIDATE_CAPACITY"
    assert f"sizeof(Partial) == {M.PARTIAL_BYTES}" in text
    assert f"sizeof(ZPart) == {M.ZPART_BYTES}" in text
    assert f"sizeof(RowInfo) == {M.ROWINFO_BYTES}" in text
    assert f"sizeof(RowCut) == {M.ROWCUT_BYTES}" in text
    # the combine keeps a slice a thread and the slices' starts in its bins
    assert "#define QRITA_NBINS (QRITA_WIDE_PIVOTS + 1)" in text
    assert int(define("QRITA_WIDE_PIVOTS")) + 1 == M.MAX_SPLITS <= M.THREADS["combine"]


def test_split_plans_stay_within_max_splits(monkeypatch):
    from qrita.backends.base import Request
    from qrita.backends.cupy import _launch

    monkeypatch.setattr(M, "multiprocessor_count", lambda device: 132)  # an H200's

    for B, V, forced in ((1, 2**31 - 1, None), (1, 2**24, 10**6), (16, 262144, None), (1, 131072, None)):
        req = Request(
            logits=None,
            lib="torch",
            device="cuda:0",
            dtype="float32",
            B=B,
            V=V,
            k=50,
            p=None,
            ties=0,
            options={} if forced is None else {"split": forced},
        )
        plan = _launch._plan(req, 0)
        assert 1 < plan.splits <= M.MAX_SPLITS, (B, V, forced, plan)


def test_portability_rules_of_the_source():
    """AMD/HIP: no literal warp size, no inline PTX, *_sync only behind the HIP switch."""
    text = M.kernel_text()
    code = "\n".join(line.split("//", 1)[0] for line in text.splitlines())
    assert "asm(" not in code and "asm volatile" not in code, "inline PTX has no HIP fallback"
    assert not re.search(r"\bwarpSize\b", code)
    for m in re.finditer(r"\b32\b", code):
        line = code[: m.start()].count("\n")
        context = code.splitlines()[line]
        assert "QRITA_WARP_SIZE != 32" in context, f"literal 32 in kernels.cu line {line + 1}: {context.strip()}"
    lines = code.splitlines()
    start = lines.index("#ifdef QRITA_HIP")
    depth, else_line, end_line = 0, None, None
    for i in range(start, len(lines)):
        word = lines[i].strip().split(" ", 1)[0]
        if word in ("#if", "#ifdef", "#ifndef"):
            depth += 1
        elif word == "#else" and depth == 1:
            else_line = i
        elif word == "#endif":
            depth -= 1
            if depth == 0:
                end_line = i
                break
    sync_lines = [i for i, line in enumerate(lines) if "_sync(" in line]
    assert sync_lines and else_line is not None and end_line is not None
    outside = [i + 1 for i in sync_lines if not else_line < i < end_line]
    assert not outside, f"*_sync calls outside the CUDA branch of QRITA_HIP, kernels.cu lines {outside}"


def test_backend_module_imports_without_cupy_import():
    """The registry imports the backend module; that must not import cupy."""
    code = (
        "import sys\n"
        "import qrita.backends.cupy as b\n"
        "assert b.BACKEND.name == 'cupy'\n"
        "assert 'cupy' not in sys.modules, 'importing the backend imported cupy'\n"
    )
    subprocess.run([__import__("sys").executable, "-c", code], check=True)


def test_unavailable_reason_names_the_fix():
    from qrita.backends.cupy import BACKEND, _unavailable_reason

    reason = BACKEND.unavailable_reason()
    if reason is None:
        pytest.skip("cupy and a GPU are available here")
    assert 'pip install "qrita[cupy]"' in reason or "CUDA" in reason
    _unavailable_reason.cache_clear()


def test_one_module_per_geometry_compiled_once(monkeypatch):
    """get_kernel compiles a module per (device, dtype, block size) on first use and reuses it;
    the options carry the geometry of the kernel's family, and on an sm_90 device the combine
    geometry's module holds the cluster combine (a stand-in for cupy: no GPU here)."""
    import sys
    import types

    built = []

    class Device:
        def __init__(self, i):
            self.attributes = {"WarpSize": 32, "MultiProcessorCount": 132}
            self.compute_capability = "90"

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    class RawModule:
        def __init__(self, code, options):
            assert code == M.source()
            built.append(options)

        def get_function(self, name):
            return (name, built[-1])

    runtime = types.SimpleNamespace(is_hip=False)
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(Device=Device, runtime=runtime), RawModule=RawModule)
    monkeypatch.setitem(sys.modules, "cupy", fake)
    monkeypatch.setattr(M, "_modules", {})
    caches = (M.warp_size, M.compute_capability, M.is_hip)
    for cached in caches:
        cached.cache_clear()
    try:
        assert M.has_clusters(7)
        for family in (*M.FAMILIES, M.CLUSTER_FAMILY, *M.FAMILIES):
            name, options = M.get_kernel(7, "bfloat16", family)
            threads = M.THREADS["combine" if family == M.CLUSTER_FAMILY else family]
            assert name == f"{family}_kernel_bfloat16"
            assert f"-DQRITA_THREADS={threads}" in options and f"-DQRITA_ITEMS={M.CHUNK // threads}" in options
            clustered = threads == M.THREADS["combine"]
            assert (f"-DQRITA_CLUSTER={M.CLUSTER}" in options) == clustered, options
        assert len(built) == len(M.geometries())
    finally:
        for cached in caches:
            cached.cache_clear()


def test_which_requests_take_the_cluster_combine():
    """By default the split path's cluster combine serves requests that may hold a top-p-only row
    (those rows search their whole length when they miss); requests whose every row has a top-k
    keep one block a row.  (The host rule only: the GPU tests check both give the same bits.)"""
    from qrita.backends.base import Request
    from qrita.backends.cupy import _launch

    def req(k, p, V=1000):
        return Request(logits=None, lib="torch", device="cuda:0", dtype="float32", B=4, V=V, k=k, p=p, ties=0)

    per_row = object()  # stands for a k or p array
    assert _launch._wants_clusters(req(None, 0.9))
    assert _launch._wants_clusters(req(None, per_row))
    assert _launch._wants_clusters(req(per_row, 0.9))
    assert _launch._wants_clusters(req(0, 0.9)) and _launch._wants_clusters(req(1000, 0.9))
    assert not _launch._wants_clusters(req(50, 0.9))
    assert not _launch._wants_clusters(req(50, None))
    assert not _launch._wants_clusters(req(per_row, None))
    assert not _launch._wants_clusters(req(None, 1.0))
