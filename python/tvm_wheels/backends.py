"""What a variant's wheel adds to TVM at `import tvm`: TVM calls `autoload` through its
`tvm.backends` entry point (pyproject.toml), after its own backends (libtvm_runtime_cuda).

A CUDA variant's sidecar libraries (build info: sidecar_libs) are loaded RTLD_GLOBAL: they
register TVM's CUTLASS runtime functions (cutlass.*, fastertransformer.*), and the kernels that
TVM's CUTLASS BYOC compiles into a model call into libflash_attn / libfpA_intB_gemm by symbol.
On a machine without the NVIDIA driver they cannot load; that is recorded (`problems()`,
`tvm-wheels doctor`) rather than printed at every import. Any other failure is a broken
install and is warned about. Without libtvm_runtime_cuda nothing registers TVM's loader of
CUDA modules, and loading an exported model with CUDA kernels would fail with "a loader of
that name is not registered": a loader of the project's takes its place and says that the
driver is missing, and which version it must support.

TVM's NVRTC path (tvm.support.nvcc) finds the CUDA headers from CUDA_PATH or nvcc on PATH;
with NVIDIA's wheels (nvidia-cuda-runtime, nvidia-cuda-cccl) it is pointed at
site-packages/nvidia/cu<major>, unless the user set CUDA_PATH. The CUTLASS BYOC runs `nvcc`
from PATH: with the wheel's `cutlass` extra (nvidia-cuda-nvcc) and no nvcc of the user's on
PATH, that wheel's bin/ is added to it.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import warnings
from pathlib import Path

from . import buildinfo

_PROBLEMS: dict[str, str] = {}
DRIVER = "libcuda.so.1"
CUDA_LOADER = "ffi.Module.load_from_bytes.cuda"  # registered by libtvm_runtime_cuda


def _lib_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "tvm" / "lib"


def pip_cuda_root(major: str, site: Path | None = None) -> Path | None:
    """site-packages/nvidia/cu<major> of NVIDIA's wheels, when they hold the runtime's headers."""
    root = (site or Path(__file__).resolve().parent.parent) / "nvidia" / f"cu{major}"
    return root if (root / "include" / "cuda_runtime.h").exists() else None


def nvrtc_environment(info: dict, environ: dict, site: Path | None = None) -> dict[str, str]:
    """The variables TVM's NVRTC path (and the CUTLASS BYOC's nvcc) need to find NVIDIA's
    wheels; none the user set is changed."""
    major = info.get("cuda_version", "").split(".")[0]
    root = pip_cuda_root(major, site) if major else None
    if root is None or environ.get("CUDA_PATH"):
        return {}
    env = {"CUDA_PATH": str(root)}
    cccl = root / "include" / "cccl"  # libcu++ (cuda/std/...), which the NVRTC preamble includes
    if cccl.is_dir():
        env["TVM_CUDA_NVRTC_EXTRA_OPTS"] = " ".join(filter(None, [environ.get("TVM_CUDA_NVRTC_EXTRA_OPTS", ""),
                                                                    f"-I{cccl}"]))
    path = environ.get("PATH", os.defpath)
    if (root / "bin" / "nvcc").exists() and shutil.which("nvcc", path=path) is None:
        env["PATH"] = os.pathsep.join([str(root / "bin"), path])
    return env


def _runtime_extra() -> None:
    """libtvm_runtime_extra (the random fill MetaSchedule measures with, disco, ...) is loaded by
    TVM's import only beside its compiler; the runtime wheel ships it too, and an RPC server of it
    (tvm-wheels rpc-server) needs it to measure candidates."""
    from tvm import base

    path = _lib_dir() / "libtvm_runtime_extra.so"
    if "tvm_runtime_extra" not in base._LOADED_LIBS and path.exists():
        base._LOADED_LIBS["tvm_runtime_extra"] = ctypes.CDLL(str(path), mode=ctypes.RTLD_LOCAL)


def autoload() -> None:
    try:
        info = buildinfo.load()
    except buildinfo.NotBuilt:
        return
    _runtime_extra()
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
    if DRIVER in _PROBLEMS.get("tvm_runtime_cuda", ""):
        _register_no_driver_loader(info, _PROBLEMS["tvm_runtime_cuda"])


def no_driver_message(info: dict, problem: str) -> str:
    return (f"tvm-wheels: this module has CUDA kernels, and TVM's CUDA runtime cannot load on this machine: "
            f"it needs the NVIDIA driver ({problem}). Fix: install an NVIDIA driver that supports CUDA "
            f"{info.get('cuda_version', '')} or newer (the {info.get('variant', 'CUDA')} wheel's CUDA); "
            f"`tvm-wheels doctor` checks it. Without a driver, this wheel compiles and exports CUDA "
            f"models but cannot run them.")


def _register_no_driver_loader(info: dict, problem: str) -> None:
    import tvm_ffi

    if tvm_ffi.get_global_func(CUDA_LOADER, allow_missing=True) is not None:
        return  # a CUDA runtime loaded after all (the user's own, say): keep it

    def load_cuda_module(_blob):
        raise RuntimeError(no_driver_message(info, problem))

    tvm_ffi.register_global_func(CUDA_LOADER, load_cuda_module)


def problems() -> dict[str, str]:
    """Sidecar libraries that did not load at `import tvm`, with the loader's message."""
    return dict(_PROBLEMS)
