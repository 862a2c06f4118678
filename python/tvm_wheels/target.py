"""The variant's default host target, so users get its ISA without knowing TVM's target syntax.

    import tvm_wheels, tvm_wheels.target
    tvm_wheels.target.host()      # e.g. {"kind": "llvm", "mcpu": "x86-64-v4", "mattr": ["-prefer-256-bit"]}
    tvm_wheels.compile(mod)       # compiles for it, with schedules (tvm_wheels.compiler.schedules)
    tvm_wheels.target.cuda()      # a CUDA variant: the GPU here, or the wheel's first arch without one
"""

from __future__ import annotations

import logging

from . import buildinfo, host as machine

log = logging.getLogger("tvm_wheels.target")
# TVM_WHEEL_HOST_TARGET values that name no LLVM mcpu but say how to find one where it runs
NATIVE, LEVEL = "native", "x86-64-level"


def mcpu(preset: str, features: dict[str, bool] | None = None) -> str:
    """The LLVM mcpu of a preset's TVM_WHEEL_HOST_TARGET on this CPU. "x86-64-level": the highest
    x86-64 level it has (x86-64-v2/v3/v4, from CPUID), a target that databases ship for, where
    "native" (the CPU model) is a target of its own on every model."""
    if preset == LEVEL:
        level = machine.x86_64_level(features)
        if level is not None:
            return level
        log.warning("tvm-wheels: this numpy has no x86-64 level groups in its CPUID table, so the default "
                    "target is this CPU's model, for which no tuning database ships. Fix: pip install 'numpy>=2.4'")
        preset = NATIVE
    if preset != NATIVE:
        return preset
    import tvm

    return tvm.target.codegen.llvm_get_system_cpu()


def host():
    """tvm.target.Target for this wheel's default host code: the preset's TVM_WHEEL_HOST_TARGET
    as LLVM mcpu (see mcpu()), with TVM_WHEEL_HOST_MATTR features."""
    import tvm

    info = buildinfo.load()
    if not info["host_target"]:
        raise RuntimeError("tvm-wheels: this is a runtime-only wheel; it has no compile target")
    spec = {"kind": "llvm", "mcpu": mcpu(info["host_target"])}
    if info.get("host_mattr"):
        spec["mattr"] = list(info["host_mattr"])
    return tvm.target.Target(spec)


def for_compile(target=None):
    """The target as tvm_wheels.compile and MetaSchedule need it: host() when None, with num-cores
    set (MetaSchedule's rules size their parallel loops by it)."""
    import tvm

    target = host() if target is None else tvm.target.Target(target)
    spec = dict(target.export())
    if "num-cores" not in spec or int(spec["num-cores"]) <= 0:
        spec["num-cores"] = machine.physical_cores()
        target = tvm.target.Target(spec)
    return target


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
