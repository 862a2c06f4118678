"""The variant's default host target, so users get its ISA without knowing TVM's target syntax.

    import tvm_wheels, tvm_wheels.target
    tvm_wheels.target.host()      # e.g. {"kind": "llvm", "mcpu": "x86-64-v4", "mattr": ["-prefer-256-bit"]}
    tvm_wheels.compile(mod)       # compiles for it, with schedules (tvm_wheels.compiler.schedules)
    tvm_wheels.target.cuda()      # a CUDA variant: the GPU here, or the wheel's first arch without one
    tvm_wheels.target.orin()      # another machine's: a Jetson Orin's CPU (gpu=True: and its GPU)
    ex.export_library("model.so", fcompile=tvm_wheels.target.toolchain(target))   # its compiler
"""

from __future__ import annotations

import logging
import shutil

from . import buildinfo, host as machine, variants

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


# Orin modules have 6 (Nano), 8 (NX) or 12 (AGX) Cortex-A78AE cores: MetaSchedule's rules size
# parallel loops by num-cores, and TVM's thread pool splits them over the cores there are.
ORIN_CORES = 8
# The C++ compiler that links a shared library for another architecture (Debian's cross
# toolchains, g++-<triple>); this machine's own is TVM's default.
CROSS_COMPILERS = {"aarch64": "aarch64-linux-gnu-g++"}


def for_variant(name: str, cores: int):
    """The CPU target of another machine that runs the named variant's wheel, from its preset
    (architecture, TVM_WHEEL_HOST_TARGET, TVM_WHEEL_HOST_MATTR): code compiled here for it."""
    import tvm

    v = variants.load(name)
    if not v.host_target or v.host_target in (NATIVE, LEVEL):
        raise RuntimeError(f"tvm-wheels: the {name} variant's target is not fixed ({v.host_target or 'no compiler'}): "
                           f"it depends on the CPU it runs on. Fix: give the target's mcpu, "
                           f"tvm.target.Target({{'kind': 'llvm', 'mcpu': ...}})")
    spec = {"kind": "llvm", "mtriple": f"{v.archs[0]}-linux-gnu", "mcpu": v.host_target, "num-cores": cores}
    if v.host_mattr:
        spec["mattr"] = list(v.host_mattr)
    return tvm.target.Target(spec)


def orin(gpu: bool = False, cores: int = ORIN_CORES):
    """A Jetson Orin (the aarch64-orin wheel): its Cortex-A78AE, or with gpu=True its GPU (sm_87)
    with that CPU as host. Compile here, export with toolchain(target), run there."""
    import tvm

    cpu = for_variant("aarch64-orin", cores)
    if not gpu:
        return cpu
    arch = variants.load("aarch64-orin").cuda_archs[0]
    return tvm.target.Target({"kind": "cuda", "arch": f"sm_{arch}"}, host=cpu)


def spec(target) -> dict:
    """A target as the dict it exports (kind, mtriple, mcpu, host, ...); a dict as it is."""
    return dict(target) if isinstance(target, dict) else dict(target.export())


def arch(target) -> str:
    """The architecture of a target's CPU code (tvm.target.Target or its spec): its mtriple, or
    its host's for a GPU target; this machine's where none is named."""
    t = spec(target)
    cpu = spec(t["host"]) if t.get("kind") != "llvm" and t.get("host") else t
    triple = str(cpu.get("mtriple") or "") if cpu.get("kind") == "llvm" else ""
    return triple.split("-")[0] if triple else machine.machine()


def cross_compiler(target) -> str | None:
    """The compiler that links a library of `target`'s CPU code: None where that is this
    machine's architecture (TVM's default), else the cross compiler, which must be on PATH."""
    to = arch(target)
    if to == machine.machine():
        return None
    compiler = CROSS_COMPILERS.get(to)
    if compiler is None:
        raise RuntimeError(f"tvm-wheels: no cross toolchain is known for {to} (known: {', '.join(CROSS_COMPILERS)}). "
                           f"Fix: export_library(path, fcompile=tvm.support.cc.cross_compiler('<your {to} g++>'))")
    if shutil.which(compiler) is None:
        raise RuntimeError(f"tvm-wheels: {compiler} is not on PATH; it links the library for {to}. "
                           f"Fix: apt-get install g++-{compiler.rsplit('-g++', 1)[0]}")
    return compiler


def toolchain(target):
    """export_library's fcompile for `target`: None (TVM's default) for this machine, else the
    cross compiler (cross_compiler)."""
    from tvm.support import cc

    compiler = cross_compiler(target)
    return None if compiler is None else cc.cross_compiler(compiler)
