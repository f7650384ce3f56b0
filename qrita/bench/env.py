"""Where a benchmark ran: device, driver, library versions, git commit, spec fingerprint."""

from __future__ import annotations

import datetime
import importlib.metadata
import os
import platform
import subprocess
import sys
from pathlib import Path

# distribution name -> key in the record (first found wins)
_VERSIONS = {
    "numpy": ("numpy",),
    "torch": ("torch",),
    "triton": ("triton", "pytorch-triton", "pytorch-triton-rocm"),
    "cupy": ("cupy-cuda13x", "cupy-cuda12x", "cupy-cuda11x", "cupy"),
    "numba": ("numba",),
    "numba_cuda": ("numba-cuda",),
    "flashinfer": ("flashinfer-python", "flashinfer"),
    "apache_tvm_ffi": ("apache-tvm-ffi",),
    "vllm": ("vllm",),
    "matplotlib": ("matplotlib",),
}


def library_versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for key, dists in _VERSIONS.items():
        out[key] = None
        for dist in dists:
            try:
                out[key] = importlib.metadata.version(dist)
                break
            except importlib.metadata.PackageNotFoundError:
                continue
    import qrita

    out["qrita"] = qrita.__version__
    return out


def git_commit() -> dict:
    """``{"commit", "dirty", "source"}``: ``$QRITA_GIT_COMMIT`` when set, else ``git`` in the checkout.

    The variable wins: a copied working tree (a device machine) can carry a stale ``.git``.
    """
    env = os.environ.get("QRITA_GIT_COMMIT") or None
    if env:
        return {"commit": env, "dirty": None, "source": "QRITA_GIT_COMMIT"}
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.strip()
        if commit:
            return {"commit": commit, "dirty": bool(status), "source": "git"}
    except (OSError, subprocess.SubprocessError):
        pass
    return {"commit": None, "dirty": None, "source": None}


def _driver() -> dict:
    info: dict = {"driver": None, "cuda_driver": None}
    try:
        import pynvml

        pynvml.nvmlInit()
        drv = pynvml.nvmlSystemGetDriverVersion()
        info["driver"] = drv.decode() if isinstance(drv, bytes) else drv
        v = pynvml.nvmlSystemGetCudaDriverVersion()
        info["cuda_driver"] = f"{v // 1000}.{(v % 1000) // 10}"
        return info
    except Exception:
        pass
    try:
        res = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=20,
        )
        info["driver"] = res.stdout.strip().splitlines()[0] if res.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def device_info(device: str) -> dict:
    info: dict = {"kind": device}
    if device != "cuda":
        info["name"] = platform.processor() or platform.machine()
        info["cpu_count"] = os.cpu_count()
        return info
    import torch

    props = torch.cuda.get_device_properties(0)
    info.update(
        name=torch.cuda.get_device_name(0),
        capability=".".join(map(str, torch.cuda.get_device_capability(0))),
        sm_count=props.multi_processor_count,
        memory_bytes=props.total_memory,
        cuda_runtime=torch.version.cuda,
        cpu_count=os.cpu_count(),
    )
    info.update(_driver())
    return info


def environment(device: str) -> dict:
    from qrita.core import spec_fingerprint

    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host": platform.node(),
        "platform": platform.platform(),
        "python": sys.version.split()[0],
        "device": device_info(device),
        "versions": library_versions(),
        "git": git_commit(),
        "spec_fingerprint": spec_fingerprint(),
    }
