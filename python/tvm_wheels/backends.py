"""What a variant's wheel adds to TVM at `import tvm`: TVM calls `autoload` through its
`tvm.backends` entry point (pyproject.toml), after its own backends (libtvm_runtime_cuda).

A CUDA variant's sidecar libraries (build info: sidecar_libs) are loaded RTLD_GLOBAL: they
register TVM's CUTLASS runtime functions (cutlass.*, fastertransformer.*), and the kernels that
TVM's CUTLASS BYOC compiles into a model call into libflash_attn / libfpA_intB_gemm by symbol.
On a machine without the NVIDIA driver they cannot load; that is recorded (`problems()`,
`tvm-wheels doctor`) rather than printed at every import. Any other failure is a broken
install and is warned about.

TVM's NVRTC path (tvm.support.nvcc) finds the CUDA headers from CUDA_PATH or nvcc on PATH;
with NVIDIA's wheels (nvidia-cuda-runtime, nvidia-cuda-cccl) it is pointed at
site-packages/nvidia/cu<major>, unless the user set CUDA_PATH.
"""

from __future__ import annotations

import ctypes
import os
import warnings
from pathlib import Path

from . import buildinfo

_PROBLEMS: dict[str, str] = {}
DRIVER = "libcuda.so.1"


def _lib_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "tvm" / "lib"


def pip_cuda_root(major: str, site: Path | None = None) -> Path | None:
    """site-packages/nvidia/cu<major> of NVIDIA's wheels, when they hold the runtime's headers."""
    root = (site or Path(__file__).resolve().parent.parent) / "nvidia" / f"cu{major}"
    return root if (root / "include" / "cuda_runtime.h").exists() else None


def nvrtc_environment(info: dict, environ: dict, site: Path | None = None) -> dict[str, str]:
    """The variables TVM's NVRTC path needs to find NVIDIA's wheels; none the user set is changed."""
    major = info.get("cuda_version", "").split(".")[0]
    root = pip_cuda_root(major, site) if major else None
    if root is None or environ.get("CUDA_PATH"):
        return {}
    env = {"CUDA_PATH": str(root)}
    cccl = root / "include" / "cccl"  # libcu++ (cuda/std/...), which the NVRTC preamble includes
    if cccl.is_dir():
        env["TVM_CUDA_NVRTC_EXTRA_OPTS"] = " ".join(filter(None, [environ.get("TVM_CUDA_NVRTC_EXTRA_OPTS", ""),
                                                                    f"-I{cccl}"]))
    return env


def autoload() -> None:
    try:
        info = buildinfo.load()
    except buildinfo.NotBuilt:
        return
    if not info.get("cuda_version"):
        return
    os.environ.update(nvrtc_environment(info, os.environ))
    for name in info.get("sidecar_libs", []):
        path = _lib_dir() / f"lib{name}.so"
        try:
            ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            _PROBLEMS[name] = str(e)
            if DRIVER not in str(e):
                warnings.warn(f"tvm-wheels: {path.name} did not load: {e}. Reinstall the wheel "
                              f"(pip install --force-reinstall apache-tvm), or see `tvm-wheels doctor`.")


def problems() -> dict[str, str]:
    """Sidecar libraries that did not load at `import tvm`, with the loader's message."""
    return dict(_PROBLEMS)
