"""The variant's default host target, so users get its ISA without knowing TVM's target syntax.

    import tvm_wheels, tvm_wheels.target
    tvm_wheels.target.host()      # e.g. {"kind": "llvm", "mcpu": "x86-64-v4", "mattr": ["-prefer-256-bit"]}
    tvm_wheels.compile(mod)       # compiles for it, with schedules (tvm_wheels.schedules)
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

