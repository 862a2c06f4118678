"""The variant's default host target, so users get its ISA without knowing TVM's target syntax.

    import tvm_wheels, tvm_wheels.target
    tvm_wheels.target.host()      # e.g. {"kind": "llvm", "mcpu": "x86-64-v4", "mattr": ["-prefer-256-bit"]}
    tvm_wheels.compile(mod)       # compiles for it, with schedules (tvm_wheels.schedules)
    tvm_wheels.target.cuda()      # a CUDA variant: the GPU here, or the wheel's first arch without one
"""

from __future__ import annotations

from . import buildinfo


def host():
    """tvm.target.Target for this wheel's default host code: the preset's TVM_WHEEL_HOST_TARGET
    as LLVM mcpu ("native" = the CPU running this), with TVM_WHEEL_HOST_MATTR features."""
    import tvm

    info = buildinfo.load()
    mcpu = info["host_target"]
    if not mcpu:
        raise RuntimeError("tvm-wheels: this is a runtime-only wheel; it has no compile target")
    if mcpu == "native":
        mcpu = tvm.target.codegen.llvm_get_system_cpu()
    spec = {"kind": "llvm", "mcpu": mcpu}
    if info.get("host_mattr"):
        spec["mattr"] = list(info["host_mattr"])
    return tvm.target.Target(spec)



def cuda(arch: str | None = None):
    """tvm.target.Target for a CUDA variant's GPU code, with host() for the host side: the given
    arch ("sm_90a"), else the GPU's, else the first arch the wheel's kernels are built for. TVM's
    own "cuda" target falls back to sm_50 on a machine without a GPU, which CUDA 12+ cannot
    target, so a model compiled here for another machine's GPU needs an arch."""
    import tvm

    info = buildinfo.load()
    archs = info.get("cuda_archs") or []
    if not archs:
        raise RuntimeError(f"tvm-wheels: the {info.get('variant')} wheel has no CUDA; "
                           "TVM_WHEEL_VARIANT=cuda-cutlass pip install ./")
    if arch is None:
        if tvm.cuda(0).exist:
            major, minor = tvm.cuda(0).compute_version.split(".")
            arch = f"sm_{major}{minor}" + ("a" if int(major) >= 9 else "")
        else:
            arch = f"sm_{archs[0]}"
    return tvm.target.Target({"kind": "cuda", "arch": arch}, host=host())
